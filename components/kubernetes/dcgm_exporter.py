"""DCGM exporter: GPU metrics for Prometheus on port 9400, plus a Grafana dashboard.

Per-pod metrics: with DCGM_EXPORTER_KUBERNETES=true the exporter asks the kubelet's
pod-resources socket (/var/lib/kubelet/pod-resources/kubelet.sock) which pod holds each GPU
and adds `pod`, `namespace` and `container` labels. That socket is root's and not writable by
others, so a non-root exporter gets "connect: permission denied" and no metric names a pod
(NVIDIA/gpu-monitoring-tools#83: "kubelet.sock which created by root on the host";
openshift/must-gather#551, 2026-05: "owned by root and is not group- or world-readable").
Prometheus then must keep those labels (ServiceMonitor `honorLabels`, Prometheus'
`honor_labels`): otherwise it renames them `exported_pod`/`exported_namespace` and sets `pod`
and `namespace` to the exporter's own target (prometheus.io/docs/prometheus/latest/
configuration/configuration/#scrape_config, honor_labels: conflicting labels are renamed
"exported_<original-label>"). kube-prometheus-stack's Prometheus selects only ServiceMonitors
labelled `release: <its release name>` unless told otherwise
(prometheus-community/helm-charts charts/kube-prometheus-stack/templates/prometheus/
prometheus.yaml, `serviceMonitorSelectorNilUsesHelmValues`), hence a configurable label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import Taint
from components.settings.gpu_alerts import DEFAULT_ALERTS, GpuAlertSettings

from .dcgm_counters import counters_csv
from .gpu_alerts import RULE_NAME, gpu_alerts, rule_groups
from .grafana_dashboard import dashboard_json
from .labels import (
    RESTRICTED_CONTAINER,
    api_fields,
    app_labels,
    checkov_skips,
    config_hash,
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
    gpu_taints: Sequence[Taint]
    """Every taint of the nodes it runs on (the GPU taint, each pool's own)."""
    profiling_metrics: bool
    service_monitor: bool
    """Needs the Prometheus Operator's CRDs on the cluster."""
    service_monitor_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels a Prometheus selects ServiceMonitors by (kube-prometheus-stack: `release`)."""
    crds_from: Sequence[pulumi.Resource] = ()
    """What installs the ServiceMonitor CRD in this same update (kube-prometheus-stack), so
    the ServiceMonitor is created after it (provider rule custom_resource_after_its_crd)."""
    training_namespace: str = "training"
    """Where training pods run: a GPU is a training pod's when its series carry this
    namespace (dcgm_series.py)."""
    alerts: GpuAlertSettings = DEFAULT_ALERTS
    """Thresholds of the alerts (a PrometheusRule beside the ServiceMonitor, when enabled)
    and of the dashboard's matching panels."""


class DcgmExporter(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: DcgmExporterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:DcgmExporter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = app_labels(NAME, "gpu-metrics")
        counters_text = counters_csv(args.profiling_metrics)
        counters = k8s.core.v1.ConfigMap(
            f"{name}-dcgm-counters",
            metadata={"name": f"{NAME}-counters", "namespace": args.namespace, "labels": labels},
            data={"counters.csv": counters_text},
            opts=child,
        )
        k8s.apps.v1.DaemonSet(
            f"{name}-dcgm-exporter",
            metadata={
                "name": NAME,
                "namespace": args.namespace,
                "labels": labels,
                "annotations": _annotations(),
            },
            spec=gpu_node_daemonset_spec(
                NAME,
                labels,
                _annotations(),
                args.gpu_node_labels,
                args.gpu_taints,
                _pod_spec(args),
                # The exporter reads its counters file once, at start.
                template_annotations=config_hash(counters_text),
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
                metadata={
                    "name": NAME,
                    "namespace": args.namespace,
                    "labels": {**labels, **args.service_monitor_labels},
                },
                spec={
                    "selector": {"matchLabels": selector_labels(NAME)},
                    # Keep the exporter's pod/namespace/container labels (the training pod's).
                    "endpoints": [{"port": "metrics", "interval": "30s", "honorLabels": True}],
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.crds_from)),
            )
        if args.service_monitor and args.alerts.enabled:
            # Selected like the ServiceMonitor: kube-prometheus-stack's Prometheus picks
            # PrometheusRules by the same `release` label (its ruleSelector).
            k8s.apiextensions.CustomResource(
                f"{name}-gpu-alerts",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={
                    "name": RULE_NAME,
                    "namespace": args.namespace,
                    "labels": {
                        **app_labels(RULE_NAME, "gpu-alerts"),
                        **args.service_monitor_labels,
                    },
                },
                spec={"groups": rule_groups(gpu_alerts(args.alerts, args.training_namespace))},
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.crds_from)),
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
            data={
                "gpuinfra-gpus.json": dashboard_json(
                    args.profiling_metrics, args.alerts, args.training_namespace
                )
            },
            opts=child,
        )
        self.register_outputs({})


def _annotations() -> dict[str, str]:
    root = "root: the kubelet's pod-resources socket (pod labels) is root's only"
    sys_admin = "upstream gives SYS_ADMIN: DCGM refuses field watches without it"
    reasons = {
        "CKV_K8S_22": "DCGM's embedded host engine writes state; upstream keeps root writable",
        "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
        "CKV_K8S_23": root,
        "CKV_K8S_40": root,
        "CKV_K8S_25": sys_admin,
        "CKV_K8S_39": sys_admin,
    }
    return checkov_skips(reasons)


EXPORTER_SECURITY: dict[str, Any] = {
    **RESTRICTED_CONTAINER,
    "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
    "runAsNonRoot": False,
    "runAsUser": 0,
}
"""What upstream gives the exporter (NVIDIA/dcgm-exporter@4.5.3-4.8.2 dcgm-exporter.yaml:52-58
and deployment/values.yaml:95-101, unchanged on main d5e5f51): UID 0, because the pod-resources
socket is root's; SYS_ADMIN, because DCGM's embedded host engine refuses to watch fields
without it ("Host engine is running as non-root", NVIDIA/dcgm-exporter#402, #407,
NVIDIA/DCGM#196) and profiling metrics need it; every other capability dropped, no
privilege escalation. UID 1000 (upstream's non-root note) loses every pod label."""


def _pod_spec(args: DcgmExporterArgs) -> dict[str, Any]:
    security = dict(EXPORTER_SECURITY)
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
