"""The preview's cost estimate and the policy pack cover the Volcano Engine resource types."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from gpuinfra.cost import estimate, gpu_hour_price
from gpuinfra.engine import Plan
from gpuinfra.planview import from_plan
from gpuinfra.policy_rules import evaluate
from gpuinfra.policy_rules.model import Rule
from gpuinfra.policy_rules.network import cluster_endpoint_not_world_open, no_world_open_admin_ports
from gpuinfra.policy_rules.nodes import gpu_pool_tainted
from gpuinfra.policy_rules.storage import bucket_encrypted, bucket_private, bucket_versioned
from tests.volcengine.conftest import (
    BUCKET,
    BUCKET_ENCRYPTION,
    CLUSTER,
    EIP,
    NAT,
    NODE_POOL,
    PREFIX,
    SECURITY_GROUP,
)


def test_cost_has_a_line_per_billable_type_and_guesses_no_price(ve_plan: Plan) -> None:
    report = estimate(from_plan(ve_plan, "volcengine"), today=dt.date(2026, 11, 30))
    lines = {line.type: line for line in report.lines}
    assert set(lines) == {CLUSTER, NODE_POOL, NAT, EIP, BUCKET}
    pools = [line for line in report.lines if line.type == NODE_POOL]
    gpu = next(line for line in pools if line.resource == f"{PREFIX}-spot-pool")
    assert "GPU pool spot 0/0/2" in gpu.what and "(spot)" in gpu.what
    assert all(line.monthly is None and line.note for line in report.lines)
    assert report.unpriced["monthly"] == len(report.lines)
    price = gpu_hour_price(from_plan(ve_plan, "volcengine"), report.assumptions)
    assert price is not None and price.instance_type == "ecs.gni2.3xlarge" and price.usd is None


def test_the_dev_stack_passes_the_policy_pack(ve_plan: Plan) -> None:
    findings = evaluate(from_plan(ve_plan, "volcengine"))
    assert [f for f in findings if f.level == "mandatory"] == []


def _broken(plan: Plan, type_: str, name: str | None, change: Any) -> Plan:
    broken = copy.deepcopy(plan)
    for r in broken.resources:
        if r.type == type_ and (name is None or r.name == name):
            change(r)
    return broken


def _set(path: str, value: Any) -> Any:
    def change(r: Any) -> None:
        *parents, last = path.split(".")
        target = r.inputs
        for step in parents:
            target = target[int(step)] if step.isdigit() else target[step]
        target[int(last) if last.isdigit() else last] = value

    return change


@pytest.mark.parametrize(
    ("rule", "type_", "name", "change"),
    [
        (bucket_versioned, BUCKET, None, _set("enableVersionStatus", "Suspended")),
        (bucket_private, BUCKET, None, _set("aclGrant.acl", "public-read")),
        (bucket_encrypted, BUCKET_ENCRYPTION, None, _set("name", "another-bucket")),
        (gpu_pool_tainted, NODE_POOL, f"{PREFIX}-spot-pool", _set("kubernetesConfig.taints", [])),
        (
            no_world_open_admin_ports,
            SECURITY_GROUP,
            f"{PREFIX}-admin-sg",
            _set("ingressPermissions.0.cidrIp", "0.0.0.0/0"),
        ),
        (
            cluster_endpoint_not_world_open,
            CLUSTER,
            None,
            _set("clusterConfig.apiServerPublicAccessEnabled", True),
        ),
    ],
    ids=lambda v: getattr(v, "id", None) if isinstance(v, Rule) else None,
)
def test_policy_rule_finds_the_broken_volcengine_resource(
    ve_plan: Plan, rule: Rule, type_: str, name: str | None, change: Any
) -> None:
    assert rule.check(from_plan(ve_plan, "volcengine")) == []
    findings = rule.check(from_plan(_broken(ve_plan, type_, name, change), "volcengine"))
    assert len(findings) == 1
