"""Settings of the GPU alerts (a PrometheusRule next to the DCGM exporter's ServiceMonitor).

Defaults follow the rules of thumb GPU renters use: sustained utilisation under 70 % means
the instance is too big or the input pipeline too slow; above 85 °C the card needs cooling.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reader import ConfigReader

IDLE_NODE_MARGIN_MINUTES = 10
"""Added to the scale-down delay: after a node has been unneeded that long, the autoscaler
still drains it and the cloud deletes the instance, which takes minutes."""
CLUSTER_AUTOSCALER_UNNEEDED_MINUTES = 10
"""Cluster Autoscaler's default `--scale-down-unneeded-time`, 10 minutes (kubernetes/autoscaler
cluster-autoscaler/FAQ.md, "What are the parameters to CA?"): what an existing
cluster (`cloud: kubernetes`) is assumed to run unless `gpuAlertIdleNodeMinutes` says."""
MAX_MINUTES = 7 * 24 * 60


@dataclass(frozen=True)
class GpuAlertSettings:
    enabled: bool
    """`gpuAlerts`; the rule also needs the Prometheus operator (`monitoringPrometheusOperator`)."""
    utilization_percent: int
    utilization_minutes: int
    temperature_celsius: int
    temperature_minutes: int
    memory_percent: int
    memory_minutes: int
    idle_node_minutes: int
    """How long a GPU node may hold no training pod: past the autoscaler's scale-down delay."""
    min_gpu_nodes: int = 0
    """GPU nodes the pools keep however idle (their minimum sizes together; the exporter's
    series carry no pool label): only more than that alert."""


DEFAULT_ALERTS = GpuAlertSettings(
    enabled=True,
    utilization_percent=70,
    utilization_minutes=30,
    temperature_celsius=85,
    temperature_minutes=5,
    memory_percent=95,
    memory_minutes=15,
    idle_node_minutes=CLUSTER_AUTOSCALER_UNNEEDED_MINUTES + IDLE_NODE_MARGIN_MINUTES,
)


def _bounded(r: ConfigReader, name: str, low: int, high: int, what: str) -> int:
    value = r.integer(name)
    if not low <= value <= high:
        r.problem(name, value, f"must be between {low} and {high} ({what})")
    return value


def parse_gpu_alerts(
    r: ConfigReader, *, scale_down_delay_minutes: int | None, min_gpu_nodes: int = 0
) -> GpuAlertSettings:
    """`scale_down_delay_minutes`: the stack's own autoscaler delay (cloud stacks); None where
    the cluster's owner runs the autoscaler (`cloud: kubernetes`)."""
    idle = r.integer("gpuAlertIdleNodeMinutes")
    delay = (
        CLUSTER_AUTOSCALER_UNNEEDED_MINUTES
        if scale_down_delay_minutes is None
        else scale_down_delay_minutes
    )
    if idle == 0:
        idle = delay + IDLE_NODE_MARGIN_MINUTES
    elif scale_down_delay_minutes is not None and not delay < idle <= MAX_MINUTES:
        r.problem(
            "gpuAlertIdleNodeMinutes",
            idle,
            f"must be more than gpuPoolScaleDownDelayMinutes ({delay}): the autoscaler removes "
            f"an idle GPU node only after that, so an earlier alert is noise; at most "
            f"{MAX_MINUTES}, or 0 for {delay + IDLE_NODE_MARGIN_MINUTES}",
        )
    elif not 1 <= idle <= MAX_MINUTES:
        r.problem(
            "gpuAlertIdleNodeMinutes",
            idle,
            f"must be between 1 and {MAX_MINUTES}, or 0 for "
            f"{delay + IDLE_NODE_MARGIN_MINUTES} (your autoscaler's scale-down delay plus "
            f"{IDLE_NODE_MARGIN_MINUTES})",
        )
    return GpuAlertSettings(
        enabled=r.boolean("gpuAlerts"),
        utilization_percent=_bounded(
            r, "gpuAlertUtilizationPercent", 1, 100, "GPU utilisation in percent"
        ),
        utilization_minutes=_bounded(
            r,
            "gpuAlertUtilizationMinutes",
            5,
            MAX_MINUTES,
            "minutes, at least the 5-minute average the alert compares",
        ),
        temperature_celsius=_bounded(
            r, "gpuAlertTemperatureCelsius", 40, 120, "degrees Celsius of the GPU die"
        ),
        temperature_minutes=_bounded(r, "gpuAlertTemperatureMinutes", 0, MAX_MINUTES, "minutes"),
        memory_percent=_bounded(
            r, "gpuAlertMemoryPercent", 50, 100, "percent of the GPU's memory in use"
        ),
        memory_minutes=_bounded(r, "gpuAlertMemoryMinutes", 0, MAX_MINUTES, "minutes"),
        idle_node_minutes=idle,
        min_gpu_nodes=min_gpu_nodes,
    )
