"""Network: subnets in zones that sell the GPU type, NAT egress, nodes only in private subnets."""

from __future__ import annotations

import pytest

from components.tencentcloud.network import zones_offering
from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import NODE_POOL, SUBNET, T, build_tc

NAT = T + "Nat/gateway:Gateway"
EIP = T + "Eip/instance:Instance"
ROUTE = T + "Route/tableEntry:TableEntry"


def test_zones_offering_keeps_only_zones_selling_the_type() -> None:
    offers = [
        ("GN7.2XLARGE32", "ap-guangzhou-6"),
        ("GN7.5XLARGE80", "ap-guangzhou-3"),
        ("GN7.2XLARGE32", "ap-guangzhou-4"),
        ("GN7.2XLARGE32", "ap-guangzhou-6"),
    ]
    assert zones_offering(offers, "GN7.2XLARGE32") == ["ap-guangzhou-4", "ap-guangzhou-6"]


def test_looked_up_zones_cannot_move_a_subnet(tc_plan: Plan) -> None:
    """Finding 7: zones come from a lookup of the zones offering the type (sold out or not, so
    the list holds still), an existing subnet ignores a later answer, and the preview says so."""
    subnets = sorted(tc_plan.of_type(SUBNET), key=lambda s: s.name)
    assert all("availabilityZone" in s.ignore_changes for s in subnets)
    # The mock sells no spot GPUs in ap-guangzhou-3 today: the zone stays in the list.
    assert [s.inputs["availabilityZone"] for s in subnets] == ["ap-guangzhou-3", "ap-guangzhou-4"]
    assert tc_plan.outputs["zones"] == ["ap-guangzhou-3", "ap-guangzhou-4"]
    assert tc_plan.outputs["zoneSource"].startswith("lookup of zones offering GN7.2XLARGE32")
    assert "gpuinfra:tkeZones" in tc_plan.outputs["zoneSource"]


def test_pinned_zones_come_from_settings() -> None:
    plan = build_tc({"tkeZones": ["ap-guangzhou-6", "ap-guangzhou-7"], "natGateways": "perAz"})
    subnets = sorted(plan.of_type(SUBNET), key=lambda s: s.name)
    assert [s.inputs["availabilityZone"] for s in subnets] == ["ap-guangzhou-6", "ap-guangzhou-7"]
    assert all(not s.ignore_changes for s in subnets)
    nats = sorted(plan.of_type(NAT), key=lambda n: n.name)
    assert [n.inputs["zone"] for n in nats] == ["ap-guangzhou-6", "ap-guangzhou-7"]
    assert plan.outputs["zones"] == ["ap-guangzhou-6", "ap-guangzhou-7"]
    assert plan.outputs["zoneSource"] == "settings (gpuinfra:tkeZones)"


def test_subnets_in_distinct_zones_of_the_region(tc_plan: Plan) -> None:
    subnets = tc_plan.of_type(SUBNET)
    zones = [s.inputs["availabilityZone"] for s in subnets]
    assert len(subnets) == 2 and len(set(zones)) == 2
    assert all(z.startswith("ap-guangzhou-") for z in zones)
    vpc = tc_plan.one(T + "Vpc/instance:Instance")
    assert {s.inputs["vpcId"] for s in subnets} == {vpc.id}
    assert sorted(s.inputs["cidrBlock"] for s in subnets) == ["10.0.0.0/19", "10.0.32.0/19"]


def test_nat_gateway_with_eip_is_the_default_route(tc_plan: Plan) -> None:
    nat = tc_plan.one(NAT)
    eip = tc_plan.one(EIP)
    assert nat.inputs["assignedEipSets"] == [eip.outputs["publicIp"]]
    route = tc_plan.one(ROUTE)
    assert route.inputs["destinationCidrBlock"] == "0.0.0.0/0"
    assert (route.inputs["nextType"], route.inputs["nextHub"]) == ("NAT", nat.id)
    table = tc_plan.one(T + "Route/table:Table")
    assert route.inputs["routeTableId"] == table.id
    assert {s.inputs["routeTableId"] for s in tc_plan.of_type(SUBNET)} == {table.id}


def test_nodes_have_no_public_ip_and_live_in_the_private_subnets(tc_plan: Plan) -> None:
    subnet_ids = {s.id for s in tc_plan.of_type(SUBNET)}
    for node_pool in tc_plan.of_type(NODE_POOL):
        assert set(node_pool.inputs["subnetIds"]) == subnet_ids
        launch = node_pool.inputs["autoScalingConfig"]
        assert launch["publicIpAssigned"] is False
        assert launch["internetMaxBandwidthOut"] == 0


def test_nat_per_zone() -> None:
    plan = build_tc({"natGateways": "perAz", "availabilityZoneCount": 3})
    assert len(plan.of_type(NAT)) == 3 and len(plan.of_type(EIP)) == 3
    tables = {s.inputs["routeTableId"] for s in plan.of_type(SUBNET)}
    assert len(tables) == 3


def test_too_few_zones_selling_the_type_is_a_clear_error() -> None:
    from components.tencentcloud.network import _nth

    offers = [("GT4.4XLARGE96", "SPOTPAID")]
    with pytest.raises(ValueError, match=r"availabilityZoneCount asks for 3.*gpuinfra:tkeZones"):
        _nth(2, offers)(["ap-shanghai-4", "ap-shanghai-5"])
    assert _nth(1, offers)(["ap-shanghai-4", "ap-shanghai-5"]) == "ap-shanghai-5"


def test_zones_offer_every_pools_type_its_way() -> None:
    """Each GPU pool spans every subnet: a zone must offer each pool's type with its charge
    type (dev: spot GN7.2XLARGE32 and pay-as-you-go GN7.20XLARGE320)."""
    from components.tencentcloud.network import _common_zones, _describe

    assert _common_zones([["gz-3", "gz-4", "gz-6"], ["gz-6", "gz-3"]]) == ["gz-3", "gz-6"]
    plan = build_tc()
    assert plan.outputs["zoneSource"] == (
        "lookup of zones offering GN7.2XLARGE32 (SPOTPAID) and GN7.20XLARGE320 "
        "(POSTPAID_BY_HOUR); pin: gpuinfra:tkeZones"
    )
    assert _describe([("A", "SPOTPAID")]) == "A (SPOTPAID)"
