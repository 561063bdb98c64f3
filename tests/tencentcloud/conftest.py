"""The Tencent Cloud dev stack, built once under the mock engine, and helpers to read it."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import build, flat_if_pool_keys

STACK = "tencentcloud-dev"
T = "tencentcloud:"
CLUSTER = T + "Kubernetes/cluster:Cluster"
ENDPOINT = T + "Kubernetes/clusterEndpoint:ClusterEndpoint"
NODE_POOL = T + "Kubernetes/nodePool:NodePool"
RULE_SET = T + "Security/groupRuleSet:GroupRuleSet"
SECURITY_GROUP = T + "Security/group:Group"
BUCKET = T + "Cos/bucket:Bucket"
ROLE = T + "Cam/role:Role"
POLICY = T + "Cam/policy:Policy"
SUBNET = T + "Subnet/instance:Instance"


def build_tc(overrides: dict[str, object] | None = None) -> Plan:
    """The dev stack; with a flat per-pool key overridden, its single-pool form (pool `gpu`)."""
    return build(STACK, flat_if_pool_keys(STACK, overrides))


@pytest.fixture(scope="session")
def tc_plan() -> Plan:
    return build_tc()


def pool(plan: Plan, role: str) -> RecordedResource:
    return plan.one(NODE_POOL, f"gpuinfra-{STACK}-{role}-pool")


def rules_of(plan: Plan, group_suffix: str) -> RecordedResource:
    return plan.one(RULE_SET, f"gpuinfra-{STACK}-{group_suffix}-rules")
