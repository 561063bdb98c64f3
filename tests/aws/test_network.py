"""AwsNetwork: subnets in distinct zones, private nodes behind NAT, one or per-zone NAT, S3
through a gateway endpoint."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.conftest import BuildStack

SUBNET = "aws:ec2/subnet:Subnet"
NAT = "aws:ec2/natGateway:NatGateway"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"


def _subnets(plan: Plan, kind: str) -> list:
    """The stack's `kind` subnets by their index (`<name>-<kind>-<i>`), not by registration
    order, which the event loop may change when subnets are made inside an apply."""
    found = [s for s in plan.of_type(SUBNET) if f"-{kind}-" in s.name]
    return sorted(found, key=lambda s: int(s.name.rsplit("-", 1)[1]))


def test_public_and_private_subnets_in_two_zones(dev_plan: Plan) -> None:
    for kind in ("public", "private"):
        subnets = _subnets(dev_plan, kind)
        assert len(subnets) == 2
        # Placed by zone ID: the mock account's us-east-1b is use1-az3, which EKS refuses.
        zones = {s.inputs["availabilityZoneId"] for s in subnets}
        assert zones == {"use1-az6", "use1-az1"}
        assert "availabilityZone" not in subnets[0].inputs  # one of the two, never both
        assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in subnets)
    private_tags = [s.inputs["tags"] for s in _subnets(dev_plan, "private")]
    assert all(t["kubernetes.io/role/internal-elb"] == "1" for t in private_tags)


def test_private_subnets_route_through_nat_only(dev_plan: Plan) -> None:
    nat_ids = {n.id for n in dev_plan.of_type(NAT)}
    for table in dev_plan.of_type(ROUTE_TABLE):
        routes = table.inputs["routes"]
        assert [r["cidrBlock"] for r in routes] == ["0.0.0.0/0"]
        if "private" in table.name:
            assert routes[0]["natGatewayId"] in nat_ids and "gatewayId" not in routes[0]
        else:
            assert routes[0]["gatewayId"].startswith("igw-")


def test_dev_has_one_nat_gateway(dev_plan: Plan) -> None:
    nats = dev_plan.of_type(NAT)
    assert len(nats) == 1
    private_tables = [t for t in dev_plan.of_type(ROUTE_TABLE) if "private" in t.name]
    assert {t.inputs["routes"][0]["natGatewayId"] for t in private_tables} == {nats[0].id}


def test_prod_has_a_nat_gateway_per_zone(prod_plan: Plan) -> None:
    nats = prod_plan.of_type(NAT)
    assert len(nats) == 3
    public_ids = {s.id for s in _subnets(prod_plan, "public")}
    assert {n.inputs["subnetId"] for n in nats} == public_ids
    private_tables = [t for t in prod_plan.of_type(ROUTE_TABLE) if "private" in t.name]
    assert len({t.inputs["routes"][0]["natGatewayId"] for t in private_tables}) == 3


def test_default_security_group_is_emptied(dev_plan: Plan) -> None:
    group = dev_plan.one("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert not group.inputs.get("ingress") and not group.inputs.get("egress")


def test_s3_bypasses_nat_through_a_gateway_endpoint(dev_plan: Plan, prod_plan: Plan) -> None:
    """Every private route table, and only those, routes S3 to the free gateway endpoint."""
    for plan in (dev_plan, prod_plan):
        endpoint = plan.one("aws:ec2/vpcEndpoint:VpcEndpoint").inputs
        assert endpoint["serviceName"] == "com.amazonaws.us-east-1.s3"
        assert endpoint["vpcEndpointType"] == "Gateway"
        assert endpoint["vpcId"] == plan.one("aws:ec2/vpc:Vpc").id
        private = {t.id for t in plan.of_type(ROUTE_TABLE) if "private" in t.name}
        assert len(private) == len(_subnets(plan, "private"))
        assert sorted(endpoint["routeTableIds"]) == sorted(private)


@pytest.mark.parametrize(
    ("region", "refused", "expected"),
    [
        ("us-east-1", "use1-az3", ["use1-az6", "use1-az1", "use1-az2"]),
        ("us-west-1", "usw1-az2", ["usw1-az1", "usw1-az3"]),
        ("ca-central-1", "cac1-az3", ["cac1-az1", "cac1-az2"]),
    ],
)
def test_zones_eks_refuses_are_excluded_by_id(
    build_stack_plan: BuildStack, region: str, refused: str, expected: list[str]
) -> None:
    count = len(expected)
    plan = build_stack_plan("dev", {"aws:region": region, "availabilityZoneCount": count})
    zones = [s.inputs["availabilityZoneId"] for s in _subnets(plan, "private")]
    assert zones == expected and refused not in zones
