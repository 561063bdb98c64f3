"""The Volcano Engine dev stack, built once under the mock engine, and helpers to read it."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import build, flat_if_pool_keys

STACK = "volcengine-dev"
PREFIX = f"gpuinfra-{STACK}"
T = "volcenginecc:"
VPC = T + "vpc/vpc:Vpc"
SUBNET = T + "vpc/subnet:Subnet"
ROUTE_TABLE = T + "vpc/routeTable:RouteTable"
EIP = T + "vpc/eip:Eip"
SECURITY_GROUP = T + "vpc/securityGroup:SecurityGroup"
NAT = T + "natgateway/ngw:Ngw"
SNAT = T + "natgateway/snatentry:Snatentry"
CLUSTER = T + "vke/cluster:Cluster"
NODE_POOL = T + "vke/nodePool:NodePool"
KUBECONFIG = T + "vke/kubeconfig:Kubeconfig"
ADDON = T + "vke/addon:Addon"
BUCKET = T + "tos/bucket:Bucket"
BUCKET_ENCRYPTION = T + "tos/bucketEncryption:BucketEncryption"
ROLE = T + "iam/role:Role"
POLICY = T + "iam/policy:Policy"


def build_ve(overrides: dict[str, object] | None = None) -> Plan:
    """The dev stack; with a flat per-pool key overridden, its single-pool form (pool `gpu`)."""
    return build(STACK, flat_if_pool_keys(STACK, overrides))


@pytest.fixture(scope="session")
def ve_plan() -> Plan:
    return build_ve()


def pool(plan: Plan, role: str) -> RecordedResource:
    return plan.one(NODE_POOL, f"{PREFIX}-{role}-pool")
