"""VPC with one private subnet per pinned zone, and one NAT gateway with an EIP for egress.

Nodes get no public IP. A Volcano Engine NAT gateway sits in a subnet of the VPC and fails over
to a backup zone by itself (Cloud Control schema Volcengine_NatGateway_NGW.json, `SubnetId`),
so one gateway serves every zone; each subnet gets a SNAT entry through its EIP, and a route
table sends 0.0.0.0/0 to the gateway.

Sources: volcengine/terraform-provider-volcenginecc@v0.0.53 (what pulumi-volcenginecc 0.0.45
runs), `internal/volcengine/<service>/<resource>_resource_gen.go` and
`internal/service/cloudcontrol/schemas/Volcengine_<Service>_<Type>.json`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_volcenginecc as volcenginecc

from .tags import tag_list

EIP_PAY_BY_TRAFFIC = 3
"""EIP `BillingType` 3: pay-as-you-go by traffic (1 subscription, 2 by bandwidth cap); with 3
the bandwidth is 1 to 200 Mbps (Volcengine_VPC_EIP.json, `Bandwidth`)."""
EIP_BANDWIDTH_MBPS = 100
NAT_PAY_BY_SPEC = 2
"""NAT `BillingType` 2: pay-as-you-go by specification, the default
(Volcengine_NatGateway_NGW.json)."""
NAT_SPEC = "Small"


@dataclass(frozen=True)
class VolcengineNetworkArgs:
    vpc_cidr: str
    subnet_cidrs: Sequence[str]
    zones: Sequence[str]
    """One per subnet, pinned in settings (`vkeZones`): a subnet's zone is RequiresReplace
    (vpc/subnet_resource_gen.go:397-399) and there is no zone lookup in this provider."""
    tags: Mapping[str, str]


class VolcengineNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    subnet_ids: list[pulumi.Output[str]]
    zones: list[str]
    nat_public_ip: pulumi.Output[str]

    def __init__(
        self, name: str, args: VolcengineNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:Network", name, None, opts)
        if len(args.zones) != len(args.subnet_cidrs):
            raise ValueError("one pinned zone per subnet")
        child = pulumi.ResourceOptions(parent=self)
        tags = tag_list(args.tags)

        vpc = volcenginecc.vpc.Vpc(
            f"{name}-vpc",
            vpc_name=f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            description="gpuinfra GPU training network",
            tags=tags,
            opts=child,
        )
        subnets = [
            volcenginecc.vpc.Subnet(
                f"{name}-private-{i + 1}",
                subnet_name=f"{name}-private-{i + 1}",
                vpc_id=vpc.vpc_id,
                cidr_block=cidr,
                zone_id=zone,
                description=f"gpuinfra nodes in {zone}",
                tags=tags,
                opts=child,
            )
            for i, (cidr, zone) in enumerate(zip(args.subnet_cidrs, args.zones, strict=True))
        ]
        nat = volcenginecc.natgateway.Ngw(
            f"{name}-nat",
            nat_gateway_name=f"{name}-nat",
            vpc_id=vpc.vpc_id,
            subnet_id=subnets[0].subnet_id,
            network_type="internet",
            billing_type=NAT_PAY_BY_SPEC,
            spec=NAT_SPEC,
            description="Egress of the private GPU nodes (images, datasets, APIs)",
            tags=tags,
            opts=child,
        )
        eip = volcenginecc.vpc.Eip(
            f"{name}-nat-eip",
            name=f"{name}-nat",
            billing_type=EIP_PAY_BY_TRAFFIC,
            bandwidth=EIP_BANDWIDTH_MBPS,
            instance_id=nat.nat_gateway_id,
            instance_type="Nat",
            description="Public address of the NAT gateway",
            tags=tags,
            opts=child,
        )
        for i, subnet in enumerate(subnets):
            volcenginecc.natgateway.Snatentry(
                f"{name}-snat-{i + 1}",
                snat_entry_name=f"{name}-snat-{i + 1}",
                nat_gateway_id=nat.nat_gateway_id,
                eip_id=eip.allocation_id,
                subnet_id=subnet.subnet_id,
                opts=child,
            )
        volcenginecc.vpc.RouteTable(
            f"{name}-private-rt",
            route_table_name=f"{name}-private",
            vpc_id=vpc.vpc_id,
            description="Private subnets: default route through the NAT gateway",
            custom_route_entries=[
                {
                    "destination_cidr_block": "0.0.0.0/0",
                    "next_hop_type": "NatGW",
                    "next_hop_id": nat.nat_gateway_id,
                    "route_entry_name": f"{name}-default-via-nat",
                    "description": "Egress of private nodes through the NAT gateway",
                }
            ],
            subnet_ids=[s.subnet_id for s in subnets],
            tags=tags,
            opts=child,
        )

        self.vpc_id = vpc.vpc_id
        self.subnet_ids = [s.subnet_id for s in subnets]
        self.zones = list(args.zones)
        self.nat_public_ip = eip.eip_address
        self.register_outputs(
            {"vpc_id": self.vpc_id, "subnet_ids": self.subnet_ids, "nat_public_ip": eip.eip_address}
        )
