"""Network: vSwitches in zones that sell the GPU type, one enhanced NAT, SNAT per node vSwitch."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.alicloud.conftest import PREFIX, STACK
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


def test_enhanced_nat_with_eip_and_snat_for_every_node_vswitch(ali_plan: Plan) -> None:
    nat = ali_plan.one("alicloud:vpc/natGateway:NatGateway")
    assert nat.inputs["natType"] == "Enhanced"
    assert nat.inputs["networkType"] == "internet"
    public_1 = ali_plan.one(SWITCH, f"{PREFIX}-public-1")
    assert nat.inputs["vswitchId"] == public_1.id
    eip = ali_plan.one("alicloud:ecs/eipAddress:EipAddress")
    association = ali_plan.one("alicloud:ecs/eipAssociation:EipAssociation")
    assert association.inputs["allocationId"] == eip.id
    assert association.inputs["instanceId"] == nat.id
    assert association.inputs["instanceType"] == "Nat"
    snats = ali_plan.of_type("alicloud:vpc/snatEntry:SnatEntry")
    node_ids = {s.id for s in ali_plan.of_type(SWITCH) if "-private-" in s.name}
    assert {s.inputs["sourceVswitchId"] for s in snats} == node_ids
    for snat in snats:
        assert snat.inputs["snatTableId"] == nat.outputs["snatTableIds"]
        assert snat.inputs["snatIp"] == eip.outputs["ipAddress"]


def test_no_node_gets_a_public_ip(ali_plan: Plan) -> None:
    for pool in ali_plan.of_type("alicloud:cs/nodePool:NodePool"):
        assert not pool.inputs.get("internetMaxBandwidthOut")
        assert not (pool.inputs.get("scalingConfig") or {}).get("isBondEip")
    cluster = ali_plan.one("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert cluster.inputs["newNatGateway"] is False  # ours is the only NAT gateway


def test_more_zones_than_sell_the_type_is_an_error_naming_the_key() -> None:
    with pytest.raises(Exception, match="availabilityZoneCount asks for 4"):
        build(STACK, {"availabilityZoneCount": 4})
