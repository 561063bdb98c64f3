"""What settings validation needs to know about Volcano Engine (火山引擎), and the VKE-only keys.

Provider: pulumi-volcenginecc 0.0.45, which bridges volcengine/terraform-provider-volcenginecc
v0.0.53 (Cloud Control; `provider/go.mod` at the pulumi-volcenginecc tag). Paths cited below
are in that repository at that tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..reader import ConfigReader
from .cidrs import network_or_none, private_cidr
from .rules import CloudRules

CLOUD = "volcengine"
ZONES_KEY = "vkeZones"

_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+(-\d+)?)-(?P<letter>[a-z])$")
"""Volcano Engine zones are the region and a letter: `cn-beijing-a`, `cn-shanghai-b`."""
_NOT_ON_VKE = {
    "clusterLogTypes": "VKE sends no control-plane logs to CloudWatch",
    "clusterLogRetentionDays": "VKE sends no control-plane logs to CloudWatch",
    "publicSubnetCidrs": "a Volcano Engine NAT gateway sits in a private subnet; no public one",
    "gpuPoolScaleDownDelayMinutes": "VKE's autoscaler add-on keeps its own scale-down delay; "
    "this stack sets none of its options",
    "gpuDriverVersion": "this stack does not choose the GPU driver on VKE (the node image does)",
}


def tos_bucket_name_problem(name: str) -> str | None:
    """Why `name` is not a TOS bucket name, or None.

    The provider checks 3 to 63 characters (terraform-provider-volcenginecc@v0.0.53
    internal/volcengine/tos/bucket_resource_gen.go:1024-1026). The trainer reaches the bucket
    with virtual-hosted S3 addressing (`<bucket>.tos-s3-<region>...`), so the name must also
    be a DNS label: lowercase letters, digits and hyphens, no hyphen at either end.
    """
    if not 3 <= len(name) <= 63:
        return "must be 3 to 63 characters long"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*[a-z0-9]", name):
        return (
            "only lowercase letters, digits and hyphens, starting and ending with a letter or digit"
        )
    return None


RULES = CloudRules(
    cloud=CLOUD,
    title="Volcano Engine",
    region_key="volcenginecc:region",
    region_example="cn-beijing",
    # cn-beijing, cn-shanghai, cn-guangzhou, cn-hongkong, ap-southeast-1 ...
    region_pattern=re.compile(r"^(cn|ap)-[a-z]+(-\d+)?$"),
    # General purpose g4i, 8 vCPU / 32 GiB: CoreDNS, metrics, the autoscaler and the webhook.
    default_system_instance_type="ecs.g4i.2xlarge",
    bucket_name_problem=tos_bucket_name_problem,
)


@dataclass(frozen=True)
class VolcengineSettings:
    zones: tuple[str, ...]
    """Zone of each private subnet, in order (`vkeZones`): pinned, never looked up."""
    pod_cidr: str
    service_cidr: str
    bucket_name: str
    """The TOS bucket's name (`bucketName`, or `<namePrefix>-data`)."""


def parse(
    r: ConfigReader,
    *,
    region: str,
    name_prefix: str,
    vpc_cidr: str,
    zone_count: int,
    api_endpoint_public: bool,
) -> VolcengineSettings:
    """Read and check the VKE-only keys (and generic ones VKE limits), recording problems."""
    for key, why in _NOT_ON_VKE.items():
        if key in r.raw:
            r.problem(key, r.raw[key], f"not used on Volcano Engine ({why}); remove it")
    if api_endpoint_public:
        r.problem(
            "apiEndpointPublic",
            True,
            "on Volcano Engine this stack cannot limit the public API endpoint to adminCidrs: "
            "VKE's allowlist (ApiServerPublicAccessConfig.AccessSourceIpsv4, empty = "
            "0.0.0.0/0) is not an argument of the provider's vke.Cluster (pulumi-volcenginecc "
            "0.0.45; the Cloud Control schema Volcengine_VKE_Cluster.json has only "
            "PublicAccessNetworkConfig), so it would be open to the whole internet. Keep it "
            "false with gpuLayer: separate, and deploy the GPU layer from a `cloud: kubernetes` "
            "stack whose clusterStack names this one, inside the VPC (self-hosted runner, "
            "bastion or VPN)",
        )
    if r.string("natGateways") == "perAz":
        r.problem(
            "natGateways",
            "perAz",
            "on Volcano Engine one NAT gateway serves every zone and fails over to a backup zone "
            "by itself (Cloud Control schema Volcengine_NatGateway_NGW.json, SubnetId); "
            "use single",
        )
    if r.boolean("workstationEnabled"):
        r.problem(
            "workstationEnabled",
            True,
            "the GPU workstation is not built for Volcano Engine yet; set it to false (run a "
            "notebook as a training Job on the GPU pool, or use an ECS GPU instance you manage)",
        )
    vpc = network_or_none(vpc_cidr)
    pod = private_cidr(r, "vkePodCidr", 8, 24)
    service = private_cidr(r, "vkeServiceCidr", 12, 24)
    for key, net in (("vkePodCidr", pod), ("vkeServiceCidr", service)):
        if net is not None and vpc is not None and net.overlaps(vpc):
            r.problem(key, str(net), f"must not overlap vpcCidr {vpc} (VKE routes both)")
    if pod is not None and service is not None and pod.overlaps(service):
        r.problem("vkeServiceCidr", str(service), f"must not overlap vkePodCidr {pod}")
    given = r.string("bucketName")
    return VolcengineSettings(
        zones=_zones(r, region, zone_count),
        pod_cidr=r.string("vkePodCidr"),
        service_cidr=r.string("vkeServiceCidr"),
        bucket_name=given or f"{name_prefix}-data",
    )


def _zones(r: ConfigReader, region: str, zone_count: int) -> tuple[str, ...]:
    """`vkeZones`: required, one zone per private subnet, in the stack's region, no repeats.

    A subnet's `ZoneId` is replaced on change (terraform-provider-volcenginecc@v0.0.53
    internal/volcengine/vpc/subnet_resource_gen.go:397-399, RequiresReplace), and
    pulumi-volcenginecc has no zone or stock lookup: the zones are named once in config and
    never move a subnet (or the nodes in it) afterwards.
    """
    zones = r.strings(ZONES_KEY)
    example = f"[{region or 'cn-beijing'}-a, {region or 'cn-beijing'}-b]"
    if not zones:
        r.problem(
            ZONES_KEY,
            None,
            f"required on Volcano Engine: the zone of each private subnet, e.g. {example}, "
            f"{zone_count} of them (availabilityZoneCount), in zones that sell the GPU type "
            "(console: ECS > Instances > Create, or the DescribeAvailableResource API)",
        )
        return ()
    problems = False
    for zone in zones:
        match = _ZONE.match(zone)
        if match is None or (region and match.group("region") != region):
            r.problem(
                ZONES_KEY, zone, f"must be a zone of {region or 'the stack region'}, e.g. {example}"
            )
            problems = True
    if len(set(zones)) != len(zones):
        r.problem(ZONES_KEY, list(zones), "must not repeat a zone (one subnet per zone)")
        problems = True
    if len(zones) != zone_count:
        r.problem(
            ZONES_KEY,
            list(zones),
            f"needs one zone per private subnet: {zone_count} (availabilityZoneCount)",
        )
        problems = True
    return () if problems else zones
