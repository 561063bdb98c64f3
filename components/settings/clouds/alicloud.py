"""What settings validation needs to know about Alibaba Cloud, and its own keys.

`RULES` is what the generic validation looks up per cloud; `parse_alicloud` reads the
Alibaba-only keys and checks generic keys whose limits differ on ACK, ECS and OSS.
"""

from __future__ import annotations

import ipaddress
import re

from ..model import (
    AccessSettings,
    AlicloudSettings,
    ClusterSettings,
    NetworkSettings,
)
from ..reader import ConfigReader
from .rules import CloudRules

POD_CIDR = "172.20.0.0/16"
"""Flannel pod network; must not overlap the VPC (ACK refuses an overlap at creation)."""
SERVICE_CIDR = "172.21.0.0/20"
"""Kubernetes Service network; must not overlap the VPC or the pod network."""

SLS_MAX_TTL_DAYS = 3650
"""ACK sends control-plane logs to Simple Log Service, whose log stores keep 1 to 3650 days."""

ACK_VERSIONS: dict[str, str] = {"1.32": "1.32.7-aliyun.1", "1.33": "1.33.3-aliyun.1"}
"""Kubernetes minor -> the ACK version a new cluster gets, unless `ackVersion` pins another.
These are the versions the provider's own acceptance test creates (1.32.7-aliyun.1) and
upgrades to (1.33.3-aliyun.1): aliyun/terraform-provider-alicloud@ace5bcf8
alicloud/resource_alicloud_cs_managed_kubernetes_test.go:1431,1457 (last changed 2026-08-03).
ACK retires old patches for new clusters: list what your region offers with
`aliyun cs GET /api/v1/metadata/versions --ClusterType ManagedKubernetes --region <region>`
before the first `pulumi up`, and pin it with `ackVersion`. Pinned, never looked up: a new
patch must not upgrade a running cluster on an unrelated `pulumi up` (see README,
"Upgrading ACK")."""

_ACK_VERSION = re.compile(r"^1\.(\d+)\.\d+-aliyun\.\d+$")
_DRIVER_VERSION = re.compile(r"^\d{3}\.\d{1,3}(\.\d{1,3})?$")


def oss_bucket_name_problem(name: str) -> str | None:
    """Why `name` breaks OSS bucket naming rules, or None.

    OSS: 3 to 63 characters; lowercase letters, digits and hyphens only (no dots, no
    underscores); starts and ends with a lowercase letter or digit.
    """
    if not 3 <= len(name) <= 63:
        return "must be 3 to 63 characters long"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*[a-z0-9]", name):
        return (
            "only lowercase letters, digits and hyphens (no dots or underscores), "
            "starting and ending with a letter or digit"
        )
    return None


RULES = CloudRules(
    cloud="alicloud",
    title="Alibaba Cloud",
    region_key="alicloud:region",
    region_example="cn-hangzhou",
    # cn-hangzhou, cn-wulanchabu, ap-southeast-1, us-west-1, eu-central-1, me-east-1 ...
    region_pattern=re.compile(r"^[a-z]{2}-[a-z]+(-\d+)?$"),
    # General-purpose g7: 4 vCPU / 16 GiB, enough for CoreDNS, metrics-server and ACK add-ons.
    default_system_instance_type="ecs.g7.xlarge",
    bucket_name_problem=oss_bucket_name_problem,
)


def parse_alicloud(
    r: ConfigReader,
    *,
    cluster: ClusterSettings,
    network: NetworkSettings,
    access: AccessSettings,
) -> AlicloudSettings:
    """Read the Alibaba-only keys and check generic keys against ACK/ECS/OSS limits (a GPU
    pool's own Alibaba fields are read with the pool: components/settings/gpu_pools.py)."""
    driver = r.string("gpuDriverVersion")
    if driver and not _DRIVER_VERSION.match(driver):
        r.problem(
            "gpuDriverVersion",
            driver,
            "must be an NVIDIA driver version ACK offers, such as 550.144.03 (the value of "
            "the ack.aliyun.com/nvidia-driver-version node label); empty: ACK's default",
        )

    if network.nat_gateways != "single":
        r.problem(
            "natGateways",
            network.nat_gateways,
            "on Alibaba Cloud only single is supported: ACK creates one NAT gateway with one "
            "SNAT entry per node vSwitch when it creates the cluster",
        )
    _check_cluster_networks(r, network)

    if access.api_endpoint_public and not access.allow_public_admin_access:
        r.problem(
            "apiEndpointPublic",
            True,
            "on Alibaba Cloud this stack cannot limit the public API endpoint to adminCidrs: "
            "ACK filters it with an access control list on the API server CLB's listener, "
            "which ACK creates and pulumi-alicloud can only create, never adopt. It would be "
            "reachable from the whole internet. Keep it false (deploy from inside the VPC: "
            "VPN, bastion or a self-hosted runner), or also set "
            "gpuinfra:allowPublicAdminAccess to true to accept that (then add the ACL in the "
            "CLB console yourself)",
        )
    if not 1 <= cluster.log_retention_days <= SLS_MAX_TTL_DAYS:
        r.problem(
            "clusterLogRetentionDays",
            cluster.log_retention_days,
            f"on Alibaba Cloud control-plane logs go to Simple Log Service: 1 to "
            f"{SLS_MAX_TTL_DAYS} days",
        )
    ack_version = _ack_version(r, cluster.kubernetes_version)
    return AlicloudSettings(
        driver_version=driver or None,
        pod_cidr=POD_CIDR,
        service_cidr=SERVICE_CIDR,
        ack_version=ack_version,
    )


def _ack_version(r: ConfigReader, minor: str) -> str:
    """`ackVersion` if set (it must be of `kubernetesVersion`'s minor), else the pinned patch."""
    given = r.string("ackVersion")
    pinned = ", ".join(f"{m} ({v})" for m, v in ACK_VERSIONS.items())
    if not given:
        if minor in ACK_VERSIONS:
            return ACK_VERSIONS[minor]
        r.problem(
            "kubernetesVersion" if "kubernetesVersion" in r.raw else "ackVersion",
            minor if "kubernetesVersion" in r.raw else None,
            f"no ACK version is pinned for Kubernetes {minor}: set gpuinfra:ackVersion to the "
            f"full version ACK offers in your region (e.g. {minor}.N-aliyun.1), or use a "
            f"pinned minor: {pinned}",
        )
        return ""
    match = _ACK_VERSION.match(given)
    if match is None:
        r.problem(
            "ackVersion",
            given,
            "must be a full ACK version such as 1.33.3-aliyun.1 (ACK takes no bare minor)",
        )
    elif f"1.{match.group(1)}" != minor:
        r.problem(
            "ackVersion",
            given,
            f"is not of kubernetesVersion {minor}: set both to the same minor (upgrade one "
            'minor at a time, see README "Upgrading ACK")',
        )
    return given


def _check_cluster_networks(r: ConfigReader, network: NetworkSettings) -> None:
    try:
        vpc = ipaddress.IPv4Network(network.vpc_cidr)
    except ValueError:
        return  # already reported by the generic network checks
    for what, cidr in (("pod", POD_CIDR), ("Service", SERVICE_CIDR)):
        if vpc.overlaps(ipaddress.IPv4Network(cidr)):
            r.problem(
                "vpcCidr",
                network.vpc_cidr,
                f"overlaps the cluster's {what} network {cidr} on Alibaba Cloud; pick a range "
                "outside 172.20.0.0/15, e.g. 10.0.0.0/16",
            )
