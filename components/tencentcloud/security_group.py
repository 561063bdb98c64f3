"""Security groups: admin ports, node traffic inside the VPC, and a public API endpoint.

A Tencent security group without rules drops everything, so each group lists exactly
what it lets in; none lets in 0.0.0.0/0.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from components.admin_access import ADMIN_GROUP_DESCRIPTION, ADMIN_PORTS

API_PORT = 443


def _source(cidr: str) -> dict[str, str]:
    """The rule field for a network: `cidr_block` (IPv4) or `ipv6_cidr_block`."""
    if ipaddress.ip_network(cidr).version == 6:
        return {"ipv6_cidr_block": cidr}
    return {"cidr_block": cidr}


def _group(
    parent: pulumi.Resource,
    name: str,
    description: str,
    ingresses: Sequence[Mapping[str, Any]],
    egresses: Sequence[Mapping[str, Any]],
    tags: Mapping[str, str],
) -> tencentcloud.security.Group:
    child = pulumi.ResourceOptions(parent=parent)
    group = tencentcloud.security.Group(
        name, name=name, description=description, tags=dict(tags), opts=child
    )
    tencentcloud.security.GroupRuleSet(
        f"{name}-rules",
        security_group_id=group.id,
        ingresses=[dict(rule) for rule in ingresses],
        egresses=[dict(rule) for rule in egresses],
        opts=child,
    )
    return group


@dataclass(frozen=True)
class AdminSecurityGroupArgs:
    admin_cidrs: Sequence[str]
    """No ingress rule at all when empty: nothing is reachable until someone lists a network."""
    tags: Mapping[str, str]


class AdminSecurityGroup(pulumi.ComponentResource):
    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: AdminSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:AdminSecurityGroup", name, None, opts)
        ingresses = [
            {
                "action": "ACCEPT",
                "protocol": "TCP",
                "port": str(port),
                "description": f"{service} from admin network {cidr}",
                **_source(cidr),
            }
            for cidr in args.admin_cidrs
            for port, service in ADMIN_PORTS
        ]
        group = _group(
            self,
            f"{name}-admin-sg",
            ADMIN_GROUP_DESCRIPTION,
            ingresses,
            [],
            args.tags,
        )
        self.security_group_id = group.id
        self.register_outputs({"security_group_id": self.security_group_id})


@dataclass(frozen=True)
class NodeSecurityGroupArgs:
    internal_cidrs: Sequence[str]
    """VPC and pod networks: nodes, pods and the managed control plane talk from these."""
    tags: Mapping[str, str]


class NodeSecurityGroup(pulumi.ComponentResource):
    """All traffic from inside the cluster's networks; all egress (through the NAT)."""

    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:NodeSecurityGroup", name, None, opts)
        ingresses = [
            {
                "action": "ACCEPT",
                "protocol": "ALL",
                "port": "ALL",
                "cidr_block": cidr,
                "description": f"cluster traffic from {cidr}",
            }
            for cidr in args.internal_cidrs
        ]
        egresses = [
            {
                "action": "ACCEPT",
                "protocol": "ALL",
                "port": "ALL",
                "cidr_block": "0.0.0.0/0",
                "description": "egress through the NAT gateway (images, datasets, APIs)",
            }
        ]
        group = _group(self, f"{name}-nodes-sg", "gpuinfra nodes", ingresses, egresses, args.tags)
        self.security_group_id = group.id
        self.register_outputs({"security_group_id": self.security_group_id})


@dataclass(frozen=True)
class ApiSecurityGroupArgs:
    admin_cidrs: Sequence[str]
    """The public API endpoint accepts only these networks' IPv4 ranges."""
    tags: Mapping[str, str]


class ApiSecurityGroup(pulumi.ComponentResource):
    """Guards TKE's public API endpoint (only created when `apiEndpointPublic` is on)."""

    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: ApiSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:ApiSecurityGroup", name, None, opts)
        ingresses = [
            {
                "action": "ACCEPT",
                "protocol": "TCP",
                "port": str(API_PORT),
                "cidr_block": cidr,
                "description": f"Kubernetes API from admin network {cidr}",
            }
            for cidr in args.admin_cidrs
            if ipaddress.ip_network(cidr).version == 4
        ]
        group = _group(
            self,
            f"{name}-api-sg",
            "gpuinfra public Kubernetes API endpoint: admin networks only",
            ingresses,
            [],
            args.tags,
        )
        self.security_group_id = group.id
        self.register_outputs({"security_group_id": self.security_group_id})
