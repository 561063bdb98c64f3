"""DCGM exporter: GPU metrics for Prometheus on port 9400, plus a Grafana dashboard."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import Taint

from .dcgm_counters import counters_csv
from .grafana_dashboard import dashboard_json
from .labels import (
    RESTRICTED_CONTAINER,
    api_fields,
    app_labels,
    checkov_skips,
    gpu_node_daemonset_spec,
    selector_labels,
)

# Image of NVIDIA/dcgm-exporter release 4.5.3-4.8.2 (DCGM 4.5.3, exporter 4.8.2), the tag its
# static manifest dcgm-exporter.yaml used at the time of writing (checked 2026-11).
DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
NAME = "dcgm-exporter"
PORT = 9400
COUNTERS_DIR = "/etc/dcgm-exporter/gpuinfra"


@dataclass(frozen=True)
class DcgmExporterArgs:
    namespace: str
    gpu_node_labels: Mapping[str, str]
    gpu_taint: Taint
    profiling_metrics: bool
    service_monitor: bool
    """Needs the Prometheus Operator's CRDs on the cluster."""


class DcgmExporter(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:DcgmExporter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = app_labels(NAME, "gpu-metrics")
        counters = k8s.core.v1.ConfigMap(
            f"{name}-dcgm-counters",
            metadata={"name": f"{NAME}-counters", "namespace": args.namespace, "labels": labels},
            data={"counters.csv": counters_csv(args.profiling_metrics)},
            opts=child,
        )
        k8s.apps.v1.DaemonSet(
            f"{name}-dcgm-exporter",
            metadata={
                "name": NAME,
                "namespace": args.namespace,
                "labels": labels,
                "annotations": _annotations(args.profiling_metrics),
            },
            spec=gpu_node_daemonset_spec(
                NAME,
                labels,
                _annotations(args.profiling_metrics),
                args.gpu_node_labels,
                args.gpu_taint,
                _pod_spec(args),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[counters]),
        )
        k8s.core.v1.Service(
            f"{name}-dcgm-exporter-svc",
            metadata={"name": NAME, "namespace": args.namespace, "labels": labels},
            spec=api_fields(
                {
                    "selector": selector_labels(NAME),
                    "ports": [{"name": "metrics", "port": PORT, "targetPort": "metrics"}],
                }
            ),
            opts=child,
        )
        if args.service_monitor:
            k8s.apiextensions.CustomResource(
                f"{name}-dcgm-exporter-monitor",
                api_version="monitoring.coreos.com/v1",
                kind="ServiceMonitor",
                metadata={"name": NAME, "namespace": args.namespace, "labels": labels},
                spec={
                    "selector": {"matchLabels": selector_labels(NAME)},
                    "endpoints": [{"port": "metrics", "interval": "30s"}],
                },
                opts=child,
            )
        # Picked up by the Grafana sidecar of kube-prometheus-stack (label grafana_dashboard).
        k8s.core.v1.ConfigMap(
            f"{name}-gpu-dashboard",
            metadata={
                "name": "gpuinfra-gpu-dashboard",
                "namespace": args.namespace,
                "labels": {
                    **app_labels("gpuinfra-gpu-dashboard", "dashboard"),
                    "grafana_dashboard": "1",
                },
            },
            data={"gpuinfra-gpus.json": dashboard_json(args.profiling_metrics)},
            opts=child,
        )
        self.register_outputs({})


def _annotations(profiling: bool) -> dict[str, str]:
    reasons = {
        "CKV_K8S_22": "DCGM's embedded host engine writes state; upstream keeps root writable",
        "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
        "CKV_K8S_40": "UID 1000, the user upstream documents for the non-profiling mode",
    }
    if profiling:
        reason = "profiling metrics (DCGM_FI_PROF_*) need SYS_ADMIN and root; on by config"
        reasons.update(
            {key: reason for key in ("CKV_K8S_23", "CKV_K8S_25", "CKV_K8S_39", "CKV_K8S_40")}
        )
    return checkov_skips(reasons)


def _pod_spec(args: DcgmExporterArgs) -> dict[str, Any]:
    security: dict[str, Any] = dict(RESTRICTED_CONTAINER)
    if args.profiling_metrics:
        # DCGM's profiling module needs SYS_ADMIN (upstream dcgm-exporter.yaml does the same).
        security = {
            **security,
            "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
            "runAsNonRoot": False,
            "runAsUser": 0,
        }
    else:
        security = {**security, "runAsNonRoot": True, "runAsUser": 1000}
    return {
        "automountServiceAccountToken": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": NAME,
                "image": DCGM_EXPORTER_IMAGE,
                "imagePullPolicy": "Always",
                "env": [
                    {"name": "DCGM_EXPORTER_LISTEN", "value": f":{PORT}"},
                    {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
                    {"name": "DCGM_EXPORTER_COLLECTORS", "value": f"{COUNTERS_DIR}/counters.csv"},
                    {
                        "name": "NODE_NAME",
                        "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                    },
                ],
                "ports": [{"name": "metrics", "containerPort": PORT}],
                "securityContext": security,
                "readinessProbe": {
                    "httpGet": {"path": "/health", "port": PORT},
                    "initialDelaySeconds": 15,
                    "periodSeconds": 10,
                },
                "livenessProbe": {
                    "httpGet": {"path": "/health", "port": PORT},
                    "initialDelaySeconds": 30,
                    "periodSeconds": 20,
                },
                "resources": {
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                    "limits": {"cpu": "500m", "memory": "512Mi"},
                },
                "volumeMounts": [
                    {
                        "name": "pod-resources",
                        "mountPath": "/var/lib/kubelet/pod-resources",
                        "readOnly": True,
                    },
                    {"name": "counters", "mountPath": COUNTERS_DIR, "readOnly": True},
                ],
            }
        ],
        "volumes": [
            {
                "name": "pod-resources",
                "hostPath": {"path": "/var/lib/kubelet/pod-resources", "type": "Directory"},
            },
            {"name": "counters", "configMap": {"name": f"{NAME}-counters"}},
        ],
    }
