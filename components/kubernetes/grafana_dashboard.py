"""A Grafana dashboard for the DCGM exporter's metrics: the alerts' signals with their
thresholds, per node, per training pod, and per training Job over its life."""

from __future__ import annotations

import json
from typing import Any

from components.settings.gpu_alerts import GpuAlertSettings

from .dcgm_series import NODE
from .gpu_alerts import SMOOTHING

JOB_POD = "${job}-([0-9]+-)?[a-z0-9]{5}"
"""The pods of the Job picked in the `job` variable. The Job controller names them
`<job>-<random 5>` (NonIndexed) or `<job>-<index>-<random 5>` (Indexed): metrics name pods,
not Jobs (the exporter adds no pod labels, for it reads no Kubernetes API)."""
JOB_FROM_POD = "/^(.+?)(?:-[0-9]+)?-[a-z0-9]{5}$/"
"""The Job a pod name belongs to, for the `job` variable (Grafana keeps the first group)."""


def by_node(metric: str) -> str:
    """`metric` with a `Hostname` label whichever spelling the exporter wrote: dcgm-exporter up
    to 4.5.3-4.8.2 writes `Hostname` (internal/pkg/rendermetrics/render_metrics.go:47 at that
    tag), main `hostname` (d5e5f51, "Rename Hostname label to hostname (#655)", 2026-05-12).
    label_replace only rewrites series whose `hostname` is non-empty; older series keep
    `Hostname`."""
    return f'label_replace({metric}, "{NODE}", "$1", "hostname", "(.+)")'


def _thresholds(value: float | None, above_is_bad: bool = True) -> dict[str, Any]:
    if value is None:
        return {}
    low, high = ("green", "red") if above_is_bad else ("red", "green")
    return {
        "thresholds": {
            "mode": "absolute",
            "steps": [{"color": low, "value": None}, {"color": high, "value": value}],
        },
        "custom": {"thresholdsStyle": {"mode": "line"}},
    }


def _panel(
    panel_id: int,
    title: str,
    targets: list[tuple[str, str]],
    unit: str,
    x: int,
    y: int,
    *,
    threshold: float | None = None,
    above_is_bad: bool = True,
    description: str = "",
    kind: str = "timeseries",
    width: int = 12,
) -> dict[str, Any]:
    panel: dict[str, Any] = {
        "id": panel_id,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": width, "x": x, "y": y},
        "fieldConfig": {
            "defaults": {"unit": unit, **_thresholds(threshold, above_is_bad)},
            "overrides": [],
        },
        "targets": [
            {"expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
            for i, (expr, legend) in enumerate(targets)
        ],
    }
    if description:
        panel["description"] = description
    return panel


def _row(panel_id: int, title: str, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "row",
        "title": title,
        "collapsed": False,
        "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
        "panels": [],
    }


def dashboard_json(
    profiling: bool, alerts: GpuAlertSettings, training_namespace: str = "training"
) -> str:
    """Per-node panels aggregate by the node label (`by_node`); per-pod and per-Job panels
    keep the series of the training namespace, the one whose pods hold the GPUs (a GPU no
    pod holds carries the exporter's own pod and namespace: see dcgm_series.py)."""
    ns = f'namespace="{training_namespace}"'
    job = f'{ns}, pod=~"{JOB_POD}"'
    a = alerts
    panels = [
        _row(1, "Alerts: what each GPU alert watches, with its threshold", 0),
        _panel(2, f"GPU utilization per training pod ({SMOOTHING} average)",
               [(f"avg by (namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{{{ns}}}"
                 f"[{SMOOTHING}]))", "{{namespace}}/{{pod}}")],
               "percent", 0, 1, threshold=a.utilization_percent, above_is_bad=False,
               description=f"GpuUnderutilized: under the line for {a.utilization_minutes} min."),
        _panel(3, "GPU memory used per training GPU",
               [(f"max by (namespace, pod, gpu) (100 * DCGM_FI_DEV_FB_USED{{{ns}}} / "
                 f"(DCGM_FI_DEV_FB_USED{{{ns}}} + DCGM_FI_DEV_FB_FREE{{{ns}}}))",
                 "{{namespace}}/{{pod}} GPU {{gpu}}")],
               "percent", 12, 1, threshold=a.memory_percent,
               description=f"GpuMemoryNearlyFull: over the line for {a.memory_minutes} min."),
        _panel(4, "GPU temperature",
               [(f"max by ({NODE}, gpu) ({by_node('DCGM_FI_DEV_GPU_TEMP')})",
                 "{{Hostname}} GPU {{gpu}}")],
               "celsius", 0, 9, threshold=a.temperature_celsius,
               description=f"GpuTemperatureHigh: over the line for {a.temperature_minutes} min."),
        _panel(5, "Last XID error",
               [(f"max by ({NODE}, gpu, err_code) ({by_node('DCGM_FI_DEV_XID_ERRORS')})",
                 "{{Hostname}} GPU {{gpu}} XID {{err_code}}")],
               "none", 12, 9, threshold=1,
               description="GpuXidError: any XID (the exporter keeps the last one)."),
        _panel(6, "Double-bit ECC errors since the driver loaded",
               [(f"max by ({NODE}, gpu) ({by_node('DCGM_FI_DEV_ECC_DBE_VOL_TOTAL')})",
                 "{{Hostname}} GPU {{gpu}}")],
               "none", 0, 17, threshold=1,
               description="GpuDoubleBitEccErrors: any (no series: a GPU without ECC)."),
        _panel(7, "GPU nodes without a training pod (their GPUs)",
               [(f"count by ({NODE}) ({by_node('DCGM_FI_DEV_GPU_UTIL')}) unless on ({NODE}) "
                 f"count by ({NODE}) ({by_node(f'DCGM_FI_DEV_GPU_UTIL{{{ns}}}')})",
                 "{{Hostname}}")],
               "none", 12, 17,
               description=f"GpuNodeIdle: a node here for {a.idle_node_minutes} min "
               "(the autoscaler should have removed it)."),
        _row(8, "Nodes", 25),
        _panel(9, "GPU utilization per node",
               [(f"avg by ({NODE}) ({by_node('DCGM_FI_DEV_GPU_UTIL')})", "{{Hostname}}")],
               "percent", 0, 26),
        _panel(10, "GPU memory used per node",
               [(f"sum by ({NODE}) ({by_node('DCGM_FI_DEV_FB_USED')})", "{{Hostname}}")],
               "decmbytes", 12, 26),
        _panel(11, "Power draw per node",
               [(f"sum by ({NODE}) ({by_node('DCGM_FI_DEV_POWER_USAGE')})", "{{Hostname}}")],
               "watt", 0, 34),
        _panel(12, "GPU memory used per training pod",
               [(f"sum by (namespace, pod) (DCGM_FI_DEV_FB_USED{{{ns}}})",
                 "{{namespace}}/{{pod}}")],
               "decmbytes", 12, 34),
        _row(13, "Training Job $job over its life (set the time range to the Job's run)", 42),
        _panel(14, "Job GPU utilization",
               [(f"avg(DCGM_FI_DEV_GPU_UTIL{{{job}}})", "mean of the Job's GPUs"),
                (f"max by (pod, gpu) (DCGM_FI_DEV_GPU_UTIL{{{job}}})", "{{pod}} GPU {{gpu}}")],
               "percent", 0, 43, threshold=a.utilization_percent, above_is_bad=False),
        _panel(15, "Job GPU memory used",
               [(f"sum by (pod) (DCGM_FI_DEV_FB_USED{{{job}}})", "{{pod}}")],
               "decmbytes", 12, 43),
        _panel(16, "Job power draw",
               [(f"sum(DCGM_FI_DEV_POWER_USAGE{{{job}}})", "all the Job's GPUs"),
                (f"sum by (pod) (DCGM_FI_DEV_POWER_USAGE{{{job}}})", "{{pod}}")],
               "watt", 0, 51),
        _panel(17, "Job GPU energy in the time range",
               [(f"sum(increase(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{job}}}[$__range])) "
                 "/ 3.6e9", "kWh")],
               "kwatth", 12, 51, kind="stat",
               description="DCGM counts millijoules; 3.6e9 mJ = 1 kWh."),
    ]  # fmt: skip
    if profiling:
        panels.append(
            _panel(
                18,
                "Tensor-core activity per training pod",
                [
                    (
                        f"avg by (namespace, pod) (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{ns}}})",
                        "{{namespace}}/{{pod}}",
                    )
                ],
                "percentunit",
                0,
                59,
            )
        )
    dashboard = {
        "uid": "gpuinfra-gpus",
        "title": "gpuinfra / GPUs",
        "tags": ["gpuinfra", "gpu", "dcgm"],
        "timezone": "browser",
        "schemaVersion": 39,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "type": "datasource",
                    "query": "prometheus",
                    "label": "Data source",
                },
                {
                    "name": "job",
                    "type": "query",
                    "label": "Training Job",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "definition": f"label_values(DCGM_FI_DEV_GPU_UTIL{{{ns}}}, pod)",
                    "query": f"label_values(DCGM_FI_DEV_GPU_UTIL{{{ns}}}, pod)",
                    "regex": JOB_FROM_POD,
                    # On time range change: a finished Job is listed while its run is in range.
                    "refresh": 2,
                    "sort": 1,
                },
            ]
        },
        "panels": panels,
    }
    return json.dumps(dashboard, indent=2, sort_keys=True)
