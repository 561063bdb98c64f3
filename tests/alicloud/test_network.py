"""Network: vSwitches in zones that sell the GPU type; egress is the NAT gateway ACK makes."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.alicloud.conftest import STACK
from tests.conftest import build

SWITCH = "alicloud:vpc/switch:Switch"


def test_vswitches_sit_in_zones_from_the_gpu_lookup(ali_plan: Plan) -> None:
    vpc = ali_plan.one("alicloud:vpc/network:Network")
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    nodes = sorted(
        (r for r in ali_plan.of_type(SWITCH) if "-private-" in r.name), key=lambda r: r.name
    )
    # The mock's zone lookup answers cn-hangzhou-h/i/j for the asked-for type.
    assert [s.inputs["zoneId"] for s in nodes] == ["cn-hangzhou-h", "cn-hangzhou-i"]
    assert [s.inputs["cidrBlock"] for s in nodes] == ["10.0.0.0/19", "10.0.32.0/19"]
    assert all(s.inputs["vpcId"] == vpc.id for s in ali_plan.of_type(SWITCH))


def test_ack_makes_the_only_nat_gateway_and_snat_path(ali_plan: Plan) -> None:
    """Finding 2: ACK's snat_entry is always true (a false is never sent), so the stack makes
    no NAT gateway, EIP or SNAT entry of its own: ACK's are the only ones."""
    for type_ in (
        "alicloud:vpc/natGateway:NatGateway",
        "alicloud:ecs/eipAddress:EipAddress",
        "alicloud:ecs/eipAssociation:EipAssociation",
        "alicloud:vpc/snatEntry:SnatEntry",
    ):
        assert ali_plan.of_type(type_) == [], type_
    cluster = ali_plan.one("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert cluster.inputs["newNatGateway"] is True
    node_ids = sorted(s.id for s in ali_plan.of_type(SWITCH) if "-private-" in s.name)
    assert sorted(cluster.inputs["vswitchIds"]) == node_ids  # ACK's SNAT covers every one
    assert ali_plan.outputs["natGatewayId"] == cluster.outputs["natGatewayId"]


def test_vswitches_keep_the_zone_they_were_made_in(ali_plan: Plan) -> None:
    """zone_id is ForceNew and comes from a lookup: the first answer is kept."""
    for vswitch in ali_plan.of_type(SWITCH):
        assert "zoneId" in vswitch.ignore_changes


def test_no_node_gets_a_public_ip(ali_plan: Plan) -> None:
    for pool in ali_plan.of_type("alicloud:cs/nodePool:NodePool"):
        assert not pool.inputs.get("internetMaxBandwidthOut")
        assert not (pool.inputs.get("scalingConfig") or {}).get("isBondEip")


def test_more_zones_than_sell_the_type_is_an_error_naming_the_key() -> None:
    with pytest.raises(Exception, match="availabilityZoneCount asks for 4"):
        build(STACK, {"availabilityZoneCount": 4})
