"""Turn raw config strings into `Settings`, reporting every problem at once.

Raw values are strings exactly as Pulumi hands them to the program (numbers and
booleans as text, arrays as JSON). Nothing here touches Pulumi's engine, so the
offline preview and the tests validate exactly what `pulumi up` would.
"""

from __future__ import annotations

import datetime as dt
import difflib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import cast

from components import catalog

from . import eks_versions
from .autoscaling import PoolLimits, parse_autoscaling
from .clouds import RULES, CloudRules
from .clouds import kubernetes as existing_cluster_rules
from .clouds import tencentcloud as tencentcloud_rules
from .clouds import volcengine as volcengine_rules
from .clouds.alicloud import parse_alicloud
from .clouds.aws import parse_aws
from .clouds.kubernetes import ExistingClusterSettings, parse_existing_cluster
from .datasets import EXISTING_CLUSTER_NO_MOUNT, PLATFORMS, DatasetPlatform, platform_problems
from .errors import SettingsError
from .gpu_alerts import parse_gpu_alerts
from .gpu_layer import GpuLayerSettings, parse_gpu_layer
from .gpu_pools import parse_gpu_pools, pool_key
from .model import (
    AccessSettings,
    ClusterSettings,
    IdentitySettings,
    NatGateways,
    NetworkSettings,
    PoolSize,
    Settings,
    StorageSettings,
    SystemPoolSettings,
)
from .queueing import resolve_quota
from .reader import ConfigReader
from .schema import BY_NAME, NAMESPACE
from .workstation import parse_workstation

MIN_KUBERNETES_MINOR = 31
"""podFailurePolicy (how training Jobs ignore spot preemptions) is GA from 1.31."""

CLUSTER_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
CLOUDWATCH_RETENTION_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
    2922, 3288, 3653,
)  # fmt: skip
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_NAME_PREFIX = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")


def parse_settings(
    raw: Mapping[str, str],
    *,
    stack: str,
    provider_config: Mapping[str, str] | None = None,
    today: dt.date | None = None,
) -> Settings:
    """Validate the `gpuinfra:` keys (unqualified names in `raw`) as a whole.

    `provider_config` holds other namespaces' keys the program needs, such as
    `aws:region`. `today` (default: the real date) decides which Kubernetes minors the
    managed service still offers. Raises `SettingsError` listing every problem found.
    """
    r = ConfigReader(raw)
    _check_unknown_keys(r)

    cloud = r.one_of("cloud", tuple(RULES))
    rules = RULES[cloud]
    # An existing cluster (cloud kubernetes) has no region, network, pools or bucket of ours:
    # its own keys are read instead, and the cloud keys are refused if set.
    existing = parse_existing_cluster(r) if cloud == existing_cluster_rules.CLOUD else None
    region = "" if existing else _region(r, rules, provider_config or {})
    name_prefix = _name_prefix(r, stack)
    cluster = _cluster(r, cloud, today or dt.date.today())
    network = _network(r)
    access = _access(r, cloud)
    system_pool = _system_pool(r, rules)
    gpu_pools = () if existing else parse_gpu_pools(r, cloud)
    storage = _storage(r, rules)
    identity = IdentitySettings(
        namespace=_dns_label(r, "trainingNamespace"),
        service_account=_dns_label(r, "trainingServiceAccount"),
    )

    gpu_layer = parse_gpu_layer(
        r,
        # A cloud stack's Jobs are placed on its pools; an existing cluster's on its GPU nodes
        # (existingGpusPerNode); a GPU-layer stack's once its cluster stack's handle is read.
        gpus_per_node=existing.gpus_per_node if existing is not None else None,
        pools=gpu_pools if existing is None else None if existing.cluster_stack else (),
        cloud=cloud,
        api_endpoint_public=access.api_endpoint_public,
    )
    if cloud != existing_cluster_rules.CLOUD and "clusterStack" in r.raw:
        r.problem(
            "clusterStack",
            r.raw["clusterStack"],
            "only for cloud kubernetes (a GPU-layer stack); a cluster stack sets "
            "gpuinfra:gpuLayer: separate and is named by the other stack's clusterStack",
        )
    _dataset_platform(r, cloud, existing, gpu_layer)
    if (
        existing is not None
        and existing.cluster_stack is None
        and gpu_layer.training_jobs
        and existing.bucket_uri is None
    ):
        r.problem(
            "existingBucketUri",
            None,
            "required when trainingJobs is set: the Jobs checkpoint under it",
        )

    aws = parse_aws(r) if cloud == "aws" else None
    alicloud = (
        parse_alicloud(r, cluster=cluster, network=network, access=access)
        if cloud == "alicloud"
        else None
    )
    tencentcloud = (
        tencentcloud_rules.parse(
            r,
            region=region,
            name_prefix=name_prefix,
            kubernetes_version=cluster.kubernetes_version,
            vpc_cidr=network.vpc_cidr,
            zone_count=network.availability_zone_count,
        )
        if cloud == "tencentcloud"
        else None
    )

    # --- Volcano Engine (issue 27) ---
    volcengine = (
        volcengine_rules.parse(
            r,
            region=region,
            name_prefix=name_prefix,
            vpc_cidr=network.vpc_cidr,
            zone_count=network.availability_zone_count,
            api_endpoint_public=access.api_endpoint_public,
        )
        if cloud == volcengine_rules.CLOUD
        else None
    )

    workstation = (
        None
        if existing or cloud == volcengine_rules.CLOUD
        else parse_workstation(r, cloud, gpu_pools)
    )
    autoscaling = None
    if gpu_pools:
        autoscaling = parse_autoscaling(
            r,
            cloud=cloud,
            kubernetes_version=cluster.kubernetes_version,
            pools=[
                PoolLimits(
                    name=pool.name,
                    gpus_per_node=pool.gpus_per_node,
                    min_nodes=pool.size.min_nodes,
                    desired_nodes=pool.size.desired_nodes,
                    max_nodes=pool.size.max_nodes,
                    keys={
                        f: pool_key(r, pool.name, f)
                        for f in ("minNodes", "desiredNodes", "maxNodes")
                    },
                )
                for pool in gpu_pools
            ],
        )
        # maxGpus caps each pool's maximum, where every cloud's autoscaler stops.
        gpu_pools = tuple(
            replace(
                pool,
                size=replace(pool.size, max_nodes=autoscaling.pool(pool.name).max_nodes),
            )
            for pool in gpu_pools
        )
    # GPU alerts (issue 23): the idle-node alert waits past the autoscaler's scale-down delay.
    gpu_layer = replace(
        gpu_layer,
        alerts=parse_gpu_alerts(
            r,
            scale_down_delay_minutes=autoscaling.scale_down_delay_minutes if autoscaling else None,
            # The exporter's series carry no pool label: the pools' minima together are
            # the GPU nodes the autoscalers keep however idle.
            min_gpu_nodes=sum(p.min_nodes for p in autoscaling.pools) if autoscaling else 0,
        ),
    )
    # --- queueing (issue 19): the queue's GPU quota defaults to the GPU pools' maxima ---
    gpu_layer = replace(
        gpu_layer,
        queueing=resolve_quota(
            r,
            gpu_layer.queueing,
            # The GPU layer reads the pools off the ClusterHandle: a cloud stack's own, or a
            # cluster stack's; an existing cluster's handle has none.
            pools_known=existing is None or existing.cluster_stack is not None,
        ),
    )
    _check_cost_assumptions(r)

    if r.problems or (not gpu_pools and existing is None):
        raise SettingsError(stack, r.problems)
    return Settings(
        stack=stack,
        cloud=cloud,
        region=region,
        name_prefix=name_prefix,
        cluster=cluster,
        network=network,
        access=access,
        system_pool=system_pool,
        gpu_pools=gpu_pools,
        storage=storage,
        identity=identity,
        gpu_layer=gpu_layer,
        aws=aws,
        alicloud=alicloud,
        tencentcloud=tencentcloud,
        volcengine=volcengine,
        existing_cluster=existing,
        workstation=workstation,
        autoscaling=autoscaling,
    )


def _check_unknown_keys(r: ConfigReader) -> None:
    for name in sorted(r.raw):
        if name in BY_NAME:
            continue
        close = difflib.get_close_matches(name, list(BY_NAME), n=1)
        hint = f"did you mean {NAMESPACE}:{close[0]}?" if close else "see the config reference"
        r.problem(name, r.raw[name], f"unknown setting; {hint}")


def _dataset_platform(
    r: ConfigReader,
    cloud: str,
    existing: ExistingClusterSettings | None,
    gpu_layer: GpuLayerSettings,
) -> None:
    """Datasets the platform cannot serve (mount without a CSI driver that takes pod identity,
    a bucket of another cloud's scheme). A `clusterStack` stack checks against its handle."""
    if existing is not None and existing.cluster_stack is not None:
        return
    if existing is not None:
        scheme = (existing.bucket_uri or "").partition("://")[0]
        platform = DatasetPlatform(scheme, None, EXISTING_CLUSTER_NO_MOUNT)
    elif cloud in PLATFORMS:
        platform = PLATFORMS[cloud]
    else:
        return
    for i, job in enumerate(gpu_layer.training_jobs):
        if job.dataset is None:
            continue
        for field, value, allowed in platform_problems(
            job.dataset,
            scheme=platform.scheme,
            mount_driver=platform.mount_driver,
            no_mount=platform.no_mount,
        ):
            r.problem(f"trainingJobs[{i}].{field}", value, allowed)


def _region(r: ConfigReader, rules: CloudRules, provider_config: Mapping[str, str]) -> str:
    key = rules.region_key
    region = (provider_config.get(key) or "").strip()
    if not region:
        r.problem(
            key, None, f"required: set it with `pulumi config set {key} {rules.region_example}`"
        )
    elif not rules.region_pattern.match(region):
        r.problem(
            key, region, f"must be a {rules.title} region name such as {rules.region_example}"
        )
    return region


def _name_prefix(r: ConfigReader, stack: str) -> str:
    given = r.string("namePrefix")
    value = given or "gpuinfra-" + re.sub(r"[^a-z0-9-]+", "-", stack.lower()).strip("-")
    if len(value) > 32 or not _NAME_PREFIX.match(value):
        allowed = (
            "lowercase letters, digits and hyphens, starting with a letter, at most 32 characters"
        )
        if not given:
            allowed += f" (derived from the stack name '{stack}'; set namePrefix explicitly)"
        r.problem("namePrefix", value, allowed)
    return value


def _cluster(r: ConfigReader, cloud: str, today: dt.date) -> ClusterSettings:
    version = r.string("kubernetesVersion")
    match = re.fullmatch(r"1\.(\d+)", version)
    if not match:
        r.problem("kubernetesVersion", version, "must be a minor version such as 1.33")
    elif int(match.group(1)) < MIN_KUBERNETES_MINOR:
        r.problem(
            "kubernetesVersion",
            version,
            f"must be 1.{MIN_KUBERNETES_MINOR} or newer (training Jobs need podFailurePolicy, "
            f"GA in 1.{MIN_KUBERNETES_MINOR})",
        )
    elif cloud == "aws" and (eks := eks_versions.version_problem(version, today)):
        r.problem("kubernetesVersion", version, eks)
    log_types = r.strings("clusterLogTypes")
    for log_type in log_types:
        if log_type not in CLUSTER_LOG_TYPES:
            r.problem("clusterLogTypes", log_type, "allowed: " + ", ".join(CLUSTER_LOG_TYPES))
    retention = r.integer("clusterLogRetentionDays")
    # Alibaba Cloud keeps control-plane logs in Simple Log Service (checked in clouds/alicloud.py).
    if cloud != "alicloud" and retention not in CLOUDWATCH_RETENTION_DAYS:
        r.problem(
            "clusterLogRetentionDays",
            retention,
            "must be a CloudWatch retention value: "
            + ", ".join(str(d) for d in CLOUDWATCH_RETENTION_DAYS),
        )
    return ClusterSettings(
        kubernetes_version=version,
        log_types=log_types,
        log_retention_days=retention,
        deletion_protection=r.boolean("deletionProtection"),
    )


def _ipv4_network(r: ConfigReader, name: str, value: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True)
    except ValueError:
        try:
            loose = ipaddress.IPv4Network(value, strict=False)
        except ValueError:
            r.problem(name, value, "must be an IPv4 CIDR such as 10.0.0.0/16")
            return None
        r.problem(name, value, f"has host bits set; did you mean {loose}?")
        return None


def _network(r: ConfigReader) -> NetworkSettings:
    vpc_cidr = r.string("vpcCidr")
    vpc = _ipv4_network(r, "vpcCidr", vpc_cidr)
    if vpc is not None and not 16 <= vpc.prefixlen <= 20:
        r.problem("vpcCidr", vpc_cidr, "prefix must be between /16 and /20")
        vpc = None

    zones = r.integer("availabilityZoneCount")
    if not 2 <= zones <= 4:
        r.problem("availabilityZoneCount", zones, "must be 2, 3 or 4 (EKS needs at least 2)")
        zones = max(2, min(zones, 4))

    public = r.strings("publicSubnetCidrs")
    private = r.strings("privateSubnetCidrs")
    if vpc is not None:
        if not public:
            public = tuple(str(s) for s in _carve_public(vpc, zones))
        if not private:
            private = tuple(str(s) for s in _carve_private(vpc, zones))
    given = {"publicSubnetCidrs": public, "privateSubnetCidrs": private}
    # With no usable VPC range there is nothing to carve from: only check what was given.
    _check_subnets(r, vpc, zones, {name: cidrs for name, cidrs in given.items() if cidrs})

    nat = cast(NatGateways, r.one_of("natGateways", ("single", "perAz")))
    return NetworkSettings(
        vpc_cidr=vpc_cidr,
        availability_zone_count=zones,
        public_subnet_cidrs=public,
        private_subnet_cidrs=private,
        nat_gateways=nat,
    )


def _carve_private(vpc: ipaddress.IPv4Network, zones: int) -> list[ipaddress.IPv4Network]:
    """The first `zones` eighths of the VPC: nodes and pods (the VPC CNI gives pods VPC IPs)."""
    return list(vpc.subnets(prefixlen_diff=3))[:zones]


def _carve_public(vpc: ipaddress.IPv4Network, zones: int) -> list[ipaddress.IPv4Network]:
    """Quarters of the VPC's last eighth: public subnets only hold NAT gateways and LBs."""
    last_eighth = list(vpc.subnets(prefixlen_diff=3))[-1]
    return list(last_eighth.subnets(prefixlen_diff=2))[:zones]


def _check_subnets(
    r: ConfigReader,
    vpc: ipaddress.IPv4Network | None,
    zones: int,
    lists: dict[str, tuple[str, ...]],
) -> None:
    seen: list[tuple[str, ipaddress.IPv4Network]] = []
    for name, cidrs in lists.items():
        if len(cidrs) != zones:
            r.problem(
                name, list(cidrs), f"needs one subnet per zone: {zones} (availabilityZoneCount)"
            )
        for cidr in cidrs:
            net = _ipv4_network(r, name, cidr)
            if net is None:
                continue
            if vpc is not None and not net.subnet_of(vpc):
                r.problem(name, cidr, f"must lie inside vpcCidr {vpc}")
                continue
            for other_name, other in seen:
                if net.overlaps(other):
                    r.problem(name, cidr, f"overlaps {other} in {other_name}")
            seen.append((name, net))


def _access(r: ConfigReader, cloud: str) -> AccessSettings:
    allow_public = r.boolean("allowPublicAdminAccess")
    cidrs = r.strings("adminCidrs")
    for cidr in cidrs:
        try:
            net = ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            r.problem("adminCidrs", cidr, "must be a CIDR such as 203.0.113.0/24 or 2001:db8::/48")
            continue
        if net.prefixlen == 0 and not allow_public:
            r.problem(
                "adminCidrs",
                cidr,
                "opens SSH, Jupyter, TensorBoard and the API to the whole internet; list your "
                "own networks, or set gpuinfra:allowPublicAdminAccess to true to accept that",
            )
    endpoint_public = r.boolean("apiEndpointPublic")
    # ACK cannot limit its public endpoint to CIDRs at all (checked in clouds/alicloud.py).
    if cloud != "alicloud" and endpoint_public and not any(_is_ipv4(c) for c in cidrs):
        r.problem(
            "apiEndpointPublic",
            True,
            "a public API endpoint needs an IPv4 network in gpuinfra:adminCidrs (EKS would "
            "otherwise open it to 0.0.0.0/0); list your networks or set apiEndpointPublic to false",
        )
    return AccessSettings(
        admin_cidrs=cidrs,
        allow_public_admin_access=allow_public,
        api_endpoint_public=endpoint_public,
    )


def _is_ipv4(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(cidr, strict=False).version == 4
    except ValueError:
        return False


def _pool_size(r: ConfigReader, pool: str, min_floor: int) -> PoolSize:
    keys = {part: f"{pool}{part.capitalize()}Nodes" for part in ("min", "desired", "max")}
    lo, mid, hi = (r.integer(keys[p]) for p in ("min", "desired", "max"))
    ok = True
    for part, value in (("min", lo), ("desired", mid), ("max", hi)):
        floor = min_floor if part == "min" else 0
        if value < floor:
            r.problem(keys[part], value, f"must be {floor} or more")
            ok = False
    if ok and lo > mid:
        r.problem(keys["min"], lo, f"must not exceed {keys['desired']} ({mid})")
    if ok and mid > hi:
        r.problem(keys["desired"], mid, f"must not exceed {keys['max']} ({hi})")
    if ok and hi < 1:
        r.problem(keys["max"], hi, "must be 1 or more")
    return PoolSize(min_nodes=lo, desired_nodes=mid, max_nodes=hi)


def _system_pool(r: ConfigReader, rules: CloudRules) -> SystemPoolSettings:
    instance_type = r.string("systemPoolInstanceType") or rules.default_system_instance_type
    if catalog.find(rules.cloud, instance_type) is not None:
        r.problem(
            "systemPoolInstanceType",
            instance_type,
            "is a GPU instance type; the system pool runs CPU-only cluster services",
        )
    return SystemPoolSettings(instance_type=instance_type, size=_pool_size(r, "systemPool", 1))


def _storage(r: ConfigReader, rules: CloudRules) -> StorageSettings:
    name = r.string("bucketName")
    if name:
        problem = rules.bucket_name_problem(name)
        if problem:
            r.problem("bucketName", name, f"{problem} ({rules.title} bucket naming rules)")
    noncurrent = r.integer("noncurrentVersionExpirationDays")
    if not 1 <= noncurrent <= 3650:
        r.problem("noncurrentVersionExpirationDays", noncurrent, "must be between 1 and 3650")
    abort = r.integer("abortIncompleteUploadDays")
    if not 1 <= abort <= 365:
        r.problem("abortIncompleteUploadDays", abort, "must be between 1 and 365")
    return StorageSettings(
        bucket_name=name or None,
        protect=r.boolean("protectBucket"),
        noncurrent_version_expiration_days=noncurrent,
        abort_incomplete_upload_days=abort,
    )


def _dns_label(r: ConfigReader, name: str) -> str:
    value = r.string(name)
    if len(value) > 63 or not _DNS_LABEL.match(value):
        r.problem(name, value, "must be a DNS label: lowercase letters, digits and '-', at most 63")
    return value


def _check_cost_assumptions(r: ConfigReader) -> None:
    """The cost estimate's inputs: no resource depends on them, but a typo must not pass."""
    hours = r.integer("costGpuHoursPerMonth")
    if not 0 <= hours <= 1_000_000:
        r.problem("costGpuHoursPerMonth", hours, "must be between 0 and 1000000")
    storage = r.integer("costStorageGb")
    if not 0 <= storage <= 10_000_000:
        r.problem("costStorageGb", storage, "must be between 0 and 10000000 (GB)")
    factor = r.string("costSpotFactor")
    if factor:
        try:
            ok = 0 < float(factor) <= 1
        except ValueError:
            ok = False
        if not ok:
            r.problem("costSpotFactor", factor, "must be a number above 0 and at most 1, e.g. 0.35")
