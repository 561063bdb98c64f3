"""`gpuinfra preview` lists the GPU alerts a stack gets, read from its plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpuinfra.alerts import NO_RULE_NOTE, alerts_note, stack_alerts
from gpuinfra.planview import from_json, from_plan
from gpuinfra.render import plan_json
from tests.conftest import build

ROOT = Path(__file__).resolve().parents[2]
ALERTS = (
    "GpuUnderutilized",
    "GpuTemperatureHigh",
    "GpuXidError",
    "GpuDoubleBitEccErrors",
    "GpuMemoryNearlyFull",
    "GpuNodeIdle",
)


def _preview(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_preview_lists_the_alerts_of_a_stack_with_the_operator() -> None:
    out = _preview("--stack", "k8s-dev")
    assert "GPU alerts (6, PrometheusRule gpu-system/gpuinfra-gpu-alerts):" in out
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines() if line[:3] == "Gpu"}
    assert sorted(rows) == sorted(ALERTS)
    assert rows["GpuUnderutilized"] == ["warning", "30m"]
    assert rows["GpuXidError"] == ["critical", "at"]  # "at once"
    assert rows["GpuNodeIdle"] == ["warning", "20m"]
    markdown = _preview("--stack", "k8s-dev", "--format", "markdown")
    assert "#### GPU alerts (6, PrometheusRule gpu-system/gpuinfra-gpu-alerts)" in markdown
    assert "| GpuTemperatureHigh | warning | 5m | `max by (Hostname, gpu, UUID, modelName)" in (
        markdown
    )
    doc = json.loads(_preview("--stack", "k8s-dev", "--json"))
    assert [a["alert"] for a in doc["alerts"]] == list(ALERTS)


def test_a_stack_without_the_operator_says_why_it_has_none() -> None:
    plan = build("dev")
    view = from_plan(plan, "aws")
    assert stack_alerts(view) == []
    assert alerts_note(view, []) == NO_RULE_NOTE
    with_operator = build("dev", {"monitoringPrometheusOperator": True})
    alerts = stack_alerts(from_plan(with_operator, "aws"))
    assert [a.alert for a in alerts] == list(ALERTS)
    assert alerts_note(from_plan(with_operator, "aws"), alerts) is None


def test_a_saved_plan_lists_the_same_alerts() -> None:
    plan = build("k8s-dev")
    live = stack_alerts(from_plan(plan, "kubernetes"))
    saved = stack_alerts(from_json(json.loads(json.dumps(plan_json(plan, "kubernetes")))))
    assert saved == live and len(saved) == 6
