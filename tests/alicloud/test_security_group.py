"""Admin security group: 22/8888/6006 from admin networks only; nothing when there are none."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.alicloud.conftest import STACK
from tests.conftest import build

RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
GROUP = "alicloud:ecs/securityGroup:SecurityGroup"


def test_one_rule_per_port_from_the_admin_network(ali_plan: Plan) -> None:
    rules = ali_plan.of_type(RULE)
    assert sorted(r.inputs["portRange"] for r in rules) == ["22/22", "6006/6006", "8888/8888"]
    group = ali_plan.one(GROUP)
    for rule in rules:
        assert rule.inputs["type"] == "ingress"
        assert rule.inputs["ipProtocol"] == "tcp"
        assert rule.inputs["cidrIp"] == "203.0.113.0/24"
        assert rule.inputs["policy"] == "accept"
        assert rule.inputs["securityGroupId"] == group.id
        assert "admin network 203.0.113.0/24" in rule.inputs["description"]


def test_no_ingress_from_anywhere(ali_plan: Plan) -> None:
    for rule in ali_plan.of_type(RULE):
        assert rule.inputs.get("cidrIp") not in ("0.0.0.0/0", None)
        assert rule.inputs.get("ipv6CidrIp") != "::/0"


def test_no_admin_networks_means_no_rules() -> None:
    plan = build(STACK, {"adminCidrs": []})
    assert plan.of_type(RULE) == []
    assert len(plan.of_type(GROUP)) == 1


def test_ipv6_admin_network() -> None:
    plan = build(STACK, {"adminCidrs": ["2001:db8::/48"]})
    rules = plan.of_type(RULE)
    assert len(rules) == 3
    assert all(
        r.inputs["ipv6CidrIp"] == "2001:db8::/48" and "cidrIp" not in r.inputs for r in rules
    )


def test_nodes_join_only_acks_advanced_cluster_group(ali_plan: Plan) -> None:
    """Finding 1: nodes run no SSH/Jupyter/TensorBoard, and ECS refuses an instance in a
    basic and an advanced group at once: the admin group (basic, said so) is not theirs."""
    admin = ali_plan.one(GROUP)
    assert admin.inputs["securityGroupType"] == "normal"
    cluster = ali_plan.one("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert cluster.inputs["isEnterpriseSecurityGroup"] is True
    for pool in ali_plan.of_type("alicloud:cs/nodePool:NodePool"):
        assert pool.inputs["securityGroupIds"] == [cluster.outputs["securityGroupId"]]
