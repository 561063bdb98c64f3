"""VPC with vSwitches in zones that sell the GPU types; egress is ACK's NAT gateway.

On Alibaba Cloud a vSwitch is neither public nor private: an ECS instance is private
unless it gets a public IP or an EIP. Nodes get neither; they reach the internet (image
pulls, package mirrors) through SNAT on a NAT gateway that ACK creates with the cluster
(CreateCluster `snat_entry`, see components/alicloud/cluster.py): one NAT gateway, one SNAT
entry per node vSwitch, removed with the cluster. This component makes no NAT gateway of
its own: ACK would configure SNAT beside it. The "public" vSwitches hold internet-facing load
balancers and a public workstation.
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
    """One per zone: internet-facing load balancers (and a public workstation)."""
    private_subnet_cidrs: Sequence[str]
    """One per zone: nodes."""
    gpu_instance_types: Sequence[str]
    """Zones come from a lookup of the zones that sell each of these types (and allow
    vSwitches): every GPU pool spans every node vSwitch."""
    tags: Mapping[str, str]


class AlicloudNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    zone_ids: list[pulumi.Output[str]]
    node_vswitch_ids: list[pulumi.Output[str]]
    public_vswitch_ids: list[pulumi.Output[str]]

    def __init__(
        self, name: str, args: AlicloudNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def tags(role: str) -> dict[str, str]:
            return {**args.tags, "Name": f"{name}-{role}"}

        # Only zones where every GPU pool's type is on sale: a vSwitch elsewhere would give a
        # node pool a zone where it can never get a GPU node. One lookup per type, in the
        # order of the first (a single pool's zones are its lookup's, as they always were).
        types = list(dict.fromkeys(args.gpu_instance_types))
        lookups = [
            alicloud.get_zones_output(
                available_instance_type=instance_type,
                available_resource_creation="VSwitch",
                opts=pulumi.InvokeOutputOptions(parent=self),
            ).ids
            for instance_type in types
        ]
        zone_ids = pulumi.Output.all(*lookups).apply(_common_zones)
        self.zone_ids = [
            zone_ids.apply(_nth(i, types)) for i in range(len(args.private_subnet_cidrs))
        ]

        vpc = alicloud.vpc.Network(
            f"{name}-vpc",
            vpc_name=f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            description="gpuinfra VPC: ACK nodes without public IPs, egress through ACK's NAT",
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
                # zone_id is ForceNew and comes from a lookup that may answer differently once
                # Alibaba sells the type in another zone: the first answer is kept, so a new
                # zone never replaces a vSwitch (and the nodes in it).
                opts=pulumi.ResourceOptions(parent=self, ignore_changes=["zoneId"]),
            )

        public = [
            vswitch(f"public-{i + 1}", cidr, self.zone_ids[i])
            for i, cidr in enumerate(args.public_subnet_cidrs)
        ]
        nodes = [
            vswitch(f"private-{i + 1}", cidr, self.zone_ids[i])
            for i, cidr in enumerate(args.private_subnet_cidrs)
        ]

        self.vpc_id = vpc.id
        self.node_vswitch_ids = [s.id for s in nodes]
        self.public_vswitch_ids = [s.id for s in public]
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "node_vswitch_ids": self.node_vswitch_ids,
                "public_vswitch_ids": self.public_vswitch_ids,
            }
        )


def _common_zones(answers: list[list[str]]) -> list[str]:
    """The zones of the first answer that every other answer lists too."""
    first, *rest = answers
    return [zone for zone in first if all(zone in other for other in rest)]


def _nth(index: int, instance_types: Sequence[str]) -> Callable[[list[str]], str]:
    def pick(ids: list[str]) -> str:
        if index >= len(ids):
            sold = " and ".join(instance_types)
            raise ValueError(
                f"only {len(ids)} zone(s) of this region sell {sold} "
                f"({', '.join(ids) or 'none'}); gpuinfra:availabilityZoneCount asks for "
                f"{index + 1}: lower it, or pick a region or GPU pool instance types with more "
                "zones"
            )
        return ids[index]

    return pick
