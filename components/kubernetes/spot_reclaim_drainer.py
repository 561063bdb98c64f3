"""Drains spot GPU nodes before the cloud reclaims them, where the platform does not.

A DaemonSet on the GPU nodes runs `spot_reclaim_agent.py` (from a ConfigMap, on a pinned
Python image): it polls the instance metadata and, once a reclaim is announced, cordons its
node and evicts the pods on it, so training Jobs checkpoint on SIGTERM instead of losing the
work since their last periodic checkpoint. RBAC: read and cordon nodes, list pods, evict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import SpotReclaimNotice, Taint

from . import spot_reclaim_agent
from .labels import (
    RESTRICTED_CONTAINER,
    RUNTIME_DEFAULT_SECCOMP,
    api_fields,
    app_labels,
    checkov_skips,
    config_hash,
    gpu_node_daemonset_spec,
)

NAME = "spot-reclaim-drainer"
AGENT_IMAGE = "docker.io/library/python:3.13.14-slim-trixie"
"""Python 3.13.14 on Debian 13 slim (Docker Official Images; the 3.13 line's newest in
docker-library/python versions.json at 4f07059, 2026-06-23): the agent needs only the
standard library. Runs as `nobody` (65534), which the image has."""
SCRIPT_DIR = "/opt/spot-reclaim"
NOBODY = 65534


@dataclass(frozen=True)
class SpotReclaimDrainerArgs:
    namespace: str
    notice: SpotReclaimNotice
    gpu_node_labels: Mapping[str, str]
    gpu_taints: Sequence[Taint]
    """Every taint of the nodes it runs on (the GPU taint, each pool's own)."""


def agent_source() -> str:
    return Path(spot_reclaim_agent.__file__).read_text()


def agent_env(notice: SpotReclaimNotice) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "TERMINATION_TIME_URL", "value": notice.termination_time_url},
        {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
    ]
    if notice.token_url:
        env += [
            {"name": "TOKEN_URL", "value": notice.token_url},
            {"name": "TOKEN_TTL_HEADER", "value": notice.token_ttl_header},
            {"name": "TOKEN_HEADER", "value": notice.token_header},
        ]
    return env


class SpotReclaimDrainer(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: SpotReclaimDrainerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:SpotReclaimDrainer", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = app_labels(NAME, "spot-reclaim-drainer")
        account = k8s.core.v1.ServiceAccount(
            f"{name}-spot-drainer-sa",
            metadata={"name": NAME, "namespace": args.namespace, "labels": labels},
            opts=child,
        )
        # What `kubectl drain` needs, nothing more: cordon, find the node's pods, evict them.
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-spot-drainer-role",
            metadata={"name": f"gpuinfra:{NAME}", "labels": labels},
            rules=api_fields(
                [
                    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
                    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
                ]
            ),
            opts=child,
        )
        binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-spot-drainer-binding",
            metadata={"name": f"gpuinfra:{NAME}", "labels": labels},
            role_ref=api_fields(
                {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": f"gpuinfra:{NAME}",
                }
            ),
            subjects=api_fields(
                [{"kind": "ServiceAccount", "name": NAME, "namespace": args.namespace}]
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role]),
        )
        script = k8s.core.v1.ConfigMap(
            f"{name}-spot-drainer-agent",
            metadata={"name": f"{NAME}-agent", "namespace": args.namespace, "labels": labels},
            data={"agent.py": agent_source()},
            opts=child,
        )
        host_network = "reads the instance metadata service as the node, as the cloud meant"
        annotations = checkov_skips(
            {
                "CKV_K8S_8": "a polling loop with nothing to probe; a crash restarts it",
                "CKV_K8S_9": "a polling loop with nothing to probe; a crash restarts it",
                "CKV_K8S_19": host_network,
                "CKV_K8S_38": "cordons and evicts through the API with its own ServiceAccount",
                "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
            }
        )
        # system-node-critical (the helper's): it must outlive the pods it evicts.
        pod: dict[str, Any] = {
            "serviceAccountName": NAME,
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "securityContext": {
                **RUNTIME_DEFAULT_SECCOMP,
                "runAsNonRoot": True,
                "runAsUser": NOBODY,
                "runAsGroup": NOBODY,
            },
            "containers": [
                {
                    "name": "agent",
                    "image": AGENT_IMAGE,
                    "imagePullPolicy": "Always",
                    "command": ["python3", f"{SCRIPT_DIR}/agent.py"],
                    "env": agent_env(args.notice),
                    "securityContext": {
                        **RESTRICTED_CONTAINER,
                        "readOnlyRootFilesystem": True,
                    },
                    "resources": {
                        "requests": {"cpu": "10m", "memory": "32Mi"},
                        "limits": {"cpu": "100m", "memory": "64Mi"},
                    },
                    "volumeMounts": [{"name": "agent", "mountPath": SCRIPT_DIR, "readOnly": True}],
                }
            ],
            "volumes": [{"name": "agent", "configMap": {"name": f"{NAME}-agent"}}],
        }
        k8s.apps.v1.DaemonSet(
            f"{name}-spot-drainer",
            metadata={
                "name": NAME,
                "namespace": args.namespace,
                "labels": labels,
                "annotations": annotations,
            },
            # Python reads the script once, at start: a changed script must roll the pods.
            spec=gpu_node_daemonset_spec(
                NAME,
                labels,
                annotations,
                args.gpu_node_labels,
                args.gpu_taints,
                pod,
                template_annotations=config_hash(agent_source()),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account, binding, script]),
        )
        self.register_outputs({})
