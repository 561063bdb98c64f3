"""Every `gpuinfra:` config key: its type, default and description.

This table is the source of truth. `Pulumi.yaml`'s `config:` block and the
README's config reference are generated from it (`gpuinfra schema --write`) and
a test fails when either drifts.

Keys are flat (e.g. `gpuPoolMaxNodes`, not `gpuPool.maxNodes`) because a Pulumi
project's config schema only types strings, integers, booleans and arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ConfigType = Literal["string", "integer", "boolean", "array"]
ConfigValue = str | int | bool | list[str]

NAMESPACE = "gpuinfra"


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: ConfigType
    default: ConfigValue
    description: str
    group: str

    @property
    def qualified(self) -> str:
        return f"{NAMESPACE}:{self.name}"


def _k(
    name: str, type_: ConfigType, default: ConfigValue, group: str, description: str
) -> ConfigKey:
    return ConfigKey(name=name, type=type_, default=default, description=description, group=group)


KEYS: tuple[ConfigKey, ...] = (
    # general
    _k("cloud", "string", "aws", "general", "Where the stack runs. Allowed: aws."),
    _k(
        "namePrefix",
        "string",
        "",
        "general",
        "Prefix of every resource name (lowercase letters, digits, hyphens; at most 32 "
        "characters). Empty: `gpuinfra-<stack>`.",
    ),
    # cluster
    _k(
        "kubernetesVersion",
        "string",
        "1.33",
        "cluster",
        "Kubernetes minor version of the managed cluster, e.g. `1.33`. At least 1.31: "
        "training Jobs rely on podFailurePolicy, GA in 1.31.",
    ),
    _k(
        "apiEndpointPublic",
        "boolean",
        False,
        "cluster",
        "Expose the cluster API endpoint publicly, reachable only from `adminCidrs`. "
        "False: private endpoint only (reach it through a VPN or bastion).",
    ),
    _k(
        "clusterLogTypes",
        "array",
        ["api", "audit", "authenticator"],
        "cluster",
        "Control-plane log types sent to CloudWatch. Allowed: api, audit, "
        "authenticator, controllerManager, scheduler.",
    ),
    _k(
        "clusterLogRetentionDays",
        "integer",
        30,
        "cluster",
        "Days to keep control-plane logs (a CloudWatch retention value, e.g. 7, 30, 90, 365).",
    ),
    _k(
        "deletionProtection",
        "boolean",
        False,
        "cluster",
        "Refuse to delete the cluster until this is turned off.",
    ),
    # network
    _k("vpcCidr", "string", "10.0.0.0/16", "network", "IPv4 range of the VPC, /16 to /20."),
    _k(
        "availabilityZoneCount",
        "integer",
        2,
        "network",
        "Availability zones to spread subnets over, 2 to 4.",
    ),
    _k(
        "publicSubnetCidrs",
        "array",
        [],
        "network",
        "One public subnet per zone (NAT gateways, load balancers). Empty: carved from `vpcCidr`.",
    ),
    _k(
        "privateSubnetCidrs",
        "array",
        [],
        "network",
        "One private subnet per zone (nodes and pods). Empty: carved from `vpcCidr`.",
    ),
    _k(
        "natGateways",
        "string",
        "single",
        "network",
        "NAT gateways for private subnets. Allowed: single (one, cheaper), perAz (one per zone, "
        "survives a zone outage).",
    ),
    # admin access
    _k(
        "adminCidrs",
        "array",
        [],
        "access",
        "Networks allowed to reach SSH 22, Jupyter 8888, TensorBoard 6006 and a public API "
        "endpoint. Empty: no such rule at all.",
    ),
    _k(
        "allowPublicAdminAccess",
        "boolean",
        False,
        "access",
        "Allow 0.0.0.0/0 or ::/0 in `adminCidrs`. Reported by the preview's policy checks.",
    ),
    # system pool
    _k(
        "systemPoolInstanceType",
        "string",
        "",
        "systemPool",
        "Instance type of the CPU system pool. Empty: m6i.large on AWS.",
    ),
    _k("systemPoolMinNodes", "integer", 1, "systemPool", "Fewest system nodes, at least 1."),
    _k("systemPoolDesiredNodes", "integer", 2, "systemPool", "System nodes to start with."),
    _k("systemPoolMaxNodes", "integer", 3, "systemPool", "Most system nodes."),
    # gpu pool
    _k(
        "gpuPoolInstanceType",
        "string",
        "",
        "gpuPool",
        "GPU instance type from the catalog, e.g. g5.xlarge. Or leave empty and set "
        "`gpuPoolGpuModel` and `gpuPoolGpuCount`.",
    ),
    _k(
        "gpuPoolGpuModel",
        "string",
        "",
        "gpuPool",
        "GPU model to pick the cheapest fitting instance type for, e.g. A10G, A100-80GB, H100.",
    ),
    _k(
        "gpuPoolGpuCount",
        "integer",
        1,
        "gpuPool",
        "GPUs per node when the type is picked by `gpuPoolGpuModel`.",
    ),
    _k(
        "gpuPoolCapacityType",
        "string",
        "spot",
        "gpuPool",
        "Allowed: spot (cheaper, can be reclaimed with a 2-minute notice), onDemand.",
    ),
    _k(
        "gpuPoolMinNodes",
        "integer",
        0,
        "gpuPool",
        "Fewest GPU nodes; 0 lets the pool scale to zero.",
    ),
    _k("gpuPoolDesiredNodes", "integer", 0, "gpuPool", "GPU nodes to start with."),
    _k("gpuPoolMaxNodes", "integer", 2, "gpuPool", "Most GPU nodes."),
    _k(
        "gpuPoolDiskSizeGb",
        "integer",
        200,
        "gpuPool",
        "Encrypted root volume of each GPU node in GB (images and datasets cache), 50 to 16384.",
    ),
    # storage
    _k(
        "bucketName",
        "string",
        "",
        "storage",
        "Name of the dataset and checkpoint bucket. Empty: generated from the stack name.",
    ),
    _k(
        "protectBucket",
        "boolean",
        True,
        "storage",
        "Mark the bucket `protect` so `pulumi destroy` cannot delete checkpoints.",
    ),
    _k(
        "noncurrentVersionExpirationDays",
        "integer",
        30,
        "storage",
        "Days before overwritten or deleted object versions are removed, 1 to 3650.",
    ),
    _k(
        "abortIncompleteUploadDays",
        "integer",
        7,
        "storage",
        "Days before unfinished multipart uploads are cleaned up, 1 to 365.",
    ),
    # identity
    _k(
        "trainingNamespace",
        "string",
        "training",
        "identity",
        "Kubernetes namespace of the training Jobs; the bucket role trusts only it.",
    ),
    _k(
        "trainingServiceAccount",
        "string",
        "trainer",
        "identity",
        "ServiceAccount of the training Jobs; the bucket role trusts only it.",
    ),
)

BY_NAME: dict[str, ConfigKey] = {key.name: key for key in KEYS}
