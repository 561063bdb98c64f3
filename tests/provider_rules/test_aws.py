"""AWS provider rules: each one refuses an input that breaks it and accepts the stacks' own.

Most cases are plain recorded resources (the engine's camelCase inputs, as a rule sees them);
a few run a small program through the mock engine, where the mocks' answers matter (zone IDs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi_aws as aws
import pytest

from gpuinfra.engine import Plan, RecordedResource, run_program
from gpuinfra.provider_rules import Refusal, check_resources

_COUNTER = iter(range(1_000_000))


def res(
    type_: str,
    inputs: Mapping[str, Any],
    *,
    name: str | None = None,
    outputs: Mapping[str, Any] | None = None,
    id: str | None = None,  # noqa: A002 (the engine's word)
    deps: tuple[str, ...] = (),
) -> RecordedResource:
    n = next(_COUNTER)
    name = name or f"r{n}"
    return RecordedResource(
        urn=f"urn:pulumi:s::p::{type_}::{name}", type=type_, name=name, parent=None,
        provider=None, custom=True, protect=False, inputs=dict(inputs),
        outputs={**inputs, **(outputs or {})}, id=id or f"id-{n}", dependencies=list(deps),
    )  # fmt: skip


def refused(rule: str, *resources: RecordedResource) -> list[Refusal]:
    return [r for r in check_resources(resources) if r.rule == f"aws.{rule}"]


def fields(rule: str, *resources: RecordedResource) -> list[str]:
    return [r.field for r in refused(rule, *resources)]


CLUSTER = "aws:eks/cluster:Cluster"
SUBNET = "aws:ec2/subnet:Subnet"


def subnet(zone_id: str) -> RecordedResource:
    return res(SUBNET, {"availabilityZoneId": zone_id, "cidrBlock": "10.0.0.0/24"})


def cluster(subnets: list[RecordedResource], **extra: Any) -> RecordedResource:
    inputs: dict[str, Any] = {
        "name": "c",
        "version": "1.35",
        "vpcConfig": {"subnetIds": [s.id for s in subnets], "endpointPublicAccess": False},
        "accessConfig": {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True},
    }
    inputs.update(extra)
    return res(CLUSTER, inputs)


# --- EKS cluster: zones ----------------------------------------------------------------------


def test_eks_cluster_subnets_in_supported_zones() -> None:
    good = [subnet("use1-az1"), subnet("use1-az2")]
    assert not fields("eks_cluster_subnets_in_supported_zones", cluster(good), *good)
    for zone in ("use1-az3", "usw1-az2", "cac1-az3"):
        bad = [subnet("use1-az1"), subnet(zone)]
        assert fields("eks_cluster_subnets_in_supported_zones", cluster(bad), *bad) == [
            "vpcConfig.subnetIds"
        ]


def test_zones_picked_by_name_index_meet_the_zone_eks_refuses() -> None:
    """The old program's way (names[i]) in the mock account, where us-east-1b is use1-az3."""

    def program() -> None:
        zones = aws.get_availability_zones_output(state="available")
        subnets = [
            aws.ec2.Subnet(f"s{i}", vpc_id="vpc-1", cidr_block=f"10.0.{i}.0/24",
                           availability_zone=zones.names[i])
            for i in range(2)
        ]  # fmt: skip
        aws.eks.Cluster(
            "c", role_arn="arn:aws:iam::123456789012:role/r", version="1.35",
            vpc_config={"subnet_ids": [s.id for s in subnets]},
            access_config={"bootstrap_cluster_creator_admin_permissions": True},
        )  # fmt: skip

    plan = run_program(program, project="p", stack="s", config={}, provider_rules=False)
    found = [r for r in check_resources(plan.resources) if r.rule.endswith("supported_zones")]
    assert len(found) == 1 and "use1-az3" in found[0].message


def test_eks_cluster_subnets_span_two_zones() -> None:
    same = [subnet("use1-az1"), subnet("use1-az1")]
    assert fields("eks_cluster_subnets_span_two_zones", cluster(same), *same)
    two = [subnet("use1-az1"), subnet("use1-az2")]
    assert not fields("eks_cluster_subnets_span_two_zones", cluster(two), *two)


def test_shipped_stacks_meet_every_aws_rule(dev_plan: Plan, prod_plan: Plan) -> None:
    for plan in (dev_plan, prod_plan):
        assert not [r for r in check_resources(plan.resources) if r.rule.startswith("aws.")]
