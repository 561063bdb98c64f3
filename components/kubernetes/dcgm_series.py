"""What a DCGM exporter series looks like once Prometheus has scraped it: the labels the
pinned exporter writes, and the ones the ServiceMonitor's scrape adds. The alerts and the
dashboard may only use these (tests/kubernetes/test_gpu_alerts.py ties them together).

Sources (NVIDIA/dcgm-exporter at tag 4.5.3-4.8.2, the image DCGM_EXPORTER_IMAGE pins):
- every GPU series: `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname` (only when
  the exporter knows its host; MIG slices add `GPU_I_PROFILE` and `GPU_I_ID`):
  internal/pkg/rendermetrics/render_metrics.go:47; the `UUID` spelling and the XID labels
  `err_code`/`err_msg`: internal/pkg/collector/gpu_collector.go:316-330. With
  DCGM_EXPORTER_KUBERNETES=true the host is the NODE_NAME variable
  (internal/pkg/hostname/hostname.go:30,52-53), which the DaemonSet sets to the node's name.
- a GPU that a pod holds (kubelet pod-resources): `pod`, `namespace`, `container` of that
  pod (internal/pkg/transformation/kubernetes.go:425-428, names in const.go:21-23). A GPU no
  pod holds gets none of them.
- Prometheus adds the target's labels (prometheus-operator v0.88.1, the release of the pinned
  kube-prometheus-stack 81.6.2, pkg/prometheus/promcfg.go:2020-2034 namespace, service, pod,
  container; :2065 job; :2083 endpoint) and `instance`. With `honorLabels` the exporter's own
  `pod`/`namespace`/`container` win, but on a GPU no pod holds they are the *exporter's* pod:
  namespace `gpu-system`, never the training namespace. "Held by a training pod" is
  therefore `namespace="<training namespace>"`, not `pod!=""`.
"""

from __future__ import annotations

NODE = "Hostname"
"""The node label of the pinned exporter (main renamed it `hostname` in d5e5f51, 2026-05-12,
after 4.5.3-4.8.2): the alerts group by it; a new exporter tag must revisit them."""

GPU_LABELS: frozenset[str] = frozenset(
    {"gpu", "UUID", "pci_bus_id", "device", "modelName", NODE, "GPU_I_PROFILE", "GPU_I_ID"}
)
"""Labels the exporter writes on every GPU series (MIG ones only on MIG slices)."""

POD_LABELS: frozenset[str] = frozenset({"pod", "namespace", "container"})
"""Labels of the pod that holds the GPU (DCGM_EXPORTER_KUBERNETES=true)."""

FIELD_LABELS: dict[str, frozenset[str]] = {
    "DCGM_FI_DEV_XID_ERRORS": frozenset({"err_code", "err_msg"}),
}
"""Labels only some fields carry."""

TARGET_LABELS: frozenset[str] = frozenset(
    {"instance", "job", "namespace", "service", "pod", "container", "endpoint"}
)
"""Labels the ServiceMonitor's scrape adds (the exporter's own pod labels win: honorLabels)."""


def labels_of(field: str) -> frozenset[str]:
    """Every label a scraped series of `field` can carry."""
    return GPU_LABELS | POD_LABELS | FIELD_LABELS.get(field, frozenset()) | TARGET_LABELS
