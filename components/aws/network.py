"""VPC with public and private subnets across zones; nodes live only in private ones.

S3 traffic from the private subnets (datasets, checkpoints, and the ECR image layers ECR
serves from S3) goes through a gateway endpoint instead of the NAT gateway: gateway endpoints
cost nothing, while NAT charges per GB processed ($0.045/GB in us-east-1, VPC pricing page).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.settings.model import NatGateways

EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3")
"""Zones where EKS refuses cluster subnets, by zone ID (EKS user guide, "Subnet requirements
for clusters", awsdocs/amazon-eks-user-guide@4d52b4d latest/ug/networking/network-reqs.adoc:
86-101). Zone *names* map to different zones in every account, so only IDs can exclude them."""


@dataclass(frozen=True)
class AwsNetworkArgs:
    vpc_cidr: str
    public_subnet_cidrs: Sequence[str]
    private_subnet_cidrs: Sequence[str]
    nat_gateways: NatGateways
    region: str
    tags: Mapping[str, str]


class AwsNetwork(pulumi.ComponentResource):
    vpc_id: pulumi.Output[str]
    public_subnet_ids: list[pulumi.Output[str]]
    private_subnet_ids: list[pulumi.Output[str]]
    availability_zone_ids: list[pulumi.Output[str]]

    def __init__(
        self, name: str, args: AwsNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def tags(role: str) -> dict[str, str]:
            return {**args.tags, "Name": f"{name}-{role}"}

        # Zones that need no opt-in (Local/Wavelength zones lack most GPU types), less those
        # EKS refuses. Subnets are placed by zone ID: a name is a different zone per account.
        # The provider sorts zones by name and drops excluded IDs (terraform-provider-aws
        # internal/service/ec2/ec2_availability_zones_data_source.go), so the first N stay the
        # first N as long as the region adds zones under later letters.
        zones = aws.get_availability_zones_output(
            state="available",
            exclude_zone_ids=list(EKS_UNSUPPORTED_ZONE_IDS),
            filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.availability_zone_ids = [
            zones.zone_ids.apply(_nth(i)) for i in range(len(args.private_subnet_cidrs))
        ]

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags=tags("vpc"),
            opts=child,
        )
        # Managing the default security group with no rules strips AWS's allow-all
        # default, so nothing can be attached to it by accident.
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg", vpc_id=vpc.id, tags=tags("default-sg"), opts=child
        )
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags=tags("igw"), opts=child)

        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}],
            tags=tags("public-rt"),
            opts=child,
        )
        public_subnets = []
        for i, cidr in enumerate(args.public_subnet_cidrs):
            subnet = aws.ec2.Subnet(
                f"{name}-public-{i + 1}",
                vpc_id=vpc.id,
                cidr_block=cidr,
                availability_zone_id=self.availability_zone_ids[i],
                map_public_ip_on_launch=False,
                # Lets the AWS Load Balancer Controller find subnets for internet-facing LBs.
                tags={**tags(f"public-{i + 1}"), "kubernetes.io/role/elb": "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{i + 1}-rta",
                subnet_id=subnet.id,
                route_table_id=public_rt.id,
                opts=child,
            )
            public_subnets.append(subnet)

        nat_count = len(public_subnets) if args.nat_gateways == "perAz" else 1
        nats = []
        for i in range(nat_count):
            eip = aws.ec2.Eip(
                f"{name}-nat-{i + 1}-eip", domain="vpc", tags=tags(f"nat-{i + 1}"), opts=child
            )
            nats.append(
                aws.ec2.NatGateway(
                    f"{name}-nat-{i + 1}",
                    allocation_id=eip.id,
                    subnet_id=public_subnets[i].id,
                    tags=tags(f"nat-{i + 1}"),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                )
            )

        private_subnets = []
        private_route_tables = []
        for i, cidr in enumerate(args.private_subnet_cidrs):
            subnet = aws.ec2.Subnet(
                f"{name}-private-{i + 1}",
                vpc_id=vpc.id,
                cidr_block=cidr,
                availability_zone_id=self.availability_zone_ids[i],
                map_public_ip_on_launch=False,
                tags={**tags(f"private-{i + 1}"), "kubernetes.io/role/internal-elb": "1"},
                opts=child,
            )
            nat = nats[i] if args.nat_gateways == "perAz" else nats[0]
            route_table = aws.ec2.RouteTable(
                f"{name}-private-{i + 1}-rt",
                vpc_id=vpc.id,
                routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
                tags=tags(f"private-{i + 1}-rt"),
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{i + 1}-rta",
                subnet_id=subnet.id,
                route_table_id=route_table.id,
                opts=child,
            )
            private_subnets.append(subnet)
            private_route_tables.append(route_table)

        # The endpoint adds a route to S3's prefix list in each private route table; the
        # tables' inline routes leave such routes alone (the provider skips `vpce-` routes).
        # Default policy (any bucket): ECR's layer buckets and public datasets must stay
        # reachable; the node and pod roles decide which buckets may be used.
        self.s3_endpoint = aws.ec2.VpcEndpoint(
            f"{name}-s3-endpoint",
            vpc_id=vpc.id,
            service_name=f"com.amazonaws.{args.region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=[t.id for t in private_route_tables],
            tags=tags("s3-endpoint"),
            opts=child,
        )

        self.vpc_id = vpc.id
        self.public_subnet_ids = [s.id for s in public_subnets]
        self.private_subnet_ids = [s.id for s in private_subnets]
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "public_subnet_ids": self.public_subnet_ids,
                "private_subnet_ids": self.private_subnet_ids,
                "s3_endpoint_id": self.s3_endpoint.id,
            }
        )


def _nth(index: int) -> Callable[[list[str]], str]:
    def pick(names: list[str]) -> str:
        if index >= len(names):
            raise ValueError(
                f"the region offers {len(names)} availability zones without opt-in where EKS "
                f"accepts subnets; gpuinfra:availabilityZoneCount asks for {index + 1}"
            )
        return names[index]

    return pick
