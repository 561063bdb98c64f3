"""Admin security group: SSH, Jupyter and TensorBoard from the admin networks only."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.admin_access import ADMIN_GROUP_DESCRIPTION, ADMIN_PORTS


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
        super().__init__("gpuinfra:aws:AdminSecurityGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-admin-sg",
            vpc_id=args.vpc_id,
            description=ADMIN_GROUP_DESCRIPTION,
            tags={**args.tags, "Name": f"{name}-admin-sg"},
            opts=child,
        )
        for cidr in args.admin_cidrs:
            is_v6 = ipaddress.ip_network(cidr).version == 6
            slug = cidr.replace("/", "-").replace(":", "-").replace(".", "-")
            for port, service in ADMIN_PORTS:
                aws.vpc.SecurityGroupIngressRule(
                    f"{name}-admin-{port}-{slug}",
                    security_group_id=group.id,
                    ip_protocol="tcp",
                    from_port=port,
                    to_port=port,
                    cidr_ipv4=None if is_v6 else cidr,
                    cidr_ipv6=cidr if is_v6 else None,
                    description=f"{service} from admin network {cidr}",
                    tags={**args.tags, "Name": f"{name}-admin-{port}"},
                    opts=child,
                )
        self.security_group_id = group.id
        self.register_outputs({"security_group_id": self.security_group_id})
