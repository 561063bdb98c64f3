"""Admin security group: SSH, Jupyter and TensorBoard from the admin networks only.

Only the GPU workstation joins it: ACK nodes run no SSH, Jupyter or TensorBoard and stay in
ACK's own (advanced) cluster group alone. ECS refuses an instance in both a basic and an
advanced group ("Basic and advanced security groups",
https://www.alibabacloud.com/help/en/ecs/user-guide/basic-security-groups-and-advanced-security-groups,
updated 2026-04-27), so the group's type is chosen here, not left to a default.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from components.admin_access import ADMIN_GROUP_DESCRIPTION, ADMIN_PORTS

SECURITY_GROUP_TYPE = "normal"
"""ECS `SecurityGroupType`: `normal` (basic) or `enterprise` (advanced)."""


@dataclass(frozen=True)
class AdminSecurityGroupArgs:
    vpc_id: pulumi.Input[str]
    admin_cidrs: Sequence[str]
    """No rule at all when empty: nothing is reachable until someone lists a network."""
    tags: Mapping[str, str]


class AdminSecurityGroup(pulumi.ComponentResource):
    security_group_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: AdminSecurityGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:AdminSecurityGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        group = alicloud.ecs.SecurityGroup(
            f"{name}-admin-sg",
            security_group_name=f"{name}-admin-sg",
            vpc_id=args.vpc_id,
            # Basic: the workstation is its only member, and the group's rules are CIDRs only.
            security_group_type=SECURITY_GROUP_TYPE,
            description=ADMIN_GROUP_DESCRIPTION,
            tags={**args.tags, "Name": f"{name}-admin-sg"},
            opts=child,
        )
        for cidr in args.admin_cidrs:
            is_v6 = ipaddress.ip_network(cidr).version == 6
            slug = cidr.replace("/", "-").replace(":", "-").replace(".", "-")
            for port, service in ADMIN_PORTS:
                alicloud.ecs.SecurityGroupRule(
                    f"{name}-admin-{port}-{slug}",
                    security_group_id=group.id,
                    type="ingress",
                    ip_protocol="tcp",
                    port_range=f"{port}/{port}",
                    cidr_ip=None if is_v6 else cidr,
                    ipv6_cidr_ip=cidr if is_v6 else None,
                    nic_type="intranet",  # the only NIC type a VPC security group has
                    policy="accept",
                    priority=1,
                    description=f"{service} from admin network {cidr}",
                    opts=child,
                )
        self.security_group_id = group.id
        self.register_outputs({"security_group_id": self.security_group_id})
