"""Plan diff: no change against itself; a bigger GPU pool shows the path and a cost delta."""

from __future__ import annotations

import copy
import datetime as dt

from gpuinfra.diff import diff_plans, flatten, has_changes
from gpuinfra.render import plan_json
from tests.conftest import build

TODAY = dt.date(2026, 11, 30)


def test_flatten_paths() -> None:
    assert dict(flatten({"a": {"b": [1, {"c": 2}]}})) == {"a.b[0]": 1, "a.b[1].c": 2}


def test_plan_against_itself_has_no_change() -> None:
    plan = plan_json(build("dev"), "aws")
    d = diff_plans(plan, copy.deepcopy(plan), TODAY)
    assert not has_changes(d)
    assert set(d["cost"]["delta"].values()) == {0}


def test_larger_gpu_pool() -> None:
    base = plan_json(build("dev"), "aws")
    head = plan_json(build("dev", {"gpuPoolMaxNodes": 4}), "aws")
    d = diff_plans(base, head, TODAY)
    assert not d["added"] and not d["removed"]
    [group] = [c for c in d["changed"] if c["name"] == "gpuinfra-dev-gpu-nodes"]
    assert {"path": "scalingConfig.maxSize", "old": 2, "new": 4} in group["changes"]
    assert d["cost"]["delta"]["hourly_max"] > 0 and d["cost"]["delta"]["hourly_idle"] == 0


def test_added_and_removed() -> None:
    base = plan_json(build("dev"), "aws")
    head = plan_json(build("dev", {"natGateways": "perAz"}), "aws")
    d = diff_plans(base, head, TODAY)
    assert any(r["type"] == "aws:ec2/natGateway:NatGateway" for r in d["added"])
    assert d["cost"]["delta"]["monthly"] > 0
