"""Network: subnets in the pinned zones (never moved), one NAT gateway with an EIP, SNAT for
every subnet and a default route through the gateway."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.volcengine.conftest import EIP, NAT, PREFIX, ROUTE_TABLE, SNAT, SUBNET, VPC, build_ve


def test_subnets_sit_in_the_pinned_zones(ve_plan: Plan) -> None:
    subnets = sorted(ve_plan.of_type(SUBNET), key=lambda s: s.name)
    assert [s.inputs["zoneId"] for s in subnets] == ["cn-beijing-a", "cn-beijing-b"]
    assert [s.inputs["cidrBlock"] for s in subnets] == ["10.0.0.0/19", "10.0.32.0/19"]
    vpc = ve_plan.one(VPC)
    assert all(s.inputs["vpcId"] == vpc.outputs["vpcId"] for s in subnets)
    assert ve_plan.outputs["zones"] == ["cn-beijing-a", "cn-beijing-b"]


def test_three_zones_give_three_subnets_and_snat_entries() -> None:
    plan = build_ve(
        {"availabilityZoneCount": 3, "vkeZones": ["cn-beijing-a", "cn-beijing-b", "cn-beijing-c"]}
    )
    assert len(plan.of_type(SUBNET)) == 3
    assert len(plan.of_type(SNAT)) == 3


def test_nat_gateway_has_an_eip_and_every_subnet_routes_through_it(ve_plan: Plan) -> None:
    nat = ve_plan.one(NAT)
    eip = ve_plan.one(EIP)
    assert eip.inputs["instanceId"] == nat.outputs["natGatewayId"]
    assert eip.inputs["instanceType"] == "Nat"
    subnet_ids = {s.outputs["subnetId"] for s in ve_plan.of_type(SUBNET)}
    snats = ve_plan.of_type(SNAT)
    assert {s.inputs["subnetId"] for s in snats} == subnet_ids
    assert {s.inputs["eipId"] for s in snats} == {eip.outputs["allocationId"]}
    table = ve_plan.one(ROUTE_TABLE, f"{PREFIX}-private-rt")
    assert set(table.inputs["subnetIds"]) == subnet_ids
    (route,) = table.inputs["customRouteEntries"]
    assert route["destinationCidrBlock"] == "0.0.0.0/0"
    assert (route["nextHopType"], route["nextHopId"]) == ("NatGW", nat.outputs["natGatewayId"])


def test_per_zone_nat_is_refused_with_the_reason() -> None:
    import pytest

    from components.settings import SettingsError

    with pytest.raises(SettingsError) as error:
        build_ve({"natGateways": "perAz"})
    (problem,) = error.value.problems
    assert problem.key == "gpuinfra:natGateways"
    assert "backup zone" in problem.allowed
