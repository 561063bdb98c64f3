"""Security groups: admin ports only from adminCidrs, nothing from 0.0.0.0/0, nodes inside."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import RULE_SET, SECURITY_GROUP, build_tc, rules_of


def _open_to_world(rule: dict) -> bool:
    return rule.get("cidrBlock") == "0.0.0.0/0" or rule.get("ipv6CidrBlock") == "::/0"


def test_no_ingress_from_the_whole_internet(tc_plan: Plan) -> None:
    rule_sets = tc_plan.of_type(RULE_SET)
    assert len(rule_sets) == 3  # admin, nodes, public API endpoint
    for rule_set in rule_sets:
        assert not any(_open_to_world(r) for r in rule_set.inputs.get("ingresses") or [])


def test_admin_ports_only_from_admin_networks(tc_plan: Plan) -> None:
    ingresses = rules_of(tc_plan, "admin-sg").inputs["ingresses"]
    assert sorted(r["port"] for r in ingresses) == ["22", "6006", "8888"]
    assert {r["cidrBlock"] for r in ingresses} == {"203.0.113.0/24"}
    assert {(r["action"], r["protocol"]) for r in ingresses} == {("ACCEPT", "TCP")}


def test_no_admin_rule_without_admin_networks() -> None:
    plan = build_tc({"adminCidrs": [], "apiEndpointPublic": False, "gpuLayer": "separate"})
    admin = rules_of(plan, "admin-sg").inputs
    assert not admin.get("ingresses")


def test_ipv6_admin_network() -> None:
    plan = build_tc(
        {"adminCidrs": ["2001:db8::/48"], "apiEndpointPublic": False, "gpuLayer": "separate"}
    )
    ingresses = rules_of(plan, "admin-sg").inputs["ingresses"]
    assert {r["ipv6CidrBlock"] for r in ingresses} == {"2001:db8::/48"}
    assert not any(r.get("cidrBlock") for r in ingresses)


def test_nodes_accept_only_cluster_networks(tc_plan: Plan) -> None:
    nodes = rules_of(tc_plan, "nodes-sg").inputs
    assert {r["cidrBlock"] for r in nodes["ingresses"]} == {"10.0.0.0/16", "172.20.0.0/16"}
    assert [r["cidrBlock"] for r in nodes["egresses"]] == ["0.0.0.0/0"]


def test_every_rule_set_targets_its_group(tc_plan: Plan) -> None:
    groups = {g.name: g.id for g in tc_plan.of_type(SECURITY_GROUP)}
    for rule_set in tc_plan.of_type(RULE_SET):
        assert rule_set.inputs["securityGroupId"] == groups[rule_set.name.removesuffix("-rules")]
        assert rule_set.id == rule_set.inputs["securityGroupId"]  # the provider's SetId
