"""Cluster Autoscaler: adds nodes when pods cannot be scheduled, removes nodes left idle.

Cloud-agnostic: the image, flags and ServiceAccount annotations arrive as plain values in an
`AutoscalerSpec`. RBAC follows the upstream example manifest
(kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/examples/
cluster-autoscaler-autodiscover.yaml), plus read access to the objects newer releases
watch (VolumeAttachments, Dynamic Resource Allocation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.autoscaler_spec import AutoscalerSpec

from .labels import (
    RESTRICTED_CONTAINER,
    RUNTIME_DEFAULT_SECCOMP,
    api_fields,
    app_labels,
    checkov_skips,
    selector_labels,
)
from .vendored import vendored_objects

NAME = "cluster-autoscaler"
NAMESPACE = "kube-system"
METRICS_PORT = 8085
"""Serves `/metrics` and `/health-check`."""
READ = ["get", "list", "watch"]

# API field names (camelCase); typed Any because the SDK's TypedDicts spell them snake_case.
CLUSTER_RULES: Any = [
    {"apiGroups": [""], "resources": ["events", "endpoints"], "verbs": ["create", "patch"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]},
    {
        "apiGroups": [""],
        "resources": ["endpoints"],
        "resourceNames": [NAME],
        "verbs": ["get", "update"],
    },
    {"apiGroups": [""], "resources": ["nodes"], "verbs": [*READ, "update"]},
    {
        "apiGroups": [""],
        "resources": [
            "namespaces",
            "pods",
            "services",
            "replicationcontrollers",
            "persistentvolumeclaims",
            "persistentvolumes",
        ],
        "verbs": READ,
    },
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list", "watch"]},
    {
        "apiGroups": ["apps"],
        "resources": ["statefulsets", "replicasets", "daemonsets"],
        "verbs": READ,
    },
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": [
            "storageclasses",
            "csinodes",
            "csidrivers",
            "csistoragecapacities",
            "volumeattachments",
        ],
        "verbs": READ,
    },
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": READ},
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["resourceclaims", "resourceslices", "deviceclasses"],
        "verbs": READ,
    },
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [NAME],
        "verbs": ["get", "update"],
    },
]
NAMESPACE_RULES: Any = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "list", "watch"]},
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": ["cluster-autoscaler-status", "cluster-autoscaler-priority-expander"],
        "verbs": ["delete", "get", "update", "watch"],
    },
]


PROVISIONING_REQUEST_CRD = "provisioningrequests-cluster-autoscaler-1.36.1.yaml"
PROVISIONING_REQUEST_CRD_SHA256 = "727cd4b1a15b435da26b76a465a7f9c2c7971e2359071ac53d4ded37b4c6af9b"
PROVISIONING_REQUEST_FLAGS = (
    # kubernetes/autoscaler cluster-autoscaler-1.31.2 cluster-autoscaler/main.go:269 (the flag;
    # config/flags/flags.go:223 at 1.36.1) and FAQ.md "Enabling ProvisioningRequest Support"
    # (1.30.1 or later; the flag; JSON content type; the RBAC below).
    "--enable-provisioning-requests=true",
    "--kube-api-content-type=application/json",
)
PROVISIONING_REQUEST_RULES: Any = [
    {
        "apiGroups": ["autoscaling.x-k8s.io"],
        "resources": ["provisioningrequests", "provisioningrequests/status"],
        "verbs": ["watch", "list", "get", "create", "update", "patch", "delete"],
    },
    {"apiGroups": [""], "resources": ["podtemplates"], "verbs": READ},
]


@dataclass(frozen=True)
class ClusterAutoscalerArgs:
    spec: AutoscalerSpec
    provisioning_requests: bool = False
    """Serve ProvisioningRequests (Kueue's admission check asks for a Job's nodes at once):
    the CRD, the flags and the RBAC they need (issue 19)."""


def deployment_spec(spec: AutoscalerSpec, provisioning_requests: bool = False) -> dict[str, Any]:
    """The Deployment's spec in API field names (validated by kubernetes-validate in tests)."""
    labels = app_labels(NAME, "autoscaler")
    probe = {"httpGet": {"path": "/health-check", "port": METRICS_PORT}}
    annotations = checkov_skips(
        {"CKV_K8S_43": "pinned by release tag; digests follow the registry's policy"}
    )
    return {
        "replicas": 1,
        "selector": {"matchLabels": selector_labels(NAME)},
        "template": {
            "metadata": {"labels": labels, "annotations": annotations},
            "spec": {
                "serviceAccountName": NAME,
                # It resizes the nodes everything else runs on: keep it scheduled.
                "priorityClassName": "system-cluster-critical",
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 65534,
                    "runAsGroup": 65534,
                    **RUNTIME_DEFAULT_SECCOMP,
                },
                "containers": [
                    {
                        "name": NAME,
                        "image": spec.image,
                        "imagePullPolicy": "Always",
                        "command": [
                            "./cluster-autoscaler",
                            *spec.args,
                            *(PROVISIONING_REQUEST_FLAGS if provisioning_requests else ()),
                        ],
                        "env": [{"name": k, "value": v} for k, v in sorted(spec.env.items())],
                        "ports": [{"name": "metrics", "containerPort": METRICS_PORT}],
                        "livenessProbe": {**probe, "initialDelaySeconds": 30},
                        "readinessProbe": probe,
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "600Mi"},
                            "limits": {"cpu": "500m", "memory": "600Mi"},
                        },
                        "securityContext": {
                            **RESTRICTED_CONTAINER,
                            "readOnlyRootFilesystem": True,
                        },
                    }
                ],
            },
        },
    }


class ClusterAutoscaler(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = app_labels(NAME, "autoscaler")
        account = k8s.core.v1.ServiceAccount(
            f"{name}-cluster-autoscaler-sa",
            metadata={
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": labels,
                "annotations": dict(args.spec.service_account_annotations),
            },
            opts=child,
        )
        subject: Any = [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
        cluster_role = k8s.rbac.v1.ClusterRole(
            f"{name}-cluster-autoscaler-role",
            metadata={"name": NAME, "labels": labels},
            rules=CLUSTER_RULES
            + (PROVISIONING_REQUEST_RULES if args.provisioning_requests else []),
            opts=child,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-cluster-autoscaler-binding",
            metadata={"name": NAME, "labels": labels},
            role_ref=api_fields(
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME}
            ),
            subjects=subject,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster_role]),
        )
        role = k8s.rbac.v1.Role(
            f"{name}-cluster-autoscaler-ns-role",
            metadata={"name": NAME, "namespace": NAMESPACE, "labels": labels},
            rules=NAMESPACE_RULES,
            opts=child,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-cluster-autoscaler-ns-binding",
            metadata={"name": NAME, "namespace": NAMESPACE, "labels": labels},
            role_ref=api_fields(
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME}
            ),
            subjects=subject,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role]),
        )
        k8s.apps.v1.Deployment(
            f"{name}-cluster-autoscaler",
            metadata={
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": labels,
                "annotations": checkov_skips(
                    {"CKV_K8S_43": "pinned by release tag; digests follow the registry's policy"}
                ),
            },
            spec=api_fields(deployment_spec(args.spec, args.provisioning_requests)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account]),
        )
        self.crds: list[pulumi.Resource] = []
        if args.provisioning_requests:
            [crd] = vendored_objects(PROVISIONING_REQUEST_CRD, PROVISIONING_REQUEST_CRD_SHA256)
            self.crds.append(
                k8s.apiextensions.v1.CustomResourceDefinition(
                    f"{name}-provisioningrequests-crd",
                    metadata=crd["metadata"],
                    spec=crd["spec"],
                    opts=child,
                )
            )
        self.register_outputs({})
