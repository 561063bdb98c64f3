"""A Grafana dashboard for the DCGM exporter's metrics: per node and per training pod."""

from __future__ import annotations

import json
from typing import Any

NODE = "Hostname"
"""The node label the per-node panels group by. dcgm-exporter up to 4.5.3-4.8.2 writes
`Hostname` (internal/pkg/rendermetrics/render_metrics.go:47 at that tag); main renamed it
`hostname` (NVIDIA/dcgm-exporter d5e5f51, "Rename Hostname label to hostname (#655)",
2026-05-12). `by_node` copies `hostname` into `Hostname` where present, so the panels work
with either exporter."""


def by_node(metric: str) -> str:
    """`metric` with a `Hostname` label whichever spelling the exporter wrote (label_replace
    only rewrites series whose `hostname` is non-empty; older series keep `Hostname`)."""
    return f'label_replace({metric}, "{NODE}", "$1", "hostname", "(.+)")'


def _panel(
    panel_id: int, title: str, expr: str, legend: str, unit: str, x: int, y: int
) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"expr": expr, "legendFormat": legend, "refId": "A"}],
    }


def dashboard_json(profiling: bool) -> str:
    """Per-node panels aggregate by the node label (`by_node`); per-pod panels by the `pod`
    label that DCGM_EXPORTER_KUBERNETES=true attaches to GPUs in use by a pod."""
    panels = [
        _panel(1, "GPU utilization per node",
               f"avg by (Hostname) ({by_node('DCGM_FI_DEV_GPU_UTIL')})",
               "{{Hostname}}", "percent", 0, 0),
        _panel(2, "GPU memory used per node",
               f"sum by (Hostname) ({by_node('DCGM_FI_DEV_FB_USED')})",
               "{{Hostname}}", "decmbytes", 12, 0),
        _panel(3, "GPU utilization per pod",
               'avg by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{pod!=""})',
               "{{namespace}}/{{pod}}", "percent", 0, 8),
        _panel(4, "GPU memory used per pod",
               'sum by (namespace, pod) (DCGM_FI_DEV_FB_USED{pod!=""})',
               "{{namespace}}/{{pod}}", "decmbytes", 12, 8),
        _panel(5, "GPU temperature",
               f"max by (Hostname, gpu) ({by_node('DCGM_FI_DEV_GPU_TEMP')})",
               "{{Hostname}} GPU {{gpu}}", "celsius", 0, 16),
        _panel(6, "Power draw per node",
               f"sum by (Hostname) ({by_node('DCGM_FI_DEV_POWER_USAGE')})",
               "{{Hostname}}", "watt", 12, 16),
        _panel(7, "Last XID error",
               f"max by (Hostname, gpu) ({by_node('DCGM_FI_DEV_XID_ERRORS')})",
               "{{Hostname}} GPU {{gpu}}", "none", 0, 24),
    ]  # fmt: skip
    if profiling:
        panels.append(
            _panel(
                8,
                "Tensor-core activity per pod",
                'avg by (namespace, pod) (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{pod!=""})',
                "{{namespace}}/{{pod}}",
                "percentunit",
                12,
                24,
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
                }
            ]
        },
        "panels": panels,
    }
    return json.dumps(dashboard, indent=2, sort_keys=True)
