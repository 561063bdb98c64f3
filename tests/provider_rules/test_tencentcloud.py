"""Tencent Cloud provider rules: each one refuses an input that breaks it, and lets the good
input of the same resource through."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from gpuinfra.engine import Plan, RecordedResource
from gpuinfra.provider_rules import RULES, check_resources
from gpuinfra.provider_rules import tencentcloud as tc

Inputs = dict[str, Any]


def res(
    type_: str,
    name: str,
    inputs: Inputs,
    *,
    id_: str | None = None,
    deps: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> RecordedResource:
    return RecordedResource(
        urn=f"urn:{name}", type=type_, name=name, parent=None, provider=None, custom=True,
        protect=False, inputs=inputs, outputs={}, id=id_ or f"id-{name}",
        dependencies=list(deps), ignore_changes=list(ignore),
    )  # fmt: skip


def refused(resources: Sequence[RecordedResource], config: dict[str, str] | None = None) -> set:
    """(rule function name, field) of every refusal."""
    return {(r.rule.rsplit(".", 1)[-1], r.field) for r in check_resources(resources, config)}


# A plan that passes every Tencent rule: the cases below each break one thing in a copy.
CLUSTER_ID = "cls-00000001"


def good_plan() -> list[RecordedResource]:
    rule = {"action": "ACCEPT", "protocol": "TCP", "port": "22", "cidrBlock": "203.0.113.0/24"}
    trust = {
        "version": "2.0",
        "statement": [
            {
                "action": ["name/sts:AssumeRole"],
                "effect": "allow",
                "principal": {"service": ["cvm.qcloud.com"]},
            }
        ],
    }
    pool = {
        "name": "gpu",
        "clusterId": CLUSTER_ID,
        "minSize": 1,
        "desiredCapacity": 1,
        "maxSize": 2,
        "enableAutoScale": True,
        "autoScalingConfig": {
            "instanceType": "GN7.2XLARGE32",
            "instanceChargeType": "SPOTPAID",
            "spotInstanceType": "one-time",
            "spotMaxPrice": "3.00",
            "orderlySecurityGroupIds": ["sg-1"],
            "keyIds": ["skey-1"],
            "systemDiskSize": 50,
            "instanceName": "p-gpu",
        },
        "nodeConfig": {"gpuArgs": {"driver": {"name": "NVIDIA.run", "version": "535.54.03"}}},
    }
    return [
        res(tc.VPC, "vpc", {"name": "p-vpc", "cidrBlock": "10.0.0.0/16"}),
        res(
            tc.SUBNET,
            "subnet",
            {"name": "p-1", "cidrBlock": "10.0.0.0/19", "availabilityZone": "ap-guangzhou-3"},
            ignore=["availabilityZone"],
        ),
        res(tc.NAT, "nat", {"name": "p-nat", "assignedEipSets": ["198.51.100.1"]}),
        res(tc.EIP, "eip", {"internetChargeType": "TRAFFIC_POSTPAID_BY_HOUR"}),
        res(tc.ROUTE_TABLE, "rt", {"name": "p-rt"}),
        res(
            tc.ROUTE_ENTRY,
            "route",
            {"destinationCidrBlock": "0.0.0.0/0", "nextType": "NAT", "nextHub": "nat-1"},
        ),
        res(tc.SECURITY_GROUP, "sg", {"name": "p-sg", "description": "admin"}, id_="sg-1"),
        res(
            tc.RULE_SET,
            "rules",
            {
                "securityGroupId": "sg-1",
                "ingresses": [rule],
                "egresses": [
                    {"action": "ACCEPT", "protocol": "ALL", "port": "ALL", "cidrBlock": "0.0.0.0/0"}
                ],
            },
            id_="sg-1",
        ),
        res(
            tc.KMS_KEY,
            "key",
            {"alias": "p-tke-secrets", "isEnabled": True, "pendingDeleteWindowInDays": 30},
            id_="kms-1",
        ),
        res(
            tc.CLUSTER,
            "cluster",
            {
                "clusterVersion": "1.34.1",
                "clusterCidr": "172.20.0.0/16",
                "serviceCidr": "172.21.0.0/20",
                "clusterMaxServiceNum": 4096,
                "clusterMaxPodNum": 64,
            },
            id_=CLUSTER_ID,
            ignore=["clusterInternet", "clusterIntranet"],
        ),
        res(
            tc.ENCRYPTION,
            "encryption",
            {
                "clusterId": CLUSTER_ID,
                "kmsConfiguration": {"keyId": "kms-1", "kmsRegion": "ap-guangzhou"},
            },
            id_=CLUSTER_ID,
        ),
        res(tc.NODE_POOL, "pool", pool, id_=f"{CLUSTER_ID}#np-1"),
        res(
            tc.ENDPOINT,
            "endpoint",
            {
                "clusterId": CLUSTER_ID,
                "clusterIntranet": True,
                "clusterIntranetSubnetId": "subnet-1",
                "clusterInternet": True,
                "clusterInternetSecurityGroup": "sg-1",
            },
            id_=CLUSTER_ID,
            deps=["urn:pool"],
        ),
        res(
            tc.AUTH,
            "auth",
            {
                "clusterId": CLUSTER_ID,
                "useTkeDefault": True,
                "autoCreateOidcConfig": True,
                "autoInstallPodIdentityWebhookAddon": True,
            },
            id_=CLUSTER_ID,
        ),
        res(
            tc.BUCKET,
            "bucket",
            {
                "bucket": "p-data-1250000000",
                "acl": "private",
                "encryptionAlgorithm": "AES256",
                "lifecycleRules": [
                    {
                        "nonCurrentExpiration": {"nonCurrentDays": 30},
                        "abortIncompleteMultipartUpload": {"daysAfterInitiation": 7},
                    }
                ],
            },
        ),
        res(tc.CAM_ROLE, "role", {"name": "p-role", "document": json.dumps(trust)}, id_="46"),
        res(
            tc.CAM_POLICY,
            "policy",
            {
                "name": "p-policy",
                "document": json.dumps(
                    {
                        "version": "2.0",
                        "statement": [
                            {
                                "effect": "allow",
                                "action": ["name/cos:GetObject"],
                                "resource": ["qcs::cos:::*"],
                            }
                        ],
                    }
                ),
            },
            id_="2001",
        ),
        res(tc.CAM_ATTACHMENT, "attachment", {"roleId": "46", "policyId": "2001"}),
        res(tc.KEY_PAIR, "keypair", {"keyName": "p_nodes"}, id_="skey-1"),
        res(
            tc.CVM,
            "cvm",
            {
                "instanceName": "p-workstation",
                "keyIds": ["skey-1"],
                "orderlySecurityGroups": ["sg-1"],
                "instanceChargeType": "POSTPAID_BY_HOUR",
                "dataDisks": [{"dataDiskSize": 200, "deleteWithInstance": True}],
            },
        ),
    ]


def test_the_good_plan_passes_every_tencent_rule() -> None:
    assert refused(good_plan()) == set()


def _set(path: str, value: Any) -> Callable[[Inputs], None]:
    """Mutation: put `value` at a dotted path (list items by index); None deletes it."""

    def mutate(inputs: Inputs) -> None:
        *parents, last = path.split(".")
        target: Any = inputs
        for step in parents:
            target = target[int(step)] if step.isdigit() else target[step]
        if value is None:
            del target[int(last) if last.isdigit() else last]
        elif last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


# (resource name in good_plan, mutation, rule function, field refused)
CASES: list[tuple[str, Callable[[Inputs], None], Any, str]] = [
    ("vpc", _set("name", "v" * 61), tc.vpc_name_and_cidr, "name"),
    ("vpc", _set("cidrBlock", "10.0.0.1/16"), tc.vpc_name_and_cidr, "cidrBlock"),
    ("subnet", _set("name", ""), tc.subnet_name_and_cidr, "name"),
    ("subnet", _set("cidrBlock", "10.0.0.5/19"), tc.subnet_name_and_cidr, "cidrBlock"),
    ("nat", _set("assignedEipSets", []), tc.nat_gateway_arguments, "assignedEipSets"),
    ("nat", _set("bandwidth", 30), tc.nat_gateway_arguments, "bandwidth"),
    ("nat", _set("maxConcurrent", 5), tc.nat_gateway_arguments, "maxConcurrent"),
    ("eip", _set("internetChargeType", "PAY_AS_YOU_GO"), tc.eip_charge_type, "internetChargeType"),
    ("rt", _set("name", "r" * 61), tc.route_table_name, "name"),
    (
        "route",
        _set("destinationCidrBlock", "0.0.0.1/0"),
        tc.route_entry_destination_and_next_hop,
        "destinationCidrBlock",
    ),
    ("route", _set("nextType", "INTERNET"), tc.route_entry_destination_and_next_hop, "nextType"),
    ("sg", _set("name", "s" * 61), tc.security_group_name_and_description, "name"),
    ("sg", _set("description", "d" * 101), tc.security_group_name_and_description, "description"),
    ("rules", _set("ingresses.0.action", "ALLOW"), tc.rule_set_rules, "ingresses.0.action"),
    ("rules", _set("ingresses.0.sourceSecurityId", "sg-2"), tc.rule_set_rules, "ingresses.0"),
    ("rules", _set("ingresses.0.cidrBlock", None), tc.rule_set_rules, "ingresses.0"),
    ("rules", _set("egresses.0.port", "443"), tc.rule_set_rules, "egresses.0.port"),
    ("rules", _set("ingresses.0.protocol", "SCTP"), tc.rule_set_rules, "ingresses.0.protocol"),
    ("rules", _set("ingresses.0.serviceTemplateId", "ppm-1"), tc.rule_set_rules, "ingresses.0"),
    ("cluster", _set("clusterCidr", "8.8.0.0/16"), tc.cluster_networks, "clusterCidr"),
    ("cluster", _set("serviceCidr", "11.0.0.0/20"), tc.cluster_networks, "serviceCidr"),
    ("cluster", _set("clusterMaxServiceNum", 65536), tc.cluster_networks, "clusterMaxServiceNum"),
    ("cluster", _set("clusterMaxPodNum", 2), tc.cluster_networks, "clusterMaxPodNum"),
    (
        "cluster",
        _set("clusterIntranet", True),
        tc.cluster_endpoint_flags,
        "clusterIntranetSubnetId",
    ),
    ("cluster", _set("clusterInternet", True), tc.cluster_endpoint_flags, "clusterInternet"),
    (
        "endpoint",
        _set("clusterIntranetSubnetId", None),
        tc.endpoint_arguments,
        "clusterIntranetSubnetId",
    ),
    (
        "endpoint",
        _set("clusterInternetSecurityGroup", None),
        tc.endpoint_arguments,
        "clusterInternetSecurityGroup",
    ),
    (
        "pool",
        _set("autoScalingConfig.securityGroupIds", ["sg-1"]),
        tc.node_pool_orderly_security_groups,
        "autoScalingConfig.securityGroupIds",
    ),
    (
        "pool",
        _set("autoScalingConfig.keyIds", None),
        tc.node_pool_login,
        "autoScalingConfig.keyIds",
    ),
    (
        "pool",
        _set("autoScalingConfig.password", "Secret-1234"),
        tc.node_pool_login,
        "autoScalingConfig.keyIds",
    ),
    (
        "pool",
        _set("autoScalingConfig.spotMaxPrice", None),
        tc.node_pool_spot_options,
        "autoScalingConfig.spotMaxPrice",
    ),
    (
        "pool",
        _set("autoScalingConfig.spotInstanceType", None),
        tc.node_pool_spot_options,
        "autoScalingConfig.spotInstanceType",
    ),
    ("pool", _set("name", "gpuinfra-tencentcloud-dev-gpu"), tc.node_pool_names, "name"),
    ("pool", _set("name", "gpu pool"), tc.node_pool_names, "name"),
    (
        "pool",
        _set("autoScalingConfig.instanceName", "i" * 61),
        tc.node_pool_names,
        "autoScalingConfig.instanceName",
    ),
    ("pool", _set("minSize", 3), tc.node_pool_sizes, "minSize"),
    ("pool", _set("maxSize", 2001), tc.node_pool_sizes, "maxSize"),
    ("pool", _set("desiredCapacity", 5), tc.node_pool_sizes, "desiredCapacity"),
    ("pool", _set("waitNodeReady", True), tc.node_pool_sizes, "waitNodeReady"),
    (
        "pool",
        _set("autoScalingConfig.systemDiskSize", 10),
        tc.node_pool_disks_and_gpu_args,
        "autoScalingConfig.systemDiskSize",
    ),
    (
        "pool",
        _set("nodeConfig.gpuArgs.driver.name", ""),
        tc.node_pool_disks_and_gpu_args,
        "nodeConfig.gpuArgs.driver",
    ),
    (
        "encryption",
        _set("kmsConfiguration.kmsRegion", None),
        tc.encryption_protection_key,
        "kmsConfiguration",
    ),
    ("auth", _set("issuer", "https://issuer.example"), tc.auth_attachment_options, "issuer"),
    (
        "auth",
        _set("autoInstallPodIdentityWebhookAddon", False),
        tc.auth_attachment_options,
        "autoInstallPodIdentityWebhookAddon",
    ),
    ("key", _set("isEnabled", None), tc.kms_key_enabled_and_named, "isEnabled"),
    ("key", _set("alias", "-secrets"), tc.kms_key_enabled_and_named, "alias"),
    (
        "key",
        _set("pendingDeleteWindowInDays", 60),
        tc.kms_key_enabled_and_named,
        "pendingDeleteWindowInDays",
    ),
    ("bucket", _set("bucket", "p-data-125000000"), tc.cos_bucket_arguments, "bucket"),
    ("bucket", _set("bucket", "p" * 50 + "-1250000000"), tc.cos_bucket_arguments, "bucket"),
    ("bucket", _set("acl", "authenticated-read"), tc.cos_bucket_arguments, "acl"),
    (
        "bucket",
        _set("encryptionAlgorithm", "aws:kms"),
        tc.cos_bucket_arguments,
        "encryptionAlgorithm",
    ),
    (
        "bucket",
        _set("lifecycleRules.0.abortIncompleteMultipartUpload.daysAfterInitiation", 0),
        tc.cos_bucket_arguments,
        "lifecycleRules.0.abortIncompleteMultipartUpload",
    ),
    ("role", _set("document", "{not json"), tc.cam_document, "document"),
    (
        "policy",
        _set(
            "document",
            json.dumps(
                {
                    "version": "2.0",
                    "statement": [
                        {
                            "effect": "allow",
                            "action": ["name/cos:GetObject"],
                            "resource": "qcs::cos:::*",
                        }
                    ],
                }
            ),
        ),
        tc.cam_document,
        "document",
    ),
    (
        "role",
        _set(
            "document",
            json.dumps(
                {
                    "version": "2.0",
                    "statement": [
                        {
                            "effect": "allow",
                            "action": "name/sts:AssumeRole",
                            "principal": {"qcs": "qcs::cam::uin/1:root"},
                        }
                    ],
                }
            ),
        ),
        tc.cam_document,
        "document",
    ),
    ("role", _set("name", ""), tc.cam_document, "name"),
    ("attachment", _set("policyId", "policy-x"), tc.cam_attachment_ids, "policyId"),
    ("attachment", _set("roleId", None), tc.cam_attachment_ids, "roleId"),
    ("keypair", _set("keyName", "gpuinfra_tencentcloud_dev_ws"), tc.key_pair_name, "keyName"),
    ("keypair", _set("keyName", "gpuinfra-nodes"), tc.key_pair_name, "keyName"),
    ("cvm", _set("instanceName", "w"), tc.cvm_instance_arguments, "instanceName"),
    ("cvm", _set("password", "Secret-1234"), tc.cvm_instance_arguments, "password"),
    ("cvm", _set("securityGroups", ["sg-1"]), tc.cvm_instance_arguments, "securityGroups"),
    (
        "cvm",
        _set("instanceChargeType", "SPOTPAID"),
        tc.cvm_instance_arguments,
        "dataDisks.0.deleteWithInstance",
    ),
]


def test_a_spot_instance_passes_only_with_delete_with_instance_set_false() -> None:
    """The schema defaults deleteWithInstance to true, so leaving it out is refused too."""
    plan = good_plan()
    [cvm] = [r for r in plan if r.name == "cvm"]
    cvm.inputs = copy.deepcopy(cvm.inputs)
    cvm.inputs["instanceChargeType"] = "SPOTPAID"
    disk = cvm.inputs["dataDisks"][0]
    disk.pop("deleteWithInstance", None)
    assert ("cvm_instance_arguments", "dataDisks.0.deleteWithInstance") in refused(plan)
    disk["deleteWithInstance"] = False
    assert ("cvm_instance_arguments", "dataDisks.0.deleteWithInstance") not in refused(plan)


@pytest.mark.parametrize(
    ("name", "mutate", "rule", "field"),
    CASES,
    ids=[f"{c[2].__name__}-{c[3]}-{i}" for i, c in enumerate(CASES)],
)
def test_rule_refuses_a_breaking_input(
    name: str, mutate: Callable[[Inputs], None], rule: Any, field: str
) -> None:
    plan = good_plan()
    [target] = [r for r in plan if r.name == name]
    assert (rule.__name__, field) not in refused(plan)
    target.inputs = copy.deepcopy(target.inputs)
    mutate(target.inputs)
    assert (rule.__name__, field) in refused(plan)


def test_subnet_zone_cannot_move_unless_pinned_or_ignored() -> None:
    plan = good_plan()
    [subnet] = [r for r in plan if r.name == "subnet"]
    subnet.ignore_changes = []
    rule = ("subnet_zone_cannot_move", "availabilityZone")
    assert rule in refused(plan)
    assert rule not in refused(plan, {tc.ZONES_KEY: json.dumps(["ap-guangzhou-3"])})
    assert rule in refused(plan, {tc.ZONES_KEY: json.dumps(["ap-guangzhou-4"])})


def test_cluster_endpoint_single_owner() -> None:
    plan = good_plan()
    [cluster] = [r for r in plan if r.name == "cluster"]
    cluster.inputs["clusterIntranet"] = False
    cluster.inputs["clusterInternet"] = False
    assert ("cluster_endpoint_single_owner", "clusterInternet") not in refused(plan)  # ignored
    cluster.ignore_changes = []
    found = refused(plan)
    assert ("cluster_endpoint_single_owner", "clusterInternet") in found
    assert ("cluster_endpoint_single_owner", "clusterIntranet") in found
    # Without a ClusterEndpoint the Cluster may own its endpoints.
    alone = [r for r in plan if r.name != "endpoint"]
    assert not {f for f in refused(alone) if f[0] == "cluster_endpoint_single_owner"}


def test_endpoint_arguments_needs_a_node_pool_with_a_node_first() -> None:
    plan = good_plan()
    [endpoint] = [r for r in plan if r.name == "endpoint"]
    [pool] = [r for r in plan if r.name == "pool"]
    endpoint.dependencies = []
    assert ("endpoint_arguments", "dependsOn") in refused(plan)
    endpoint.dependencies = ["urn:pool"]
    pool.inputs["minSize"] = 0
    pool.inputs["desiredCapacity"] = 0
    assert ("endpoint_arguments", "dependsOn") in refused(plan)


def test_encryption_protection_key_must_be_enabled() -> None:
    plan = good_plan()
    [key] = [r for r in plan if r.name == "key"]
    key.inputs["isEnabled"] = False
    found = refused(plan)
    assert ("encryption_protection_key", "kmsConfiguration.keyId") in found
    assert ("kms_key_enabled_and_named", "isEnabled") in found


def test_auth_attachment_options_need_kubernetes_1_20() -> None:
    plan = good_plan()
    [cluster] = [r for r in plan if r.name == "cluster"]
    cluster.inputs["clusterVersion"] = "1.18.4"
    assert ("auth_attachment_options", "clusterId") in refused(plan)


def test_lookups_by_id_keep_types_apart() -> None:
    """A rule set, an endpoint and an auth attachment share their target's id on Tencent: the
    rules find a KMS key or cluster by type as well as id."""
    plan = good_plan()
    impostor = res(tc.RULE_SET, "impostor", {"securityGroupId": "x"}, id_="kms-1")
    assert refused([*plan, impostor]) == set()


def test_shipped_stack_passes_the_tencent_rules(tc_plan: Plan) -> None:
    """Built with the rules on, and checked again here: no refusal, and every Tencent type the
    stack creates has at least one rule."""
    assert check_resources(tc_plan.resources, tc_plan.config) == []
    created = {r.type for r in tc_plan.resources if r.type.startswith("tencentcloud:")}
    ruled = {t for rule in RULES if rule.id.startswith("tencentcloud.") for t in rule.types}
    assert created - ruled == set()


@pytest.fixture(scope="module")
def tc_plan() -> Plan:
    from tests.tencentcloud.conftest import build_tc

    return build_tc({"workstationEnabled": True, "workstationSshPublicKey": _SSH_KEY})


_SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0v8kqfZr3X0yq7xWQy1u3z u@h"
