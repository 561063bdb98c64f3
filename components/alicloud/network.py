"""VPC with vSwitches in zones that sell the GPU type, and one enhanced NAT gateway.

On Alibaba Cloud a vSwitch is neither public nor private: an ECS instance is private
unless it gets a public IP or an EIP. Nodes get neither; they reach the internet (image
pulls, package mirrors) through SNAT on the NAT gateway's EIP. The "public" vSwitches hold
the NAT gateway and internet-facing load balancers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud


@dataclass(frozen=True)
class AlicloudNetworkArgs:
    vpc_cidr: str
    public_subnet_cidrs: Sequence[str]
    """One per zone: NAT gateway (in the first) and internet-facing load balancers."""
    private_subnet_cidrs: Sequence[str]
    """One per zone: nodes."""
    gpu_instance_type: str
    """Zones come from a lookup of the zones that sell this type (and allow vSwitches)."""
    tags: Mapping[str, str]


class AlicloudNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    zone_ids: list[pulumi.Output[str]]
    node_vswitch_ids: list[pulumi.Output[str]]
    public_vswitch_ids: list[pulumi.Output[str]]
    nat_gateway_id: pulumi.Output[str]
    nat_public_ip: pulumi.Output[str]

    def __init__(
        self, name: str, args: AlicloudNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def tags(role: str) -> dict[str, str]:
            return {**args.tags, "Name": f"{name}-{role}"}

        # Only zones where the GPU type is on sale: a vSwitch elsewhere would give the
        # node pool a zone where it can never get a GPU node.
        zones = alicloud.get_zones_output(
            available_instance_type=args.gpu_instance_type,
            available_resource_creation="VSwitch",
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.zone_ids = [
            zones.ids.apply(_nth(i, args.gpu_instance_type))
            for i in range(len(args.private_subnet_cidrs))
        ]

        vpc = alicloud.vpc.Network(
            f"{name}-vpc",
            vpc_name=f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            description="gpuinfra VPC: ACK nodes without public IPs, egress through NAT",
            tags=tags("vpc"),
            opts=child,
        )

        def vswitch(role: str, cidr: str, zone: pulumi.Output[str]) -> alicloud.vpc.Switch:
            return alicloud.vpc.Switch(
                f"{name}-{role}",
                vswitch_name=f"{name}-{role}",
                vpc_id=vpc.id,
                cidr_block=cidr,
                zone_id=zone,
                tags=tags(role),
                opts=child,
            )

        public = [
            vswitch(f"public-{i + 1}", cidr, self.zone_ids[i])
            for i, cidr in enumerate(args.public_subnet_cidrs)
        ]
        nodes = [
            vswitch(f"private-{i + 1}", cidr, self.zone_ids[i])
            for i, cidr in enumerate(args.private_subnet_cidrs)
        ]

        # Enhanced is the only NAT type Alibaba still sells; creating an enhanced internet
        # NAT gateway adds the 0.0.0.0/0 route to it in the VPC's route table itself
        # (CreateNatGateway API reference, updated 2026-01-12), so no RouteEntry here.
        nat = alicloud.vpc.NatGateway(
            f"{name}-nat",
            nat_gateway_name=f"{name}-nat",
            vpc_id=vpc.id,
            vswitch_id=public[0].id,
            nat_type="Enhanced",
            network_type="internet",
            payment_type="PayAsYouGo",
            internet_charge_type="PayByLcu",
            description="Egress for ACK nodes (SNAT only; no DNAT entries)",
            tags=tags("nat"),
            opts=child,
        )
        eip = alicloud.ecs.EipAddress(
            f"{name}-nat-eip",
            address_name=f"{name}-nat-eip",
            description="Public address of the NAT gateway (egress only)",
            internet_charge_type="PayByTraffic",
            payment_type="PayAsYouGo",
            bandwidth="100",  # Mbit/s ceiling; billed by traffic
            isp="BGP",
            tags=tags("nat-eip"),
            opts=child,
        )
        association = alicloud.ecs.EipAssociation(
            f"{name}-nat-eip-association",
            allocation_id=eip.id,
            instance_id=nat.id,
            instance_type="Nat",
            opts=child,
        )
        for i, node_vswitch in enumerate(nodes):
            alicloud.vpc.SnatEntry(
                f"{name}-private-{i + 1}-snat",
                snat_entry_name=f"{name}-private-{i + 1}",
                snat_table_id=nat.snat_table_ids,
                source_vswitch_id=node_vswitch.id,
                snat_ip=eip.ip_address,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[association]),
            )

        self.vpc_id = vpc.id
        self.node_vswitch_ids = [s.id for s in nodes]
        self.public_vswitch_ids = [s.id for s in public]
        self.nat_gateway_id = nat.id
        self.nat_public_ip = eip.ip_address
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "node_vswitch_ids": self.node_vswitch_ids,
                "public_vswitch_ids": self.public_vswitch_ids,
                "nat_public_ip": self.nat_public_ip,
            }
        )


def _nth(index: int, instance_type: str) -> Callable[[list[str]], str]:
    def pick(ids: list[str]) -> str:
        if index >= len(ids):
            raise ValueError(
                f"only {len(ids)} zone(s) of this region sell {instance_type} "
                f"({', '.join(ids) or 'none'}); gpuinfra:availabilityZoneCount asks for "
                f"{index + 1}: lower it, or pick a region or gpuPoolInstanceType with more zones"
            )
        return ids[index]

    return pick
