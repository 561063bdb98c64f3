"""AdminSecurityGroup: 22/8888/6006 from admin networks only; no rule when there are none."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.conftest import BuildStack

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0v8kqfZr3X0yq7xWQy1u3z you@laptop"
)

RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def test_one_rule_per_port_and_admin_network(dev_plan: Plan) -> None:
    rules = dev_plan.of_type(RULE)
    assert sorted((r.inputs["fromPort"], r.inputs["toPort"]) for r in rules) == [
        (22, 22),
        (6006, 6006),
        (8888, 8888),
    ]
    for rule in rules:
        assert rule.inputs["cidrIpv4"] == "203.0.113.0/24"
        assert rule.inputs["ipProtocol"] == "tcp"
        assert rule.inputs["description"]


def test_no_rule_is_open_to_the_world(dev_plan: Plan, prod_plan: Plan) -> None:
    for plan in (dev_plan, prod_plan):
        for rule in plan.of_type(RULE):
            assert rule.inputs.get("cidrIpv4") != "0.0.0.0/0"
            assert rule.inputs.get("cidrIpv6") != "::/0"
        for group in plan.of_type("aws:ec2/securityGroup:SecurityGroup"):
            assert not group.inputs.get("ingress")


def test_no_admin_networks_means_no_rules(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev", {"adminCidrs": [], "apiEndpointPublic": False, "gpuLayer": "separate"}
    )
    assert plan.of_type(RULE) == []
    assert len(plan.of_type("aws:ec2/securityGroup:SecurityGroup")) == 1


def test_ipv6_admin_network(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("dev", {"adminCidrs": ["203.0.113.0/24", "2001:db8::/48"]})
    v6 = [r for r in plan.of_type(RULE) if r.inputs.get("cidrIpv6")]
    assert len(v6) == 3 and all(r.inputs["cidrIpv6"] == "2001:db8::/48" for r in v6)
    assert all("cidrIpv4" not in r.inputs for r in v6)


def test_nodes_carry_only_the_cluster_security_group(dev_plan: Plan, prod_plan: Plan) -> None:
    """Nodes serve none of the admin ports: a launch template naming no group gets the cluster
    security group from EKS, and nothing else."""
    for plan in (dev_plan, prod_plan):
        for template in plan.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
            assert not template.inputs.get("vpcSecurityGroupIds"), template.name
            assert not template.inputs.get("networkInterfaces"), template.name


def test_workstation_keeps_the_admin_group(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev",
        {
            "workstationEnabled": True,
            "workstationSshPublicKey": SSH_KEY,
        },
    )
    admin = plan.one("aws:ec2/securityGroup:SecurityGroup", "gpuinfra-dev-admin-sg")
    instance = plan.one("aws:ec2/instance:Instance")
    assert admin.id in instance.inputs["vpcSecurityGroupIds"]
