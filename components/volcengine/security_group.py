"""Security groups: admin ports from `adminCidrs`, and node traffic inside the cluster networks.

Rules are inline (`IngressPermissions`/`EgressPermissions`) and the provider refuses a rule that
leaves any of `description`, `policy`, `port_start`, `port_end`, `priority`, `protocol` unset
(NotNull validators: terraform-provider-volcenginecc@v0.0.53
internal/volcengine/vpc/security_group_resource_gen.go:365-460), so each rule sets all six.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_volcenginecc as volcenginecc

from components.admin_access import ADMIN_GROUP_DESCRIPTION, ADMIN_PORTS

from .tags import tag_list

ALL_PORTS = -1
"""Protocol `all` (and icmp) takes only -1 as its port range (security_group_resource_gen.go
port_start/port_end descriptions)."""


def rule(cidr: str, protocol: str, low: int, high: int, description: str) -> dict[str, Any]:
    return {
        "cidr_ip": cidr,
        "protocol": protocol,
        "port_start": low,
        "port_end": high,
        "policy": "accept",
        "priority": 1,
        "description": description,
    }


def _group(
    parent: pulumi.Resource,
    name: str,
    vpc_id: pulumi.Input[str],
    description: str,
    ingress: Sequence[Mapping[str, Any]],
    egress: Sequence[Mapping[str, Any]],
    tags: Mapping[str, str],
) -> volcenginecc.vpc.SecurityGroup:
    return volcenginecc.vpc.SecurityGroup(
        name,
        security_group_name=name,
        vpc_id=vpc_id,
        description=description,
        ingress_permissions=[dict(r) for r in ingress],
        egress_permissions=[dict(r) for r in egress],
        tags=tag_list(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )


@dataclass(frozen=True)
class AdminSecurityGroupArgs:
    vpc_id: pulumi.Input[str]
    admin_cidrs: Sequence[str]
    """No ingress rule at all when empty: nothing is reachable until someone lists a network."""
    tags: Mapping[str, str]


class AdminSecurityGroup(pulumi.ComponentResource):
    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: AdminSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:AdminSecurityGroup", name, None, opts)
        ingress = [
            rule(cidr, "tcp", port, port, f"{service} from admin network {cidr}")
            for cidr in args.admin_cidrs
            for port, service in ADMIN_PORTS
        ]
        group = _group(
            self, f"{name}-admin-sg", args.vpc_id, ADMIN_GROUP_DESCRIPTION, ingress, [], args.tags
        )
        self.security_group_id = group.security_group_id
        self.register_outputs({"security_group_id": self.security_group_id})


@dataclass(frozen=True)
class NodeSecurityGroupArgs:
    vpc_id: pulumi.Input[str]
    internal_cidrs: Sequence[str]
    """VPC, pod and Service networks: nodes, pods and the managed control plane talk from these."""
    tags: Mapping[str, str]


class NodeSecurityGroup(pulumi.ComponentResource):
    """All traffic from inside the cluster's networks; all egress (through the NAT)."""

    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:NodeSecurityGroup", name, None, opts)
        ingress = [
            rule(cidr, "all", ALL_PORTS, ALL_PORTS, f"cluster traffic from {cidr}")
            for cidr in args.internal_cidrs
        ]
        egress = [rule("0.0.0.0/0", "all", ALL_PORTS, ALL_PORTS, "egress through the NAT gateway")]
        group = _group(
            self, f"{name}-nodes-sg", args.vpc_id, "gpuinfra nodes", ingress, egress, args.tags
        )
        self.security_group_id = group.security_group_id
        self.register_outputs({"security_group_id": self.security_group_id})
