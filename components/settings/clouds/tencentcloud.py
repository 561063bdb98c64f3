"""What settings validation needs to know about Tencent Cloud, and the TKE-only settings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from components.catalog import tencentcloud_gpu_drivers as gpu_drivers
from components.catalog.tencentcloud_gpu_drivers import GpuDriverCombo

from ..reader import ConfigReader
from .cidrs import network_or_none, private_cidr
from .rules import CloudRules

TKE_VERSIONS: dict[str, str] = {"1.30": "1.30.0", "1.32": "1.32.2", "1.34": "1.34.1"}
"""Kubernetes minor -> the TKE cluster version to create. TKE releases only even minors
(release notes, https://www.tencentcloud.com/document/product/457/9315, checked
2026-11-30: 1.34.1-tke.1 is the newest on the international page). The provider passes the
string to CreateCluster unchecked (terraform-provider-tencentcloud@v1.82.42
tencentcloud/services/tke/resource_tc_kubernetes_cluster.go:88-93, no validator), so TKE's
API is the judge. 1.30.0 is the `cluster_version` of the provider's own examples at v1.82.42
(resource_tc_kubernetes_cluster.md:655); 1.34.1 appears there only after that release
(data_source_tc_kubernetes_cluster_available_extra_args.md at commit f6970a9, 2026-08-21);
1.32.2 has no second source. Check a version with the
`tencentcloud_kubernetes_available_cluster_versions` data source before relying on it."""

_APP_ID = re.compile(r"^\d{10}$")
"""COS bucket names end in `-` and exactly ten digits (terraform-provider-tencentcloud@v1.82.42
tencentcloud/common/validators.go:240-250, `ValidateCosBucketName`)."""
_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+(-[a-z]+)?)-(?P<number>\d+)$")
_COS_NAME = re.compile(r"^(?P<name>[a-z0-9]([a-z0-9-]*[a-z0-9])?)-(?P<appid>\d+)$")
_AWS_ONLY_KEYS = {
    "clusterLogTypes": "TKE sends no control-plane logs to CloudWatch",
    "clusterLogRetentionDays": "TKE sends no control-plane logs to CloudWatch",
    "publicSubnetCidrs": "a Tencent NAT gateway belongs to the VPC and needs no public subnet",
}


def cos_bucket_name_problem(name: str) -> str | None:
    """Why `name` is not a COS bucket name `<name>-<appid>`, or None.

    COS names a bucket `<custom name>-<APPID>`; the custom part takes lowercase letters,
    digits and hyphens and neither starts nor ends with a hyphen
    (https://www.tencentcloud.com/document/product/436/13312).
    """
    match = _COS_NAME.match(name)
    if not match:
        return (
            "must be <name>-<appid>: lowercase letters, digits and hyphens, not starting or "
            "ending with a hyphen, then '-' and the account's APPID, e.g. ml-data-1250000000"
        )
    return None


RULES = CloudRules(
    cloud="tencentcloud",
    title="Tencent Cloud",
    region_key="tencentcloud:region",
    region_example="ap-guangzhou",
    region_pattern=re.compile(r"^(ap|na|eu|sa)-[a-z]+(-[a-z]+)?(-\d+)?$"),
    # S5.LARGE8: 4 vCPU, 8 GB, Intel (CVM standard S5).
    default_system_instance_type="S5.LARGE8",
    bucket_name_problem=cos_bucket_name_problem,
)


@dataclass(frozen=True)
class TencentCloudSettings:
    app_id: str
    bucket_name: str
    """Full COS bucket name, `<name>-<appid>`."""
    cluster_version: str
    """TKE cluster version for the configured Kubernetes minor, e.g. `1.32.2`."""
    pod_cidr: str
    service_cidr: str
    max_services: int
    gpu_software: GpuDriverCombo | None
    """None: TKE's default driver for the OS; else driver, CUDA and cuDNN to install."""
    install_cuda: bool
    install_cudnn: bool
    zones: tuple[str, ...]
    """Zones of the private subnets, in order (`gpuinfra:tkeZones`); empty: looked up once."""


def parse(
    r: ConfigReader,
    *,
    region: str,
    name_prefix: str,
    kubernetes_version: str,
    vpc_cidr: str,
    zone_count: int,
) -> TencentCloudSettings:
    """Read and check the Tencent-only keys, recording problems on `r`."""
    for key, why in _AWS_ONLY_KEYS.items():
        if key in r.raw:
            r.problem(key, r.raw[key], f"not used on Tencent Cloud ({why}); remove it")

    cluster_version = TKE_VERSIONS.get(kubernetes_version, "")
    if kubernetes_version not in TKE_VERSIONS and "kubernetesVersion" in r.raw:
        r.problem(
            "kubernetesVersion",
            kubernetes_version,
            "TKE offers only even minors; allowed: " + ", ".join(TKE_VERSIONS),
        )
    elif kubernetes_version not in TKE_VERSIONS:
        r.problem(
            "kubernetesVersion",
            None,
            "set it for TKE (the default is not a TKE version); allowed: "
            + ", ".join(TKE_VERSIONS),
        )

    app_id = r.string("cosAppId")
    if not _APP_ID.match(app_id):
        r.problem(
            "cosAppId",
            app_id or None,
            "required on Tencent Cloud: the account's APPID, exactly 10 digits (console: "
            "Account Info), which every COS bucket name ends with",
        )
    bucket_name = _bucket_name(r, region, name_prefix, app_id)

    vpc = network_or_none(vpc_cidr)
    pod = private_cidr(r, "tkePodCidr", 12, 24, "TKE")
    service = private_cidr(r, "tkeServiceCidr", 17, 27, "TKE")
    for key, net in (("tkePodCidr", pod), ("tkeServiceCidr", service)):
        if net is not None and vpc is not None and net.overlaps(vpc):
            r.problem(key, str(net), f"must not overlap vpcCidr {vpc} (TKE routes both)")
    if pod is not None and service is not None and pod.overlaps(service):
        r.problem("tkeServiceCidr", str(service), f"must not overlap tkePodCidr {pod}")

    gpu_software, install_cuda, install_cudnn = _gpu_software(r)
    return TencentCloudSettings(
        app_id=app_id,
        bucket_name=bucket_name,
        cluster_version=cluster_version,
        pod_cidr=r.string("tkePodCidr"),
        service_cidr=r.string("tkeServiceCidr"),
        max_services=service.num_addresses if service is not None else 0,
        gpu_software=gpu_software,
        install_cuda=install_cuda,
        install_cudnn=install_cudnn,
        zones=_zones(r, region, zone_count),
    )


def _bucket_name(r: ConfigReader, region: str, name_prefix: str, app_id: str) -> str:
    given = r.string("bucketName")
    name = given or f"{name_prefix}-data-{app_id}"
    match = _COS_NAME.match(name)
    if given and match and match.group("appid") != app_id and _APP_ID.match(app_id):
        r.problem(
            "bucketName",
            given,
            f"must end with -{app_id}, the APPID in gpuinfra:cosAppId (COS names a bucket "
            "<name>-<appid>)",
        )
    # COS: region name plus bucket name at most 60 characters.
    if len(region) + len(name) > 60:
        where = "bucketName" if given else "namePrefix"
        r.problem(
            where,
            given or name_prefix,
            f"the bucket name '{name}' is too long: region ({region}) plus bucket name may "
            "have at most 60 characters on COS",
        )
    return name


def _gpu_software(r: ConfigReader) -> tuple[GpuDriverCombo | None, bool, bool]:
    driver = r.string("gpuDriverVersion")
    cuda = r.string("gpuCudaVersion")
    cudnn = r.string("gpuCudnnVersion")
    supported = "; ".join(
        f"{c.driver} + CUDA {c.cuda} + cuDNN {c.cudnn}" for c in gpu_drivers.SUPPORTED
    )
    if not driver:
        for key, value in (("gpuCudaVersion", cuda), ("gpuCudnnVersion", cudnn)):
            if value:
                r.problem(key, value, "needs gpuinfra:gpuDriverVersion; supported: " + supported)
        return None, False, False
    combo = gpu_drivers.for_driver(driver)
    if combo is None:
        r.problem(
            "gpuDriverVersion",
            driver,
            "not a driver TKE installs here; allowed: " + ", ".join(gpu_drivers.drivers()),
        )
        return None, False, False
    if cuda and cuda != combo.cuda:
        r.problem(
            "gpuCudaVersion",
            cuda,
            f"driver {driver} pairs with CUDA {combo.cuda}; supported: {supported}",
        )
    if cudnn and not cuda:
        r.problem("gpuCudnnVersion", cudnn, "needs gpuinfra:gpuCudaVersion")
    elif cudnn and cudnn != combo.cudnn:
        r.problem(
            "gpuCudnnVersion",
            cudnn,
            f"CUDA {combo.cuda} pairs with cuDNN {combo.cudnn}; supported: {supported}",
        )
    return combo, bool(cuda), bool(cudnn)


def _zones(r: ConfigReader, region: str, zone_count: int) -> tuple[str, ...]:
    """`tkeZones`: one zone per private subnet, in the stack's region, no repeats.

    A subnet's `availability_zone` is ForceNew (terraform-provider-tencentcloud@v1.82.42
    tencentcloud/services/vpc/resource_tc_subnet.go:35-40): naming the zones keeps every
    subnet, and the nodes in it, where it is whatever the zones' stock does later.
    """
    zones = r.strings("tkeZones")
    if not zones:
        return ()
    problems = False
    for zone in zones:
        match = _ZONE.match(zone)
        if match is None or (region and match.group("region") != region):
            r.problem(
                "tkeZones",
                zone,
                f"must be a zone of {region or 'the stack region'}, e.g. "
                f"{region or 'ap-guangzhou'}-3",
            )
            problems = True
    if len(set(zones)) != len(zones):
        r.problem("tkeZones", list(zones), "must not repeat a zone (one subnet per zone)")
        problems = True
    if len(zones) != zone_count:
        r.problem(
            "tkeZones",
            list(zones),
            f"needs one zone per private subnet: {zone_count} (availabilityZoneCount), or "
            "leave it empty to look them up once",
        )
        problems = True
    return () if problems else zones
