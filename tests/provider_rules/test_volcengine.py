"""Volcano Engine provider rules: each refuses an input that breaks it; the dev stack passes all.

The good plan is the shipped volcengine-dev stack as the mock engine records it; each case
breaks one input of one resource in a copy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from gpuinfra.engine import Plan, RecordedResource
from gpuinfra.provider_rules import check_resources
from gpuinfra.provider_rules import volcengine as ve
from tests.volcengine.conftest import PREFIX, build_ve

Inputs = dict[str, Any]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_ve()


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


def _refused(resources: list[RecordedResource], config: dict[str, str]) -> set[tuple[str, str]]:
    return {(r.rule.rsplit(".", 1)[-1], r.field) for r in check_resources(resources, config)}


def test_the_dev_stack_passes_every_volcengine_rule(plan: Plan) -> None:
    volc = [r for r in plan.resources if r.type.startswith("volcenginecc:")]
    assert {r.type for r in volc} == {
        ve.VPC, ve.SUBNET, ve.ROUTE_TABLE, ve.EIP, ve.SECURITY_GROUP, ve.NAT, ve.SNAT,
        ve.CLUSTER, ve.NODE_POOL, ve.KUBECONFIG, ve.ADDON, ve.BUCKET, ve.BUCKET_ENCRYPTION,
        ve.IAM_ROLE, ve.IAM_POLICY,
    }  # fmt: skip
    assert _refused(volc, dict(plan.config)) == set()


def test_every_type_the_stack_creates_has_a_rule(plan: Plan) -> None:
    from gpuinfra.provider_rules import rules_for

    types = {r.type for r in plan.resources if r.type.startswith("volcenginecc:")}
    assert all(list(rules_for(t)) for t in types)


P = PREFIX
# (resource name in the dev plan, mutation, rule function, field refused)
CASES: list[tuple[str, Callable[[Inputs], None], Any, str]] = [
    (f"{P}-vpc", _set("vpcName", "v" * 129), ve.vpc_arguments, "vpcName"),
    (f"{P}-vpc", _set("cidrBlock", None), ve.vpc_arguments, "cidrBlock"),
    (f"{P}-vpc", _set("description", "d" * 256), ve.vpc_arguments, "description"),
    (f"{P}-private-1", _set("zoneId", None), ve.subnet_arguments, "zoneId"),
    (f"{P}-private-1", _set("subnetName", ""), ve.subnet_arguments, "subnetName"),
    (f"{P}-private-1", _set("zoneId", "cn-beijing-d"), ve.subnet_zone_cannot_move, "zoneId"),
    (f"{P}-private-rt", _set("routeTableName", ""), ve.route_table_entries, "routeTableName"),
    (
        f"{P}-private-rt",
        _set("customRouteEntries.0.nextHopType", "NAT"),
        ve.route_table_entries,
        "customRouteEntries.0.nextHopType",
    ),
    (
        f"{P}-private-rt",
        _set("customRouteEntries.0.destinationCidrBlock", None),
        ve.route_table_entries,
        "customRouteEntries.0.destinationCidrBlock",
    ),
    (f"{P}-nat-eip", _set("billingType", None), ve.eip_billing_and_bandwidth, "billingType"),
    (f"{P}-nat-eip", _set("billingType", 4), ve.eip_billing_and_bandwidth, "billingType"),
    (f"{P}-nat-eip", _set("bandwidth", 300), ve.eip_billing_and_bandwidth, "bandwidth"),
    (f"{P}-nat-eip", _set("instanceType", "NatGW"), ve.eip_billing_and_bandwidth, "instanceType"),
    (f"{P}-nat", _set("vpcId", None), ve.nat_gateway_arguments, "vpcId"),
    (f"{P}-nat", _set("spec", "Tiny"), ve.nat_gateway_arguments, "spec"),
    (f"{P}-nat", _set("networkType", "intranet"), ve.nat_gateway_arguments, "billingType"),
    (f"{P}-nat", _set("billingType", 4), ve.nat_gateway_arguments, "billingType"),
    (f"{P}-snat-1", _set("natGatewayId", None), ve.snat_entry_gateway, "natGatewayId"),
    (
        f"{P}-admin-sg",
        _set("ingressPermissions.0.priority", None),
        ve.security_group_rules_complete,
        "ingressPermissions.0.priority",
    ),
    (
        f"{P}-admin-sg",
        _set("ingressPermissions.0.description", None),
        ve.security_group_rules_complete,
        "ingressPermissions.0.description",
    ),
    (
        f"{P}-admin-sg",
        _set("ingressPermissions.0.protocol", "sctp"),
        ve.security_group_rules_complete,
        "ingressPermissions.0.protocol",
    ),
    (
        f"{P}-nodes-sg",
        _set("egressPermissions.0.portStart", 1),
        ve.security_group_rules_complete,
        "egressPermissions.0.portStart",
    ),
    (
        f"{P}-admin-sg",
        _set("ingressPermissions.0.portStart", 0),
        ve.security_group_rules_complete,
        "ingressPermissions.0.portStart",
    ),
    (
        f"{P}-admin-sg",
        _set("ingressPermissions.0.priority", 101),
        ve.security_group_rules_complete,
        "ingressPermissions.0.priority",
    ),
    (f"{P}-cluster", _set("name", "c"), ve.vke_cluster_arguments, "name"),
    (f"{P}-cluster", _set("description", "d" * 301), ve.vke_cluster_arguments, "description"),
    (
        f"{P}-cluster",
        _set("clusterConfig.subnetIds", None),
        ve.vke_cluster_arguments,
        "clusterConfig.subnetIds",
    ),
    (
        f"{P}-cluster",
        _set("podsConfig.flannelConfig.maxPodsPerNode", 100),
        ve.vke_cluster_arguments,
        "podsConfig.flannelConfig.maxPodsPerNode",
    ),
    (
        f"{P}-cluster",
        _set("podsConfig.podNetworkMode", "Calico"),
        ve.vke_cluster_arguments,
        "podsConfig.podNetworkMode",
    ),
    (
        f"{P}-cluster",
        _set("servicesConfig.serviceCidrsv4s", []),
        ve.vke_cluster_arguments,
        "servicesConfig.serviceCidrsv4s",
    ),
    (
        f"{P}-cluster",
        _set("kubernetesVersionCreate", "v1.32.1"),
        ve.vke_cluster_version_is_a_minor,
        "kubernetesVersionCreate",
    ),
    (
        f"{P}-cluster",
        _set("clusterConfig.apiServerPublicAccessEnabled", True),
        ve.vke_public_endpoint_is_world_open,
        "clusterConfig.apiServerPublicAccessEnabled",
    ),
    (f"{P}-spot-pool", _set("name", "vke-default-nodepool"), ve.vke_node_pool_arguments, "name"),
    (f"{P}-spot-pool", _set("clusterId", None), ve.vke_node_pool_arguments, "clusterId"),
    (
        f"{P}-spot-pool",
        _set("nodeConfig.instanceChargeType", "PrePaid"),
        ve.vke_node_pool_arguments,
        "nodeConfig.spotStrategy",
    ),
    (
        f"{P}-spot-pool",
        _set("nodeConfig.spotStrategy", "SpotWithPriceLimit"),
        ve.vke_node_pool_arguments,
        "nodeConfig.spotStrategy",
    ),
    (
        f"{P}-spot-pool",
        _set("nodeConfig.systemVolume.size", 30),
        ve.vke_node_pool_arguments,
        "nodeConfig.systemVolume.size",
    ),
    (
        f"{P}-spot-pool",
        _set("nodeConfig.systemVolume.type", "PTSSD"),
        ve.vke_node_pool_arguments,
        "nodeConfig.systemVolume.type",
    ),
    (
        f"{P}-spot-pool",
        _set("kubernetesConfig.taints.0.effect", "NO_SCHEDULE"),
        ve.vke_node_pool_arguments,
        "kubernetesConfig.taints.0.effect",
    ),
    (
        f"{P}-spot-pool",
        _set("autoScaling.subnetPolicy", "Random"),
        ve.vke_node_pool_arguments,
        "autoScaling.subnetPolicy",
    ),
    (f"{P}-kubeconfig", _set("type", "Internal"), ve.vke_kubeconfig_type_and_duration, "type"),
    (
        f"{P}-kubeconfig",
        _set("validDuration", 50000),
        ve.vke_kubeconfig_type_and_duration,
        "validDuration",
    ),
    (
        f"{P}-pod-identity-webhook",
        _set("deployNodeType", None),
        ve.vke_addon_deploy_mode,
        "deployNodeType",
    ),
    (f"{P}-cluster-autoscaler", _set("deployMode", "Auto"), ve.vke_addon_deploy_mode, "deployMode"),
    (f"{P}-data", _set("name", "ab"), ve.tos_bucket_arguments, "name"),
    (
        f"{P}-data",
        _set("enableVersionStatus", "On"),
        ve.tos_bucket_arguments,
        "enableVersionStatus",
    ),
    (f"{P}-data", _set("aclGrant.acl", "public"), ve.tos_bucket_arguments, "aclGrant.acl"),
    (
        f"{P}-encryption",
        _set("sseAlgorithm", "aws:kms"),
        ve.tos_bucket_encryption_algorithm,
        "sseAlgorithm",
    ),
    (
        f"{P}-encryption",
        _set("kmsMasterKeyId", "key-1"),
        ve.tos_bucket_encryption_algorithm,
        "kmsMasterKeyId",
    ),
    (f"{P}-training-role", _set("roleName", "a b"), ve.iam_role_arguments, "roleName"),
    (
        f"{P}-training-role",
        _set("maxSessionDuration", 900),
        ve.iam_role_arguments,
        "maxSessionDuration",
    ),
    (
        f"{P}-training-role",
        _set("policies.0.policyType", "Inline"),
        ve.iam_role_arguments,
        "policies.0.policyType",
    ),
    (
        f"{P}-training-role",
        _set("trustPolicyDocument", "{not json"),
        ve.iam_role_arguments,
        "trustPolicyDocument",
    ),
    (f"{P}-training-policy", _set("policyName", "p" * 65), ve.iam_policy_arguments, "policyName"),
    (
        f"{P}-training-policy",
        _set("policyDocument", "x" * 6145),
        ve.iam_policy_arguments,
        "policyDocument",
    ),
    (f"{P}-training-policy", _set("policyType", None), ve.iam_policy_arguments, "policyType"),
]


@pytest.mark.parametrize(
    ("name", "mutate", "rule", "field"),
    CASES,
    ids=[f"{c[2].__name__}:{c[3]}" for c in CASES],
)
def test_rule_refuses_a_broken_input(
    plan: Plan, name: str, mutate: Callable[[Inputs], None], rule: Any, field: str
) -> None:
    resources = []
    for r in plan.resources:
        if r.name == name:
            r = copy.deepcopy(r)
            mutate(r.inputs)
        resources.append(r)
    assert any(r.name == name for r in plan.resources), name
    assert (rule.__name__, field) in _refused(resources, dict(plan.config))


def test_subnet_zone_may_float_only_under_ignore_changes(plan: Plan) -> None:
    """A zone outside vkeZones passes only when the subnet ignores later zone changes."""
    subnet = copy.deepcopy(plan.one(ve.SUBNET, f"{P}-private-1"))
    subnet.inputs["zoneId"] = "cn-beijing-d"
    assert ("subnet_zone_cannot_move", "zoneId") in _refused([subnet], dict(plan.config))
    subnet.ignore_changes = ["zoneId"]
    assert _refused([subnet], dict(plan.config)) == set()


def test_autoscaled_pool_must_ignore_its_desired_count(plan: Plan) -> None:
    gpu = copy.deepcopy(plan.one(ve.NODE_POOL, f"{P}-spot-pool"))
    gpu.ignore_changes = []
    assert ("vke_autoscaled_pool_keeps_its_desired_count", "autoScaling.desiredReplicas") in (
        _refused([gpu], dict(plan.config))
    )
