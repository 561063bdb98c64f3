"""Alibaba Cloud provider rules: each refuses an input the real provider or API would refuse
(or silently change), and the shipped Alibaba stack passes them all."""

from __future__ import annotations

import json
from collections.abc import Callable

import pulumi
import pulumi_alicloud as alicloud
import pytest

from gpuinfra.engine import Plan, run_program
from gpuinfra.provider_rules import Refusal, check_resources
from gpuinfra.provider_rules import alicloud as rules
from tests.conftest import build

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0v8kqfZr3X0yq7xWQy1u3z you@laptop"
)


def _plan(program: Callable[[], None]) -> Plan:
    return run_program(
        program,
        project="p",
        stack="s",
        config={"alicloud:region": "cn-hangzhou"},
        provider_rules=False,
    )


def _refused(program: Callable[[], None], rule: Callable[..., object]) -> list[Refusal]:
    """The refusals one rule gives the plan `program` builds."""
    rule_id = f"alicloud.{rule.__name__}"
    return [r for r in check_resources(_plan(program).resources) if r.rule == rule_id]


def _fields(refusals: list[Refusal]) -> set[tuple[str, str]]:
    return {(r.name, r.field) for r in refusals}


def _network() -> tuple[alicloud.vpc.Network, alicloud.vpc.Switch]:
    vpc = alicloud.vpc.Network("vpc", vpc_name="vpc", cidr_block="10.0.0.0/16")
    vswitch = alicloud.vpc.Switch(
        "vsw", vpc_id=vpc.id, cidr_block="10.0.0.0/19", zone_id="cn-hangzhou-h"
    )
    return vpc, vswitch


def _cluster(vswitch: alicloud.vpc.Switch, **overrides: object) -> alicloud.cs.ManagedKubernetes:
    args: dict[str, object] = {
        "name": "c",
        "cluster_spec": "ack.pro.small",
        "version": "1.33.3-aliyun.1",
        "upgrade_policy": {"control_plane_only": True},
        "vswitch_ids": [vswitch.id],
        "new_nat_gateway": True,
        "is_enterprise_security_group": True,
        **overrides,
    }
    return alicloud.cs.ManagedKubernetes("cluster", **args)  # type: ignore[arg-type]


# --- the shipped stack ----------------------------------------------------------------------

STACK_TYPES = {
    "alicloud:vpc/network:Network",
    "alicloud:vpc/switch:Switch",
    "alicloud:vpc/natGateway:NatGateway",
    "alicloud:vpc/snatEntry:SnatEntry",
    "alicloud:ecs/eipAddress:EipAddress",
    "alicloud:ecs/eipAssociation:EipAssociation",
    "alicloud:ecs/securityGroup:SecurityGroup",
    "alicloud:ecs/securityGroupRule:SecurityGroupRule",
    "alicloud:ecs/instance:Instance",
    "alicloud:cs/managedKubernetes:ManagedKubernetes",
    "alicloud:cs/nodePool:NodePool",
    "alicloud:cs/autoscalingConfig:AutoscalingConfig",
    "alicloud:kms/key:Key",
    "alicloud:kms/alias:Alias",
    "alicloud:oss/bucket:Bucket",
    "alicloud:oss/bucketAcl:BucketAcl",
    "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "alicloud:ram/role:Role",
    "alicloud:ram/policy:Policy",
    "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
}
"""The types issue 14 names (NAT, EIP and SNAT too: the stack made them until ACK took over
its egress, and a rule must refuse them coming back beside ACK's)."""


@pytest.fixture(scope="module")
def stack_with_workstation() -> Plan:
    """Built with the rules on: building at all means no refusal."""
    return build("alicloud-dev", {"workstationEnabled": True, "workstationSshPublicKey": SSH_KEY})


def test_every_alibaba_type_the_stacks_create_has_a_rule(stack_with_workstation: Plan) -> None:
    covered = rules.covered_types()
    created = {r.type for r in stack_with_workstation.resources if r.type.startswith("alicloud:")}
    # ecs.EcsKeyPair and ecs.RamRoleAttachment belong to the workstation (issue 26).
    created -= {
        "alicloud:ecs/ecsKeyPair:EcsKeyPair",
        "alicloud:ecs/ramRoleAttachment:RamRoleAttachment",
    }
    assert created <= STACK_TYPES, created - STACK_TYPES
    assert [t for t in STACK_TYPES if not covered.get(t)] == []


def test_shipped_stack_passes_with_and_without_the_workstation(
    stack_with_workstation: Plan,
) -> None:
    assert check_resources(stack_with_workstation.resources) == []
    assert stack_with_workstation.of_type("alicloud:ecs/instance:Instance")


# --- ACK cluster -------------------------------------------------------------------------


def test_ack_false_never_sent() -> None:
    def program() -> None:
        _, vswitch = _network()
        _cluster(vswitch, new_nat_gateway=False, is_enterprise_security_group=False)

    refusals = _refused(program, rules.ack_false_never_sent)
    assert _fields(refusals) == {
        ("cluster", "newNatGateway"),
        ("cluster", "isEnterpriseSecurityGroup"),
    }
    assert "snat_entry defaults to true" in refusals[0].message

    def fine() -> None:
        _, vswitch = _network()
        _cluster(vswitch)

    assert _refused(fine, rules.ack_false_never_sent) == []


def test_ack_snat_beside_own_nat() -> None:
    def program() -> None:
        vpc, vswitch = _network()
        _cluster(vswitch)
        alicloud.vpc.NatGateway(
            "own-nat", vpc_id=vpc.id, vswitch_id=vswitch.id, nat_type="Enhanced"
        )

    [refusal] = _refused(program, rules.ack_snat_beside_own_nat)
    assert refusal.field == "newNatGateway" and "own-nat" in refusal.message


def test_ack_cluster_fields() -> None:
    def program() -> None:
        _, vswitch = _network()
        _cluster(vswitch, name="x" * 64, proxy_mode="userspace", cluster_spec="ack.pro.huge")

    assert {f for _, f in _fields(_refused(program, rules.ack_cluster_fields))} == {
        "name",
        "proxyMode",
        "clusterSpec",
    }


def test_ack_version_pinned() -> None:
    def minor_only() -> None:
        _, vswitch = _network()
        _cluster(vswitch, version="1.33")

    def rolls_node_pools() -> None:
        _, vswitch = _network()
        _cluster(vswitch, upgrade_policy=None)

    assert _fields(_refused(minor_only, rules.ack_version_pinned)) == {("cluster", "version")}
    assert _fields(_refused(rolls_node_pools, rules.ack_version_pinned)) == {
        ("cluster", "upgradePolicy.controlPlaneOnly")
    }


# --- node pools and security groups ------------------------------------------------------


def test_one_security_group_type() -> None:
    """Finding 1: the old stack put the basic admin group beside ACK's advanced one."""

    def program() -> None:
        vpc, vswitch = _network()
        cluster = _cluster(vswitch)
        admin = alicloud.ecs.SecurityGroup("admin", vpc_id=vpc.id)  # basic by default
        alicloud.cs.NodePool(
            "pool",
            cluster_id=cluster.id,
            vswitch_ids=[vswitch.id],
            security_group_ids=[cluster.security_group_id, admin.id],
        )
        alicloud.ecs.Instance(
            "vm",
            instance_type="ecs.g7.xlarge",
            image_id="ubuntu",
            vswitch_id=vswitch.id,
            security_groups=[cluster.security_group_id, admin.id],
        )

    refusals = _refused(program, rules.one_security_group_type)
    assert _fields(refusals) == {("pool", "securityGroupIds"), ("vm", "securityGroups")}
    assert "(enterprise)" in refusals[0].message and "(normal)" in refusals[0].message


def test_node_pool_security_groups() -> None:
    def program() -> None:
        _, vswitch = _network()
        cluster = _cluster(vswitch)
        alicloud.cs.NodePool("pool", cluster_id=cluster.id, vswitch_ids=[vswitch.id])

    assert _fields(_refused(program, rules.node_pool_security_groups)) == {
        ("pool", "securityGroupIds")
    }


def test_node_pool_fields() -> None:
    def program() -> None:
        _, vswitch = _network()
        cluster = _cluster(vswitch)
        alicloud.cs.NodePool(
            "pool",
            cluster_id=cluster.id,
            vswitch_ids=[vswitch.id],
            security_group_ids=[cluster.security_group_id],
            multi_az_policy="BALANCE",
            compensate_with_on_demand=True,
            scaling_config={"enable": True, "min_size": 0, "max_size": 2001, "type": "tpu"},
            spot_instance_pools=11,
            system_disk_encrypt_algorithm="sm4",
            instance_metadata_options={"http_tokens": "always"},
        )

    assert {f for _, f in _fields(_refused(program, rules.node_pool_fields))} == {
        "compensateWithOnDemand",
        "scalingConfig.type",
        "scalingConfig.maxSize",
        "spotInstancePools",
        "systemDiskEncryptAlgorithm",
        "instanceMetadataOptions.httpTokens",
    }


# --- autoscaler --------------------------------------------------------------------------


def test_autoscaler_false_never_sent() -> None:
    """Finding 5: the old stack sent skip_nodes_with_system_pods=False."""

    def program() -> None:
        alicloud.cs.AutoscalingConfig(
            "as", cluster_id="c1", skip_nodes_with_system_pods=False, scale_up_from_zero=False,
            skip_nodes_with_local_storage=False,  # default false: harmless, not refused
        )  # fmt: skip

    assert _fields(_refused(program, rules.autoscaler_false_never_sent)) == {
        ("as", "skipNodesWithSystemPods"),
        ("as", "scaleUpFromZero"),
    }


def test_autoscaler_durations() -> None:
    def program() -> None:
        alicloud.cs.AutoscalingConfig("as", cluster_id="c1", unneeded_duration="600s",
                                      cool_down_duration="10m")  # fmt: skip

    assert _fields(_refused(program, rules.autoscaler_durations)) == {("as", "unneededDuration")}


# --- network -----------------------------------------------------------------------------


def test_vpc_cidr_block() -> None:
    def program() -> None:
        alicloud.vpc.Network("cgnat", cidr_block="100.64.0.0/16")
        alicloud.vpc.Network("ok", cidr_block="10.0.0.0/16")

    assert _fields(_refused(program, rules.vpc_cidr_block)) == {("cgnat", "cidrBlock")}


def test_vswitch_cidr_block() -> None:
    def program() -> None:
        vpc = alicloud.vpc.Network("vpc", cidr_block="10.0.0.0/16")
        alicloud.vpc.Switch("outside", vpc_id=vpc.id, cidr_block="10.1.0.0/24", zone_id="z")
        alicloud.vpc.Switch("tiny", vpc_id=vpc.id, cidr_block="10.0.0.0/30", zone_id="z")
        alicloud.vpc.Switch("fine", vpc_id=vpc.id, cidr_block="10.0.1.0/24", zone_id="z")

    assert _fields(_refused(program, rules.vswitch_cidr_block)) == {
        ("outside", "cidrBlock"),
        ("tiny", "cidrBlock"),
    }


def test_nat_gateway_fields() -> None:
    def program() -> None:
        vpc, _ = _network()
        alicloud.vpc.NatGateway("nat", vpc_id=vpc.id, nat_type="Normal",
                                internet_charge_type="PayBySpec")  # fmt: skip

    assert _fields(_refused(program, rules.nat_gateway_fields)) == {
        ("nat", "vswitchId"),
        ("nat", "natType"),
        ("nat", "internetChargeType"),
    }


def _nat_with_eip(*, depend: bool) -> Callable[[], None]:
    def program() -> None:
        vpc, vswitch = _network()
        nat = alicloud.vpc.NatGateway("nat", vpc_id=vpc.id, vswitch_id=vswitch.id)
        eip = alicloud.ecs.EipAddress("eip", internet_charge_type="PayByTraffic", bandwidth="100")
        association = alicloud.ecs.EipAssociation(
            "assoc", allocation_id=eip.id, instance_id=nat.id, instance_type="Nat"
        )
        opts = pulumi.ResourceOptions(depends_on=[association] if depend else [])
        for name in ("snat-a", "snat-b"):
            alicloud.vpc.SnatEntry(
                name,
                snat_table_id=nat.snat_table_ids,
                source_vswitch_id=vswitch.id,
                snat_ip=eip.ip_address,
                opts=opts,
            )

    return program


def test_snat_entry_fields() -> None:
    refusals = _refused(_nat_with_eip(depend=False), rules.snat_entry_fields)
    messages = " ".join(r.message for r in refusals)
    assert ("snat-a", "sourceVswitchId") in _fields(refusals)  # two entries, one vSwitch
    assert "already has an SNAT entry" in messages
    assert "before the entry is created" in messages
    ordered = _refused(_nat_with_eip(depend=True), rules.snat_entry_fields)
    assert "before the entry is created" not in " ".join(r.message for r in ordered)

    def in_ack_cluster() -> None:
        vpc, vswitch = _network()
        _cluster(vswitch)
        nat = alicloud.vpc.NatGateway("nat", vpc_id=vpc.id, vswitch_id=vswitch.id)
        alicloud.vpc.SnatEntry("snat", snat_table_id=nat.snat_table_ids,
                               source_vswitch_id=vswitch.id, snat_ip="198.51.100.1")  # fmt: skip

    [refusal] = _refused(in_ack_cluster, rules.snat_entry_fields)
    assert "configures SNAT for it itself" in refusal.message


def test_eip_bandwidth() -> None:
    def program() -> None:
        alicloud.ecs.EipAddress("fast", internet_charge_type="PayByTraffic", bandwidth="300")
        alicloud.ecs.EipAddress("ok", internet_charge_type="PayByBandwidth", bandwidth="300")

    assert _fields(_refused(program, rules.eip_bandwidth)) == {("fast", "bandwidth")}


def test_eip_association_type() -> None:
    def program() -> None:
        vpc, vswitch = _network()
        nat = alicloud.vpc.NatGateway("nat", vpc_id=vpc.id, vswitch_id=vswitch.id)
        eip = alicloud.ecs.EipAddress("eip")
        alicloud.ecs.EipAssociation("assoc", allocation_id=eip.id, instance_id=nat.id)

    assert _fields(_refused(program, rules.eip_association_type)) == {("assoc", "instanceType")}


# --- security groups, instances ----------------------------------------------------------


def test_security_group_fields() -> None:
    def program() -> None:
        alicloud.ecs.SecurityGroup("sg", security_group_type="premium", security_group_name="1x")

    assert _fields(_refused(program, rules.security_group_fields)) == {
        ("sg", "securityGroupType"),
        ("sg", "securityGroupName"),
    }


def test_security_group_rule_fields() -> None:
    def program() -> None:
        vpc, _ = _network()
        group = alicloud.ecs.SecurityGroup("sg", vpc_id=vpc.id, security_group_type="enterprise")
        other = alicloud.ecs.SecurityGroup("other", vpc_id=vpc.id)
        alicloud.ecs.SecurityGroupRule("all-ports", security_group_id=group.id, type="ingress",
                                       ip_protocol="tcp", port_range="-1/-1", cidr_ip="10.0.0.0/8",
                                       nic_type="internet")  # fmt: skip
        alicloud.ecs.SecurityGroupRule("no-source", security_group_id=group.id, type="ingress",
                                       ip_protocol="tcp", port_range="22/22",
                                       nic_type="intranet")  # fmt: skip
        alicloud.ecs.SecurityGroupRule("by-group", security_group_id=group.id, type="ingress",
                                       ip_protocol="tcp", port_range="22/22", nic_type="intranet",
                                       source_security_group_id=other.id)  # fmt: skip

    assert _fields(_refused(program, rules.security_group_rule_fields)) == {
        ("all-ports", "portRange"),
        ("all-ports", "nicType"),
        ("no-source", "cidrIp"),
        ("by-group", "sourceSecurityGroupId"),
    }


def test_instance_groups_in_vswitch_vpc() -> None:
    def program() -> None:
        _, vswitch = _network()
        elsewhere = alicloud.vpc.Network("other-vpc", cidr_block="192.168.0.0/16")
        group = alicloud.ecs.SecurityGroup("sg", vpc_id=elsewhere.id)
        alicloud.ecs.Instance("vm", instance_type="ecs.g7.xlarge", image_id="ubuntu",
                              vswitch_id=vswitch.id, security_groups=[group.id])  # fmt: skip

    assert _fields(_refused(program, rules.instance_groups_in_vswitch_vpc)) == {
        ("vm", "securityGroups")
    }


# --- KMS, OSS, RAM -----------------------------------------------------------------------


def test_kms_key_fields() -> None:
    def program() -> None:
        alicloud.kms.Key("key", automatic_rotation="Enabled", pending_window_in_days=3,
                         key_spec="AES_512", protection_level="CLOUD")  # fmt: skip

    assert {f for _, f in _fields(_refused(program, rules.kms_key_fields))} == {
        "rotationInterval",
        "pendingWindowInDays",
        "keySpec",
        "protectionLevel",
    }


def test_kms_alias_name() -> None:
    def program() -> None:
        alicloud.kms.Alias("bad", alias_name="secrets", key_id="k")
        alicloud.kms.Alias("ok", alias_name="alias/secrets", key_id="k")

    assert _fields(_refused(program, rules.kms_alias_name)) == {("bad", "aliasName")}


def test_oss_bucket_fields() -> None:
    def program() -> None:
        alicloud.oss.Bucket("b", bucket="Team_Data", versioning={"status": "On"},
                            server_side_encryption_rule={"sse_algorithm": "DES"})  # fmt: skip

    assert {f for _, f in _fields(_refused(program, rules.oss_bucket_fields))} == {
        "bucket",
        "versioning.status",
        "serverSideEncryptionRule.sseAlgorithm",
    }


def test_oss_bucket_settings() -> None:
    def program() -> None:
        bucket = alicloud.oss.Bucket("b", bucket="team-data")
        alicloud.oss.BucketAcl("acl", bucket=bucket.id, acl="authenticated-read")
        alicloud.oss.BucketPublicAccessBlock("block", bucket=bucket.id, block_public_access=True)

    assert _fields(_refused(program, rules.oss_bucket_settings)) == {("acl", "acl")}


def test_ram_role_fields() -> None:
    def program() -> None:
        alicloud.ram.Role("r", role_name="team/trainer", max_session_duration=60,
                          assume_role_policy_document="{not json")  # fmt: skip

    assert {f for _, f in _fields(_refused(program, rules.ram_role_fields))} == {
        "roleName",
        "maxSessionDuration",
        "assumeRolePolicyDocument",
    }


def test_ram_policy_fields() -> None:
    big = json.dumps({"Version": "1", "Statement": [{"Effect": "Allow", "Action": "x" * 7000}]})

    def program() -> None:
        alicloud.ram.Policy("p", policy_name="team.oss", policy_document=big)

    assert {f for _, f in _fields(_refused(program, rules.ram_policy_fields))} == {
        "policyName",
        "policyDocument",
    }


def test_ram_attachment_type() -> None:
    def program() -> None:
        alicloud.ram.RolePolicyAttachment("a", role_name="r", policy_name="p",
                                          policy_type="Managed")  # fmt: skip

    assert _fields(_refused(program, rules.ram_attachment_type)) == {("a", "policyType")}
