"""VPC with one private subnet per zone, and NAT for egress.

A Tencent NAT gateway belongs to the VPC (no public subnet needed); nodes get no public
IP and reach the internet (images, datasets) through it.

A subnet's zone is ForceNew (terraform-provider-tencentcloud@v1.82.42
tencentcloud/services/vpc/resource_tc_subnet.go:35-40): a zone that moves replaces the subnet
and every node in it. So zones come from settings (`tkeZones`), or from a lookup of the zones
that offer every GPU pool's type (whatever their stock today: a zone that sells out for a
while stays in the list) whose answer cannot move a subnet that exists (`ignore_changes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from components.settings.model import NatGateways

ZONES_FROM_SETTINGS = "settings (gpuinfra:tkeZones)"
ZONES_LOOKED_UP = "lookup of zones offering {offers}; pin: gpuinfra:tkeZones"
"""Said when no zone is pinned: the lookup runs on every update, but a subnet that exists keeps
the zone it was created in (`ignore_changes`)."""


@dataclass(frozen=True)
class TencentNetworkArgs:
    vpc_cidr: str
    subnet_cidrs: Sequence[str]
    """One per zone; as many zones as subnets."""
    gpu_offers: Sequence[tuple[str, str]]
    """(instance type, `SPOTPAID` or `POSTPAID_BY_HOUR`) of each GPU pool: zones must offer
    each type that way (every pool spans every subnet)."""
    nat_gateways: NatGateways
    tags: Mapping[str, str]
    zones: Sequence[str] = ()
    """Pinned zones, one per subnet (`tkeZones`); empty: looked up."""


class TencentNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    subnet_ids: list[pulumi.Output[str]]
    zones: list[pulumi.Output[str]]
    """Each subnet's zone as the provider holds it (a looked-up zone never moves a subnet)."""
    zone_source: str
    """Where the zones came from, in one line (the preview shows it)."""

    def __init__(
        self, name: str, args: TencentNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        pinned = bool(args.zones)
        if pinned:
            if len(args.zones) != len(args.subnet_cidrs):
                raise ValueError("one pinned zone per subnet")
            wanted: list[pulumi.Output[str]] = [pulumi.Output.from_input(z) for z in args.zones]
            self.zone_source = ZONES_FROM_SETTINGS
        else:
            offers = list(dict.fromkeys(args.gpu_offers))
            answers = []
            for instance_type, charge_type in offers:
                offered = tencentcloud.instance.get_types_output(
                    filters=[
                        {"name": "instance-family", "values": [instance_type.split(".")[0]]},
                        {"name": "instance-charge-type", "values": [charge_type]},
                    ],
                    # Every zone that offers the type, sold out today or not: a list that
                    # changes only when Tencent stops offering the type somewhere.
                    exclude_sold_out=False,
                    opts=pulumi.InvokeOutputOptions(parent=self),
                )
                answers.append(offered.instance_types.apply(_zones_of(instance_type)))
            zone_names = pulumi.Output.all(*answers).apply(_common_zones)
            wanted = [zone_names.apply(_nth(i, offers)) for i in range(len(args.subnet_cidrs))]
            self.zone_source = ZONES_LOOKED_UP.format(offers=_describe(offers))
        # A looked-up zone is only used for a subnet (or NAT) that does not exist yet.
        keep_zone = [] if pinned else ["availabilityZone"]

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
                zone=wanted[i] if args.nat_gateways == "perAz" else None,
                tags=dict(args.tags),
                opts=pulumi.ResourceOptions(parent=self, ignore_changes=[] if pinned else ["zone"]),
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
                    availability_zone=wanted[i],
                    route_table_id=table.id,
                    tags=dict(args.tags),
                    opts=pulumi.ResourceOptions(parent=self, ignore_changes=keep_zone),
                )
            )

        self.vpc_id = vpc.id
        self.subnet_ids = [s.id for s in subnets]
        self.zones = [s.availability_zone for s in subnets]
        self.register_outputs(
            {"vpc_id": self.vpc_id, "subnet_ids": self.subnet_ids, "zones": self.zones}
        )


def zones_offering(offers: Sequence[tuple[str, str]], instance_type: str) -> list[str]:
    """Zones (sorted, no repeats) whose offers include `instance_type`."""
    return sorted({zone for offered, zone in offers if offered == instance_type})


def _zones_of(instance_type: str) -> Callable[[Sequence[Any]], list[str]]:
    """Reads a `get_types` answer: the zones that offer `instance_type`."""

    def read(types: Sequence[Any]) -> list[str]:
        return zones_offering(
            [(t.instance_type, t.availability_zone) for t in types], instance_type
        )

    return read


def _common_zones(answers: list[list[str]]) -> list[str]:
    """The zones of the first answer that every other answer lists too."""
    first, *rest = answers
    return [zone for zone in first if all(zone in other for other in rest)]


def _describe(offers: Sequence[tuple[str, str]]) -> str:
    return " and ".join(f"{instance_type} ({charge})" for instance_type, charge in offers)


def _nth(index: int, offers: Sequence[tuple[str, str]]) -> Callable[[list[str]], str]:
    def pick(zones: list[str]) -> str:
        if index >= len(zones):
            raise ValueError(
                f"{_describe(offers)} {'is' if len(offers) == 1 else 'are'} offered in "
                f"{len(zones)} zone(s) of this region ({', '.join(zones) or 'none'}); "
                f"gpuinfra:availabilityZoneCount asks for {index + 1}. Lower it, or name the "
                "zones with gpuinfra:tkeZones"
            )
        return zones[index]

    return pick
