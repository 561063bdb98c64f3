"""Namespaces of the GPU layer, with Pod Security Admission levels and a default-deny policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .labels import app_labels


@dataclass(frozen=True)
class GpuNamespacesArgs:
    system_namespace: str
    training_namespace: str
    monitoring_namespace: str
    """Prometheus lives here; the training namespace lets it scrape."""
    training_namespace_labels: Mapping[str, str] = field(default_factory=dict)


def _psa(level: str, *, audit: str | None = None) -> dict[str, str]:
    audit = audit or level
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/audit": audit,
        "pod-security.kubernetes.io/warn": audit,
    }


class GpuNamespaces(pulumi.ComponentResource):
    system_namespace: str
    training_namespace: str

    def __init__(
        self, name: str, args: GpuNamespacesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:GpuNamespaces", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # `privileged` only because the device plugin and the DCGM exporter mount host paths
        # (the kubelet's device-plugin socket directory and pod-resources socket); nothing
        # else runs here.
        k8s.core.v1.Namespace(
            f"{name}-system",
            metadata={
                "name": args.system_namespace,
                "labels": {**app_labels("gpu-system", "namespace"), **_psa("privileged")},
            },
            opts=child,
        )
        # Training pods run user images: `baseline` blocks host access and privilege, and
        # `restricted` is audited and warned about so users see what to tighten.
        training = k8s.core.v1.Namespace(
            f"{name}-training",
            metadata={
                "name": args.training_namespace,
                "labels": {
                    **app_labels("training", "namespace"),
                    **_psa("baseline", audit="restricted"),
                    **args.training_namespace_labels,
                },
            },
            opts=child,
        )
        # Manifests are written with the Kubernetes API's own (camelCase) field names and
        # checked by kubernetes-validate in the tests, hence `Any` for mypy (the
        # SDK's TypedDicts spell fields in snake_case).
        policy: Any = {
            "podSelector": {},
            "policyTypes": ["Ingress"],
            "ingress": [
                # Multi-node training: torchrun rendezvous and NCCL between the Job's pods.
                {"from": [{"podSelector": {}}]},
                # Prometheus scraping from the monitoring namespace.
                {
                    "from": [
                        {
                            "namespaceSelector": {
                                "matchLabels": {
                                    "kubernetes.io/metadata.name": args.monitoring_namespace
                                }
                            }
                        }
                    ]
                },
            ],
        }
        k8s.networking.v1.NetworkPolicy(
            f"{name}-training-default-deny",
            metadata={
                "name": "default-deny-ingress",
                "namespace": args.training_namespace,
                "labels": app_labels("default-deny-ingress", "network-policy"),
            },
            spec=policy,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[training]),
        )
        self.system_namespace = args.system_namespace
        self.training_namespace = args.training_namespace
        self.register_outputs({})
