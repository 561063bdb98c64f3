"""The GPU alerts: Prometheus alerting rules over the DCGM exporter's metrics.

Each rule uses only fields of the counters file the stack ships (dcgm_counters.py) and labels
the pinned exporter writes or the scrape adds (dcgm_series.py); "a training pod holds the
GPU" is `namespace="<training namespace>"` (see dcgm_series.py for why not `pod!=""`).
Every description says what to do. The rules are tested with `promtool test rules` over
synthetic series (tests/kubernetes/test_gpu_alerts.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from components.settings.gpu_alerts import GpuAlertSettings

from .dcgm_series import NODE

GROUP = "gpuinfra-gpu"
RULE_NAME = "gpuinfra-gpu-alerts"
SMOOTHING = "5m"
"""GPU utilisation is averaged over this window before it is compared: data loading makes
it swing between 0 and 100 % from one sample to the next."""
GPU = f"{NODE}, gpu, UUID, modelName"
"""One GPU, whichever pod holds it (the pod labels come and go with the pods)."""
DRAIN = (
    f"kubectl cordon {{{{ $labels.{NODE} }}}} && kubectl drain {{{{ $labels.{NODE} }}}} "
    "--ignore-daemonsets --delete-emptydir-data"
)
VALUE = '{{ printf "%.0f" $value }}'

Severity = Literal["warning", "critical"]


@dataclass(frozen=True)
class GpuAlert:
    name: str
    severity: Severity
    expr: str
    for_minutes: int
    summary: str
    description: str
    metrics: tuple[str, ...]
    """The DCGM fields the expression reads (the counters file must export them)."""

    def rule(self) -> dict[str, Any]:
        """One Prometheus alerting rule (rule file and PrometheusRule `spec.groups[].rules`)."""
        rule: dict[str, Any] = {"alert": self.name, "expr": self.expr}
        if self.for_minutes:
            rule["for"] = f"{self.for_minutes}m"
        rule["labels"] = {"severity": self.severity}
        rule["annotations"] = {"summary": self.summary, "description": self.description}
        return rule


def _idle_nodes(namespace: str) -> str:
    """GPU nodes (every node the exporter runs on has GPUs) none of whose GPUs a training pod
    holds."""
    return (
        f"count by ({NODE}) (DCGM_FI_DEV_GPU_UTIL) unless on ({NODE}) "
        f'count by ({NODE}) (DCGM_FI_DEV_GPU_UTIL{{namespace="{namespace}"}})'
    )


def gpu_alerts(settings: GpuAlertSettings, training_namespace: str) -> tuple[GpuAlert, ...]:
    s, ns = settings, training_namespace
    training = f'{{namespace="{ns}"}}'
    idle = _idle_nodes(ns)
    if s.min_gpu_nodes:
        # The pools keep that many nodes however idle: alert only when there are more. The
        # exporter's series name the node, not its pool, so the pools' minima count together.
        idle = f"({idle}) and on () (count({idle}) > {s.min_gpu_nodes})"
    kept = (
        f" The GPU pools keep {s.min_gpu_nodes} node(s) at their minimum sizes together; this "
        "fires only when more than that are idle."
        if s.min_gpu_nodes
        else ""
    )
    return (
        GpuAlert(
            name="GpuUnderutilized",
            severity="warning",
            expr=(
                f"avg by (namespace, pod, {NODE}) "
                f"(avg_over_time(DCGM_FI_DEV_GPU_UTIL{training}[{SMOOTHING}])) "
                f"< {s.utilization_percent}"
            ),
            for_minutes=s.utilization_minutes,
            summary=(
                "Training pod {{ $labels.namespace }}/{{ $labels.pod }} keeps its GPUs under "
                f"{s.utilization_percent} % busy"
            ),
            description=(
                "The GPUs of training pod {{ $labels.pod }} on node {{ $labels.Hostname }} have "
                f"averaged under {s.utilization_percent} % utilisation for "
                f"{s.utilization_minutes} minutes (now {VALUE} %): the GPU is waiting for "
                "input, or it is bigger than the job needs, and it is billed either way. "
                "Speed up the input pipeline (more DataLoader workers, pin_memory, prefetching, "
                "data cached on local disk instead of read from the bucket each epoch), raise "
                "the batch size, or run the Job on a smaller or cheaper GPU (gpuPoolInstanceType, "
                "gpusPerNode)."
            ),
            metrics=("DCGM_FI_DEV_GPU_UTIL",),
        ),
        GpuAlert(
            name="GpuTemperatureHigh",
            severity="warning",
            expr=f"max by ({GPU}) (DCGM_FI_DEV_GPU_TEMP) > {s.temperature_celsius}",
            for_minutes=s.temperature_minutes,
            summary=(
                "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is above "
                f"{s.temperature_celsius} °C"
            ),
            description=(
                "GPU {{ $labels.gpu }} ({{ $labels.modelName }}) on node {{ $labels.Hostname }} "
                f"is at {VALUE} °C, above {s.temperature_celsius} °C for "
                f"{s.temperature_minutes} minutes: it slows its clocks to cool down and, "
                "hotter still, shuts down. A cloud instance's cooling is the provider's: move "
                f"the work off it ({DRAIN}; its Jobs resume from their checkpoints elsewhere), "
                "delete the node so the autoscaler replaces it, and report the instance to the "
                "cloud provider if it happens again."
            ),
            metrics=("DCGM_FI_DEV_GPU_TEMP",),
        ),
        GpuAlert(
            name="GpuXidError",
            severity="critical",
            expr=f"max by ({GPU}, err_code, err_msg) (DCGM_FI_DEV_XID_ERRORS) > 0",
            for_minutes=0,
            summary="XID {{ $labels.err_code }} on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}",
            description=(
                "The NVIDIA driver reported XID {{ $labels.err_code }} ({{ $labels.err_msg }}) "
                "on GPU {{ $labels.gpu }} ({{ $labels.modelName }}) of node "
                "{{ $labels.Hostname }}. XIDs 13, 31, 43 and 45 usually come from the "
                "application: read the training pod's log. Any other (48, 63, 64, 74, 79, 94, "
                "95, 119, ...) points at the GPU or its driver: drain the node "
                f"({DRAIN}; its Jobs resume from their checkpoints elsewhere) and delete it, so "
                "the autoscaler brings a fresh one. The exporter reports the last XID until the "
                "GPU is reset or the exporter restarts, so the alert lasts until then."
            ),
            metrics=("DCGM_FI_DEV_XID_ERRORS",),
        ),
        GpuAlert(
            name="GpuDoubleBitEccErrors",
            severity="critical",
            expr=f"max by ({GPU}) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL) > 0",
            for_minutes=0,
            summary=("Uncorrectable ECC errors on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}"),
            description=(
                "GPU {{ $labels.gpu }} ({{ $labels.modelName }}) of node {{ $labels.Hostname }} "
                f"has counted {VALUE} double-bit (uncorrectable) ECC errors since its driver "
                "loaded: data in its memory was corrupted, and a Job on it may have computed or "
                f"saved wrong values. Drain the node now ({DRAIN}) and delete it, so the "
                "autoscaler brings a fresh one; before trusting the affected Jobs' newest "
                "checkpoints, check their loss curves around the time this alert started."
            ),
            metrics=("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",),
        ),
        GpuAlert(
            name="GpuMemoryNearlyFull",
            severity="warning",
            expr=(
                f"max by (namespace, pod, {NODE}, gpu, modelName) (100 * "
                f"DCGM_FI_DEV_FB_USED{training} / (DCGM_FI_DEV_FB_USED{training} + "
                f"DCGM_FI_DEV_FB_FREE{training})) > {s.memory_percent}"
            ),
            for_minutes=s.memory_minutes,
            summary=(
                "GPU memory of {{ $labels.namespace }}/{{ $labels.pod }} is "
                f"over {s.memory_percent} % full"
            ),
            description=(
                "GPU {{ $labels.gpu }} ({{ $labels.modelName }}) of training pod "
                f"{{{{ $labels.pod }}}} on node {{{{ $labels.Hostname }}}} has had {VALUE} % of "
                f"its memory in use, over {s.memory_percent} % for {s.memory_minutes} minutes. "
                "PyTorch keeps freed memory cached, so a steady high value is no leak by itself, "
                'but a larger batch or sequence can then fail with "CUDA out of memory". Lower '
                "the batch size (gradient accumulation keeps the effective one), use activation "
                "checkpointing or mixed precision, set "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation, or run "
                "on a GPU with more memory."
            ),
            metrics=("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"),
        ),
        GpuAlert(
            name="GpuNodeIdle",
            severity="warning",
            expr=idle,
            for_minutes=s.idle_node_minutes,
            summary=(
                f"GPU node {{{{ $labels.{NODE} }}}} has had no training pod for "
                f"{s.idle_node_minutes} minutes"
            ),
            description=(
                f"No pod of namespace {ns} has held a GPU of node {{{{ $labels.{NODE} }}}} for "
                f"{s.idle_node_minutes} minutes, longer than the autoscaler waits before it "
                f"removes an unneeded node, and the node is billed all that time.{kept} Find "
                "what keeps it: a pod outside the training namespace holding a GPU, a running "
                'pod annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false", the '
                "node annotation cluster-autoscaler.kubernetes.io/scale-down-disabled, the "
                "pool's minimum size, or the autoscaler's log. If nothing needs the node, "
                f"drain it ({DRAIN}) and delete it."
            ),
            metrics=("DCGM_FI_DEV_GPU_UTIL",),
        ),
    )


def rule_groups(alerts: tuple[GpuAlert, ...]) -> list[dict[str, Any]]:
    """`spec.groups` of the PrometheusRule (the same shape as a Prometheus rule file)."""
    return [{"name": GROUP, "rules": [alert.rule() for alert in alerts]}]
