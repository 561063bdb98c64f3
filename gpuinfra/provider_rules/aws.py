"""Provider rules for the aws resources the stacks create (see model.py).

pulumi-aws 7.x bridges hashicorp/terraform-provider-aws v6 (its provider/go.mod replaces the
module with the `upstream` submodule, pulumi/pulumi-aws#5665 onwards). Sources below cite the
provider file and the schema field or function that makes the check (read from the
terraform-provider-aws snapshot the search index holds), or the AWS documentation of the API
that refuses the request (EKS user guide at awsdocs/amazon-eks-user-guide@4d52b4d, file:line,
and its docs.aws.amazon.com page).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from components.settings import eks_versions

from .model import RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

Problems = Iterator[tuple[str, str]]

TFAWS = "hashicorp/terraform-provider-aws"
EKS_GUIDE = "awsdocs/amazon-eks-user-guide@4d52b4d latest/ug"

CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ACCESS_ENTRY = "aws:eks/accessEntry:AccessEntry"
ACCESS_POLICY_ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
SUBNET = "aws:ec2/subnet:Subnet"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"

EKS_UNSUPPORTED_ZONE_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})


def _today() -> dt.date:
    return dt.date.today()


def _subnet_zone_id(subnet: RecordedResource) -> str | None:
    """The zone ID a subnet lands in: given as `availabilityZoneId`, or what EC2 reports for
    the zone name (the mock fills `availabilityZoneId` in from the account's mapping)."""
    return subnet.inputs.get("availabilityZoneId") or subnet.outputs.get("availabilityZoneId")


def _subnets(ids: Any, ctx: RuleContext) -> list[RecordedResource]:
    found = (ctx.by_id(subnet_id) for subnet_id in (ids or []))
    return [s for s in found if s is not None and s.type == SUBNET]


# --- EKS cluster -----------------------------------------------------------------------------


@provider_rule(
    CLUSTER,
    source=f"{EKS_GUIDE}/networking/network-reqs.adoc:86-101 (https://docs.aws.amazon.com/eks/"
    "latest/userguide/network-reqs.html, Subnet requirements for clusters)",
)
def eks_cluster_subnets_in_supported_zones(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EKS refuses cluster subnets in use1-az3, usw1-az2 and cac1-az3 (by zone ID)."""
    for subnet in _subnets(get(resource.inputs, "vpcConfig.subnetIds"), ctx):
        zone_id = _subnet_zone_id(subnet)
        if zone_id in EKS_UNSUPPORTED_ZONE_IDS:
            yield (
                "vpcConfig.subnetIds",
                f"subnet {subnet.name!r} is in zone {zone_id}, where EKS creates no cluster; "
                "exclude it by zone ID (getAvailabilityZones exclude_zone_ids), not by name",
            )


@provider_rule(
    CLUSTER,
    source=f"{EKS_GUIDE}/networking/network-reqs.adoc:78 (https://docs.aws.amazon.com/eks/latest/"
    "userguide/network-reqs.html)",
)
def eks_cluster_subnets_span_two_zones(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EKS needs the cluster's subnets in at least two Availability Zones."""
    subnets = _subnets(get(resource.inputs, "vpcConfig.subnetIds"), ctx)
    zones = {_subnet_zone_id(s) for s in subnets}
    if subnets and None not in zones and len(zones) < 2:
        yield (
            "vpcConfig.subnetIds",
            f"all subnets are in {', '.join(sorted(z for z in zones if z))}; EKS needs subnets "
            "in at least two Availability Zones",
        )
