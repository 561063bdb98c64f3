"""The GPU alerts: schema-valid PrometheusRule, every rule run by `promtool test rules` over
synthetic series (one firing and one silent case each at least), and only the metrics and
labels the pinned dcgm-exporter really exports with the counters file the stack ships.

promtool comes from Debian's `prometheus` package (scripts/install-test-tools, which the
README's test command and CI run, unpacks the pinned one into .tools/); PROMTOOL names another
one. A missing promtool fails these tests: it never skips them.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import promql_parser
import pytest
import yaml

from components.kubernetes.dcgm_exporter import DCGM_EXPORTER_IMAGE
from components.kubernetes.dcgm_series import labels_of
from components.kubernetes.gpu_alerts import gpu_alerts, rule_groups
from components.settings import SettingsError, parse_settings
from components.settings.gpu_alerts import DEFAULT_ALERTS
from gpuinfra.engine import Plan, RecordedResource
from gpuinfra.manifests import manifests
from tests.conftest import BuildStack
from tests.kubernetes import crd_schemas

ROOT = Path(__file__).resolve().parents[2]
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
TRAINING = "training"
PINNED_TAG = "4.5.3-4.8.2"
"""The dcgm-exporter release dcgm_series.py describes: a new image tag must revisit it."""
FIELDS_FIXTURE = Path(__file__).parent / "fixtures" / "go-dcgm-fields.ec245c0.txt"
ALERTS = (
    "GpuUnderutilized",
    "GpuTemperatureHigh",
    "GpuXidError",
    "GpuDoubleBitEccErrors",
    "GpuMemoryNearlyFull",
    "GpuNodeIdle",
)


def _rule(plan: Plan) -> RecordedResource:
    [rule] = plan.of_type(RULE)
    return rule


def _alert_rules(plan: Plan) -> dict[str, dict[str, Any]]:
    return {
        r["alert"]: r for g in _rule(plan).inputs["spec"]["groups"] for r in g["rules"]
    }  # fmt: skip


# --- the PrometheusRule object -----------------------------------------------------------


def test_the_rule_comes_with_the_service_monitor(
    k8s_plan: Plan, dev_plan: Plan, build_stack_plan: BuildStack
) -> None:
    """Only where the Prometheus operator is (monitoringPrometheusOperator), selected like
    the ServiceMonitor (`release`), and off with gpuAlerts: false."""
    rule = _rule(k8s_plan).inputs
    assert rule["metadata"]["namespace"] == "gpu-system"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert sorted(_alert_rules(k8s_plan)) == sorted(ALERTS)
    assert dev_plan.of_type(RULE) == []  # dev: no Prometheus operator
    assert build_stack_plan("k8s-dev", {"gpuAlerts": False}).of_type(RULE) == []
    mine = build_stack_plan("k8s-dev", {"monitoringPrometheusRelease": "prom"})
    assert _rule(mine).inputs["metadata"]["labels"]["release"] == "prom"


def test_the_rule_waits_for_the_chart_that_brings_its_crd(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("k8s-dev", {"monitoringKubePrometheusStack": True})
    [chart] = plan.of_type("kubernetes:helm.sh/v3:Release")
    assert chart.urn in _rule(plan).dependencies
    spec = chart.inputs["values"]["prometheus"]["prometheusSpec"]
    assert spec["ruleSelectorNilUsesHelmValues"] is False  # rules from every namespace


def test_rules_validate_against_the_prometheus_rule_crd(k8s_plan: Plan) -> None:
    [obj] = [o for o in manifests(k8s_plan) if o["kind"] == "PrometheusRule"]
    crd_schemas.validate(obj)
    broken = copy.deepcopy(obj)
    broken["spec"]["groups"][0]["rules"][0]["for"] = "30 minutes"
    with pytest.raises(jsonschema.ValidationError, match="does not match"):
        crd_schemas.validate(broken)
    misspelled = copy.deepcopy(obj)
    misspelled["spec"]["groups"][0]["rules"][0]["annotation"] = {}
    with pytest.raises(jsonschema.ValidationError, match="annotation"):
        crd_schemas.validate(misspelled)


def test_every_alert_says_what_to_do(k8s_plan: Plan) -> None:
    for name, rule in _alert_rules(k8s_plan).items():
        assert rule["labels"]["severity"] in ("warning", "critical"), name
        text = rule["annotations"]["description"]
        assert len(text) > 200, name
        assert re.search(r"\b(drain|Lower|Speed up|Find what keeps)\b", text), name
    assert _alert_rules(k8s_plan)["GpuXidError"]["labels"]["severity"] == "critical"


# --- settings: thresholds and durations ----------------------------------------------------


def test_thresholds_and_durations_come_from_settings(
    k8s_plan: Plan, build_stack_plan: BuildStack
) -> None:
    rules = _alert_rules(k8s_plan)
    assert rules["GpuUnderutilized"]["expr"].endswith("< 70")
    assert rules["GpuUnderutilized"]["for"] == "30m"
    assert rules["GpuTemperatureHigh"]["expr"].endswith("> 85")
    assert rules["GpuTemperatureHigh"]["for"] == "5m"
    assert rules["GpuMemoryNearlyFull"]["expr"].endswith("> 95")
    assert rules["GpuNodeIdle"]["for"] == "20m"  # Cluster Autoscaler's 10 min + 10
    assert "for" not in rules["GpuXidError"] and "for" not in rules["GpuDoubleBitEccErrors"]
    changed = _alert_rules(
        build_stack_plan(
            "k8s-dev",
            {
                "gpuAlertUtilizationPercent": 50,
                "gpuAlertUtilizationMinutes": 60,
                "gpuAlertTemperatureCelsius": 80,
                "gpuAlertTemperatureMinutes": 2,
                "gpuAlertMemoryPercent": 90,
                "gpuAlertMemoryMinutes": 30,
                "gpuAlertIdleNodeMinutes": 45,
            },
        )
    )
    assert changed["GpuUnderutilized"]["expr"].endswith("< 50")
    assert changed["GpuUnderutilized"]["for"] == "60m"
    assert changed["GpuTemperatureHigh"]["expr"].endswith("> 80")
    assert changed["GpuTemperatureHigh"]["for"] == "2m"
    assert changed["GpuMemoryNearlyFull"]["expr"].endswith("> 90")
    assert changed["GpuMemoryNearlyFull"]["for"] == "30m"
    assert changed["GpuNodeIdle"]["for"] == "45m"
    assert "under 50 %" in changed["GpuUnderutilized"]["annotations"]["description"]


REGION = {"aws:region": "us-east-1"}
AWS = {"gpuPoolInstanceType": "g5.xlarge", "gpuLayer": "separate"}


def test_idle_node_alert_waits_past_the_stacks_scale_down_delay() -> None:
    settings = parse_settings(
        {**AWS, "gpuPoolScaleDownDelayMinutes": "30"}, stack="dev", provider_config=REGION
    )
    assert settings.gpu_layer.alerts.idle_node_minutes == 40
    kept = parse_settings(
        {**AWS, "gpuPoolMinNodes": "1", "gpuPoolDesiredNodes": "1"},
        stack="dev",
        provider_config=REGION,
    )
    assert kept.gpu_layer.alerts.min_gpu_nodes == 1
    with pytest.raises(SettingsError) as caught:
        parse_settings(
            {**AWS, "gpuPoolScaleDownDelayMinutes": "30", "gpuAlertIdleNodeMinutes": "25"},
            stack="dev",
            provider_config=REGION,
        )
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuinfra:gpuAlertIdleNodeMinutes = 25")
    assert "more than gpuPoolScaleDownDelayMinutes (30)" in problem


def test_out_of_range_alert_settings_are_refused_together() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings(
            {
                **AWS,
                "gpuAlertUtilizationPercent": "0",
                "gpuAlertTemperatureCelsius": "200",
                "gpuAlertMemoryPercent": "101",
                "gpuAlertUtilizationMinutes": "1",
            },
            stack="dev",
            provider_config=REGION,
        )
    names = sorted(str(p).split(" = ")[0] for p in caught.value.problems)
    assert names == [
        "gpuinfra:gpuAlertMemoryPercent",
        "gpuinfra:gpuAlertTemperatureCelsius",
        "gpuinfra:gpuAlertUtilizationMinutes",
        "gpuinfra:gpuAlertUtilizationPercent",
    ]


# --- the alerts use what the pinned exporter exports ---------------------------------------


def _selectors(node: Any) -> list[Any]:
    """Every vector selector in a parsed PromQL expression."""
    if isinstance(node, promql_parser.VectorSelector):
        return [node]
    found: list[Any] = []
    for attr in ("lhs", "rhs", "expr", "vector_selector", "args", "param"):
        child = getattr(node, attr, None)
        if child is None:
            continue
        for item in child if isinstance(child, list | tuple) else [child]:
            found += _selectors(item)
    return found


def _grouping_labels(node: Any) -> set[str]:
    """Labels named in `by (...)`, `without (...)` and `on (...)`/`ignoring (...)`."""
    labels: set[str] = set()
    modifier = getattr(node, "modifier", None)
    if modifier is not None:
        labels |= set(getattr(modifier, "labels", None) or [])
        matching = getattr(modifier, "matching", None)
        if matching is not None:
            labels |= set(getattr(matching, "labels", None) or [])
        labels |= set(getattr(modifier, "group_labels", None) or [])
    for attr in ("lhs", "rhs", "expr", "args"):
        child = getattr(node, attr, None)
        if child is None:
            continue
        for item in child if isinstance(child, list | tuple) else [child]:
            labels |= _grouping_labels(item)
    return labels


def _metric_and_labels(expr: str) -> tuple[dict[str, set[str]], set[str]]:
    """Metric name -> label names it is matched on; and the grouping labels."""
    tree = promql_parser.parse(expr)
    found: dict[str, set[str]] = {}
    for selector in _selectors(tree):
        names = {m.name for m in selector.matchers.matchers}
        found.setdefault(selector.name, set()).update(names)
    return found, _grouping_labels(tree)


def _go_dcgm_fields() -> set[str]:
    lines = FIELDS_FIXTURE.read_text().splitlines()
    return {line.split()[0] for line in lines if line and not line.startswith("#")}


def _shipped_counters(plan: Plan) -> list[str]:
    [counters] = [
        r for r in plan.of_type(CONFIGMAP)
        if r.inputs["metadata"]["name"] == "dcgm-exporter-counters"
    ]  # fmt: skip
    rows = [
        line.split(",")[0].strip()
        for line in counters.inputs["data"]["counters.csv"].splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return rows


def test_parser_finds_metrics_and_labels() -> None:
    """The walk below must see into aggregations, functions, binary operators and `on`."""
    metrics, grouping = _metric_and_labels(
        'max by (a) (avg_over_time(X{b="1"}[5m])) > 3 unless on (c) count(Y{d=~"x"})'
    )
    assert metrics == {"X": {"b"}, "Y": {"d"}}
    assert grouping == {"a", "c"}
    _, joined = _metric_and_labels("X * on (e) group_left (f) count by (e) (Y)")
    assert joined == {"e", "f"}


def test_alerts_use_only_what_the_pinned_exporter_exports(build_stack_plan: BuildStack) -> None:
    """Each metric is a field of the counters file this stack ships, a field the pinned
    exporter's go-dcgm knows (else the exporter refuses the file); each label is one that
    exporter writes on that field's series or that the scrape adds (dcgm_series.py)."""
    assert DCGM_EXPORTER_IMAGE.split(":")[1].startswith(PINNED_TAG + "-")
    known = _go_dcgm_fields()
    for profiling in (False, True):
        plan = build_stack_plan("k8s-dev", {"dcgmProfilingMetrics": profiling})
        shipped = _shipped_counters(plan)
        assert set(shipped) <= known, set(shipped) - known
        for name, rule in _alert_rules(plan).items():
            metrics, grouping = _metric_and_labels(rule["expr"])
            assert metrics, name
            allowed: set[str] = set()
            for metric, matched in metrics.items():
                assert metric in shipped, f"{name}: {metric} is not in the counters file"
                labels = labels_of(metric)
                assert matched - {"__name__"} <= labels, (name, metric, matched - labels)
                allowed |= labels
            assert grouping <= allowed, (name, grouping - allowed)


def test_the_tie_fails_for_a_field_the_stack_does_not_ship(k8s_plan: Plan) -> None:
    """Broken on purpose: an alert on a field left out of the counters file is caught."""
    shipped = _shipped_counters(k8s_plan)
    metrics, _ = _metric_and_labels("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL > 0")
    assert not set(metrics) <= set(shipped)
    assert "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL" in _go_dcgm_fields()
    assert "DCGM_FI_DEV_NO_SUCH_FIELD" not in _go_dcgm_fields()
    assert "hostname" not in labels_of("DCGM_FI_DEV_GPU_TEMP")  # main's spelling, not 4.8.2's


# --- promtool: each rule over synthetic series ----------------------------------------------


def _promtool() -> str:
    for candidate in (
        os.environ.get("PROMTOOL"),
        str(ROOT / ".tools" / "promtool"),
        shutil.which("promtool"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail(
        "promtool not found: the alert rule tests run it. `sh scripts/install-test-tools` "
        "(Debian/Ubuntu) puts the pinned one in .tools/, or set PROMTOOL to a promtool binary"
    )


def _pinned_promtool_version() -> str:
    script = (ROOT / "scripts" / "install-test-tools").read_text()
    [version] = re.findall(r"^PROMTOOL_VERSION=([0-9.]+)$", script, re.MULTILINE)
    return version


def test_the_tests_run_the_pinned_promtool() -> None:
    """What CI ran is what scripts/install-test-tools pins (PROMTOOL may name another)."""
    if os.environ.get("PROMTOOL"):
        return
    first = subprocess.run(
        [_promtool(), "--version"], capture_output=True, text=True, timeout=30
    ).stdout.splitlines()[0]
    version = _pinned_promtool_version()
    assert re.search(rf"version {re.escape(version)}([+ ]|$)", first), (version, first)


SCRAPE = {"job": "dcgm-exporter", "service": "dcgm-exporter", "endpoint": "metrics"}
XID_TEXT = {0: "No Error", 31: "GPU memory page fault", 79: "GPU has fallen off the bus"}
"""internal/pkg/collector/xid_errors.go:21,52,100 at 4.5.3-4.8.2 (the err_msg label)."""


def series(field: str, node: str, gpu: int, pod: str | None = None, **extra: str) -> dict[str, str]:
    """The labels of one scraped series, as Prometheus stores it: the exporter's GPU labels,
    the pod's where one holds the GPU, else the exporter's own target labels (honorLabels
    only keeps labels the exporter wrote)."""
    labels = {
        "__name__": field,
        "gpu": str(gpu),
        "UUID": f"GPU-{node}-{gpu}",
        "pci_bus_id": f"00000000:{gpu + 1:02X}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA A10G",
        "Hostname": node,
        "instance": f"{node}:9400",
        **SCRAPE,
        **extra,
    }
    if pod is None:
        labels |= {"pod": f"dcgm-exporter-{node}", "namespace": "gpu-system"}
        labels["container"] = "dcgm-exporter"
    else:
        labels |= {"pod": pod, "namespace": TRAINING, "container": "trainer"}
    unknown = set(labels) - {"__name__"} - labels_of(field)
    assert not unknown, f"{field} never carries {unknown}"
    return labels


def xid(node: str, gpu: int, code: int, pod: str | None = None) -> dict[str, str]:
    return series(
        "DCGM_FI_DEV_XID_ERRORS", node, gpu, pod, err_code=str(code), err_msg=XID_TEXT[code]
    )


def _selector(labels: Mapping[str, str]) -> str:
    name = labels["__name__"]
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{inner}}}"


@dataclasses.dataclass
class Case:
    """One promtool test: series, and for one alert what fires at `at` (empty: nothing)."""

    alert: str
    why: str
    inputs: list[tuple[dict[str, str], str]]
    at: str
    fires: list[tuple[dict[str, str], float]]
    """Each firing alert's labels (besides alertname and severity) and its value."""


def _render(template: str, labels: Mapping[str, str], value: float) -> str:
    """The two template forms the rules use, rendered as Prometheus does."""
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)
    text = text.replace('{{ printf "%.0f" $value }}', f"{value:.0f}")
    assert "{{" not in text, f"a template form this test does not render: {text}"
    return text


def _test_entry(case: Case, rules: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    rule = rules[case.alert]
    expected = []
    for labels, value in case.fires:
        full = {**labels, **rule["labels"]}
        expected.append(
            {
                "exp_labels": full,
                "exp_annotations": {
                    k: _render(v, full, value) for k, v in rule["annotations"].items()
                },
            }
        )
    return {
        "name": f"{case.alert}: {case.why}",
        "interval": "30s",
        "input_series": [
            {"series": _selector(labels), "values": values} for labels, values in case.inputs
        ],
        "alert_rule_test": [
            {"eval_time": case.at, "alertname": case.alert, "exp_alerts": expected}
        ],
    }


def _gpu(node: str, gpu: int = 0) -> dict[str, str]:
    """Labels an alert keeps for one GPU (`max by (Hostname, gpu, UUID, modelName)`)."""
    return {
        "Hostname": node,
        "gpu": str(gpu),
        "UUID": f"GPU-{node}-{gpu}",
        "modelName": "NVIDIA A10G",
    }


UTIL, TEMP = "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP"
USED, FREE = "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"
DBE = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
POD = "resnet50-single-x7k2p"
# Samples every 30 s: 120 of them are an hour.
CASES = [
    Case("GpuUnderutilized", "a training pod at 40 % for an hour",
         [(series(UTIL, "n1", 0, POD), "40x120")], "45m",
         [({"namespace": TRAINING, "pod": POD, "Hostname": "n1"}, 40)]),
    Case("GpuUnderutilized", "two GPUs of one pod averaged: 20 % and 90 %",
         [(series(UTIL, "n1", 0, POD), "20x120"), (series(UTIL, "n1", 1, POD), "90x120")],
         "45m", [({"namespace": TRAINING, "pod": POD, "Hostname": "n1"}, 55)]),
    Case("GpuUnderutilized", "silent: a busy training pod",
         [(series(UTIL, "n1", 0, POD), "90x120")], "45m", []),
    Case("GpuUnderutilized", "silent: an idle GPU no training pod holds",
         [(series(UTIL, "n1", 0), "0x120")], "45m", []),
    Case("GpuUnderutilized", "silent: 10 minutes of start-up at 0 %, then busy",
         [(series(UTIL, "n1", 0, POD), "0x20 95x100")], "45m", []),
    Case("GpuUnderutilized", "silent: low for 20 minutes only (under the 30 needed)",
         [(series(UTIL, "n1", 0, POD), "90x20 40x40 90x60")], "45m", []),
    Case("GpuTemperatureHigh", "90 °C for 10 minutes",
         [(series(TEMP, "n1", 0, POD), "90x30")], "10m", [(_gpu("n1"), 90)]),
    Case("GpuTemperatureHigh", "silent: 80 °C",
         [(series(TEMP, "n1", 0), "80x30")], "10m", []),
    Case("GpuTemperatureHigh", "silent: 90 °C for 3 minutes, then 70",
         [(series(TEMP, "n1", 0), "90x6 70x24")], "10m", []),
    Case("GpuXidError", "XID 79 after 5 quiet minutes",
         [(xid("n1", 0, 0), "0x10 _x20"), (xid("n1", 0, 79), "_x10 79x20")], "8m",
         [({**_gpu("n1"), "err_code": "79", "err_msg": XID_TEXT[79]}, 79)]),
    Case("GpuXidError", "XID 31 on a training pod's GPU",
         [(xid("n2", 3, 31, POD), "31x20")], "1m",
         [({**_gpu("n2", 3), "err_code": "31", "err_msg": XID_TEXT[31]}, 31)]),
    Case("GpuXidError", "silent: no XID (0)",
         [(xid("n1", 0, 0), "0x30")], "10m", []),
    Case("GpuDoubleBitEccErrors", "2 double-bit errors",
         [(series(DBE, "n1", 0, POD), "0x10 2x20")], "8m", [(_gpu("n1"), 2)]),
    Case("GpuDoubleBitEccErrors", "silent: none",
         [(series(DBE, "n1", 0, POD), "0x30")], "10m", []),
    Case("GpuMemoryNearlyFull", "a training pod at 98 % for 20 minutes",
         [(series(USED, "n1", 0, POD), "22000x40"), (series(FREE, "n1", 0, POD), "448x40")],
         "20m", [({"namespace": TRAINING, "pod": POD, "Hostname": "n1", "gpu": "0",
                   "modelName": "NVIDIA A10G"}, 100 * 22000 / 22448)]),
    Case("GpuMemoryNearlyFull", "silent: half full",
         [(series(USED, "n1", 0, POD), "11000x40"), (series(FREE, "n1", 0, POD), "11448x40")],
         "20m", []),
    Case("GpuMemoryNearlyFull", "silent: 98 % for 10 minutes only",
         [(series(USED, "n1", 0, POD), "22000x20 11000x20"),
          (series(FREE, "n1", 0, POD), "448x20 11448x20")], "12m", []),
    Case("GpuNodeIdle", "a node whose GPUs no training pod holds for 30 minutes",
         [(series(UTIL, "n1", 0), "0x60"), (series(UTIL, "n1", 1), "0x60"),
          (series(UTIL, "n2", 0, POD), "90x60")],
         "25m", [({"Hostname": "n1"}, 2)]),
    Case("GpuNodeIdle", "silent: a training pod arrives after 15 minutes",
         [(series(UTIL, "n1", 0), "0x30 _x30"), (series(UTIL, "n1", 0, POD), "_x30 90x30")],
         "25m", []),
    Case("GpuNodeIdle", "silent: idle for 15 minutes only (under the 20 needed)",
         [(series(UTIL, "n1", 0), "0x30")], "15m", []),
]  # fmt: skip


def _run_promtool(tmp_path: Path, groups: list[dict[str, Any]], tests: list[dict[str, Any]]) -> str:
    rules = tmp_path / "gpu-alerts.yaml"
    rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False, allow_unicode=True))
    tool = _promtool()
    check = subprocess.run(
        [tool, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr
    suite = tmp_path / "gpu-alerts.test.yaml"
    suite.write_text(
        yaml.safe_dump(
            {"rule_files": [rules.name], "evaluation_interval": "30s", "tests": tests},
            sort_keys=False,
            allow_unicode=True,
        )
    )
    result = subprocess.run(
        [tool, "test", "rules", suite.name],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return output


def test_every_alert_has_firing_and_silent_cases() -> None:
    for name in ALERTS:
        cases = [c for c in CASES if c.alert == name]
        assert any(c.fires for c in cases) and any(not c.fires for c in cases), name


def test_promtool_runs_every_alert_of_the_shipped_rule(k8s_plan: Plan, tmp_path: Path) -> None:
    groups = _rule(k8s_plan).inputs["spec"]["groups"]
    output = _run_promtool(
        tmp_path, groups, [_test_entry(c, _alert_rules(k8s_plan)) for c in CASES]
    )
    assert "SUCCESS" in output


def test_promtool_catches_a_wrong_expectation(k8s_plan: Plan, tmp_path: Path) -> None:
    """Broken on purpose: expecting the start-up case to fire must fail promtool."""
    case = next(c for c in CASES if "start-up" in c.why)
    wrong = dataclasses.replace(
        case, fires=[({"namespace": TRAINING, "pod": POD, "Hostname": "n1"}, 95)]
    )
    groups = _rule(k8s_plan).inputs["spec"]["groups"]
    with pytest.raises(AssertionError, match="FAILED"):
        _run_promtool(tmp_path, groups, [_test_entry(wrong, _alert_rules(k8s_plan))])


def test_idle_nodes_beyond_the_pools_minimum(tmp_path: Path) -> None:
    """A pool that keeps one node: one idle node is expected, a second one alerts (both are
    listed: which one the autoscaler keeps is its choice)."""
    settings = dataclasses.replace(DEFAULT_ALERTS, min_gpu_nodes=1)
    groups = rule_groups(gpu_alerts(settings, TRAINING))
    rules = {r["alert"]: r for r in groups[0]["rules"]}
    one = Case("GpuNodeIdle", "silent: one idle node, the pool's minimum",
               [(series(UTIL, "n1", 0), "0x60"), (series(UTIL, "n2", 0, POD), "90x60")],
               "25m", [])  # fmt: skip
    two = Case("GpuNodeIdle", "two idle nodes, one more than the minimum",
               [(series(UTIL, "n1", 0), "0x60"), (series(UTIL, "n2", 0), "0x60")],
               "25m", [({"Hostname": "n1"}, 1), ({"Hostname": "n2"}, 1)])  # fmt: skip
    assert "SUCCESS" in _run_promtool(
        tmp_path, groups, [_test_entry(one, rules), _test_entry(two, rules)]
    )


def test_pod_not_empty_would_count_idle_gpus_as_training(k8s_plan: Plan, tmp_path: Path) -> None:
    """Why the rules select the training namespace: through the ServiceMonitor an idle GPU's
    series carry the exporter's own pod, so `pod!=""` matches every GPU and the idle one
    "underperforms" (promtool fails the silent case)."""
    groups = copy.deepcopy(_rule(k8s_plan).inputs["spec"]["groups"])
    rule = next(r for r in groups[0]["rules"] if r["alert"] == "GpuUnderutilized")
    rule["expr"] = rule["expr"].replace(f'namespace="{TRAINING}"', 'pod!=""')
    idle = next(c for c in CASES if "idle GPU" in c.why)
    with pytest.raises(AssertionError, match="FAILED"):
        _run_promtool(tmp_path, groups, [_test_entry(idle, _alert_rules(k8s_plan))])


# --- the dashboard: the alerts' panels and a per-Job view ------------------------------------


def _dashboard(plan: Plan) -> dict[str, Any]:
    import json

    [board] = [
        r for r in plan.of_type(CONFIGMAP)
        if r.inputs["metadata"]["labels"].get("grafana_dashboard") == "1"
    ]  # fmt: skip
    return dict(json.loads(board.inputs["data"]["gpuinfra-gpus.json"]))


def _panels(board: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for p in board["panels"] if p["type"] != "row"]


def _grafana_to_promql(expr: str) -> str:
    """A panel's query as Prometheus receives it (Grafana's variables filled in)."""
    return (
        expr.replace("${job}", "resnet50-single")
        .replace("$job", "resnet50-single")
        .replace("$__range", "6h")
    )


def test_every_dashboard_query_is_promql(build_stack_plan: BuildStack) -> None:
    for profiling in (False, True):
        board = _dashboard(build_stack_plan("k8s-dev", {"dcgmProfilingMetrics": profiling}))
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids))
        for panel in _panels(board):
            for target in panel["targets"]:
                promql_parser.parse(_grafana_to_promql(target["expr"]))
        for variable in board["templating"]["list"][1:]:
            promql_parser.parse(variable["query"].removeprefix("label_values(").split(", ")[0])
    with pytest.raises(ValueError):
        promql_parser.parse("avg by (pod (DCGM_FI_DEV_GPU_UTIL)")


def test_each_alert_has_a_panel_with_its_threshold(
    k8s_plan: Plan, build_stack_plan: BuildStack
) -> None:
    def thresholds(board: Mapping[str, Any]) -> dict[str, float]:
        found = {}
        for panel in _panels(board):
            steps = panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", [])
            for alert in ALERTS:
                if alert in panel.get("description", ""):
                    found[alert] = steps[-1]["value"] if steps else None
        return found

    board = _dashboard(k8s_plan)
    shown = thresholds(board)
    assert sorted(shown) == sorted(ALERTS)
    assert shown["GpuUnderutilized"] == 70
    assert shown["GpuTemperatureHigh"] == 85
    assert shown["GpuMemoryNearlyFull"] == 95
    for panel in _panels(board):
        for alert in ALERTS:
            if alert in panel.get("description", ""):
                rule_metrics, _ = _metric_and_labels(_alert_rules(k8s_plan)[alert]["expr"])
                exprs = " ".join(t["expr"] for t in panel["targets"])
                assert all(m in exprs for m in rule_metrics), (alert, panel["title"])
    changed = thresholds(
        _dashboard(
            build_stack_plan(
                "k8s-dev", {"gpuAlertTemperatureCelsius": 80, "gpuAlertUtilizationPercent": 50}
            )
        )
    )
    assert changed["GpuTemperatureHigh"] == 80 and changed["GpuUnderutilized"] == 50


def test_per_job_view_follows_the_jobs_pods(k8s_plan: Plan) -> None:
    """The `job` variable turns pod names back into Job names; the Job's panels select its
    pods only: utilisation, memory and power over the time range."""
    board = _dashboard(k8s_plan)
    [variable] = [v for v in board["templating"]["list"] if v["name"] == "job"]
    assert variable["query"] == 'label_values(DCGM_FI_DEV_GPU_UTIL{namespace="training"}, pod)'
    to_job = re.compile(variable["regex"].strip("/"))
    pods = {
        "resnet50-single-x7k2p": "resnet50-single",  # NonIndexed: <job>-<5>
        "resnet50-two-nodes-1-b4z9q": "resnet50-two-nodes",  # Indexed: <job>-<index>-<5>
        "resnet50-two-nodes-0-qq2mw": "resnet50-two-nodes",
    }
    for pod, job in pods.items():
        match = to_job.match(pod)
        assert match and match.group(1) == job, pod
    job_panels = [p for p in _panels(board) if p["title"].startswith("Job ")]
    titles = " ".join(p["title"] for p in job_panels)
    for what in ("utilization", "memory", "power"):
        assert what in titles
    for panel in job_panels:
        for target in panel["targets"]:
            assert 'pod=~"${job}-([0-9]+-)?[a-z0-9]{5}"' in target["expr"]
    # Prometheus anchors the pattern: one Job's selector does not take another Job's pods.
    pattern = re.compile(r"resnet50-([0-9]+-)?[a-z0-9]{5}")
    assert pattern.fullmatch("resnet50-x7k2p") and pattern.fullmatch("resnet50-3-x7k2p")
    assert not pattern.fullmatch("resnet50-two-nodes-1-b4z9q")
