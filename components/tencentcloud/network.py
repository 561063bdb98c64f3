"""VPC with one private subnet per zone that sells the GPU type, and NAT for egress.

A Tencent NAT gateway belongs to the VPC (no public subnet needed); nodes get no public
IP and reach the internet (images, datasets) through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from components.settings.model import NatGateways


@dataclass(frozen=True)
class TencentNetworkArgs:
    vpc_cidr: str
    subnet_cidrs: Sequence[str]
    """One per zone; as many zones as subnets."""
    gpu_instance_type: str
    charge_type: str
    """`SPOTPAID` or `POSTPAID_BY_HOUR`: zones must sell the GPU type this way."""
    nat_gateways: NatGateways
    tags: Mapping[str, str]


class TencentNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    subnet_ids: list[pulumi.Output[str]]
    zones: list[pulumi.Output[str]]

    def __init__(
        self, name: str, args: TencentNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        family = args.gpu_instance_type.split(".")[0]
        offered = tencentcloud.instance.get_types_output(
            filters=[
                {"name": "instance-family", "values": [family]},
                {"name": "instance-charge-type", "values": [args.charge_type]},
            ],
            exclude_sold_out=True,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        zone_names = offered.instance_types.apply(
            lambda types: zones_offering(
                [(t.instance_type, t.availability_zone) for t in types], args.gpu_instance_type
            )
        )
        self.zones = [zone_names.apply(_nth(i, args)) for i in range(len(args.subnet_cidrs))]

        vpc = tencentcloud.vpc.Instance(
            f"{name}-vpc",
            name=f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            tags=dict(args.tags),
            opts=child,
        )

        nat_count = len(args.subnet_cidrs) if args.nat_gateways == "perAz" else 1
        route_tables = []
        for i in range(nat_count):
            suffix = f"-{i + 1}" if args.nat_gateways == "perAz" else ""
            eip = tencentcloud.eip.Instance(
                f"{name}-nat{suffix}-eip",
                name=f"{name}-nat{suffix}",
                internet_charge_type="TRAFFIC_POSTPAID_BY_HOUR",
                internet_max_bandwidth_out=100,
                tags=dict(args.tags),
                opts=child,
            )
            nat = tencentcloud.nat.Gateway(
                f"{name}-nat{suffix}",
                name=f"{name}-nat{suffix}",
                vpc_id=vpc.id,
                assigned_eip_sets=[eip.public_ip],
                zone=self.zones[i] if args.nat_gateways == "perAz" else None,
                tags=dict(args.tags),
                opts=child,
            )
            table = tencentcloud.route.Table(
                f"{name}-private{suffix}-rt",
                name=f"{name}-private{suffix}",
                vpc_id=vpc.id,
                tags=dict(args.tags),
                opts=child,
            )
            tencentcloud.route.TableEntry(
                f"{name}-private{suffix}-default-route",
                route_table_id=table.id,
                destination_cidr_block="0.0.0.0/0",
                next_type="NAT",
                next_hub=nat.id,
                description="Egress of private nodes through the NAT gateway",
                opts=child,
            )
            route_tables.append(table)

        subnets = []
        for i, cidr in enumerate(args.subnet_cidrs):
            table = route_tables[i] if args.nat_gateways == "perAz" else route_tables[0]
            subnets.append(
                tencentcloud.subnet.Instance(
                    f"{name}-private-{i + 1}",
                    name=f"{name}-private-{i + 1}",
                    vpc_id=vpc.id,
                    cidr_block=cidr,
                    availability_zone=self.zones[i],
                    route_table_id=table.id,
                    tags=dict(args.tags),
                    opts=child,
                )
            )

        self.vpc_id = vpc.id
        self.subnet_ids = [s.id for s in subnets]
        self.register_outputs({"vpc_id": self.vpc_id, "subnet_ids": self.subnet_ids})


def zones_offering(offers: Sequence[tuple[str, str]], instance_type: str) -> list[str]:
    """Zones (sorted, no repeats) whose offers include `instance_type`."""
    return sorted({zone for offered, zone in offers if offered == instance_type})


def _nth(index: int, args: TencentNetworkArgs) -> Callable[[list[str]], str]:
    def pick(zones: list[str]) -> str:
        if index >= len(zones):
            raise ValueError(
                f"{args.gpu_instance_type} is on sale ({args.charge_type}) in "
                f"{len(zones)} zone(s) of this region ({', '.join(zones) or 'none'}); "
                f"gpuinfra:availabilityZoneCount asks for {index + 1}"
            )
        return zones[index]

    return pick
