"""Provider rules for the tencentcloud resources the stacks create (see model.py).

tencentcloud-iac-pulumi 0.2.3 bridges terraform-provider-tencentcloud v1.82.42; every rule
cites that release (`git show v1.82.42:<path>`). Paths below are relative to its
`tencentcloud/` folder. Inputs are the engine's camelCase names (`autoScalingConfig`).
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .model import Problem, RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

_REPO = "tencentcloudstack/terraform-provider-tencentcloud@v1.82.42 tencentcloud/"
_TKE = _REPO + "services/tke/"
_VPC = _REPO + "services/vpc/"
_CVM = _REPO + "services/cvm/"
_CAM = _REPO + "services/cam/"
_VALIDATORS = _REPO + "common/validators.go"

_T = "tencentcloud:"
VPC = _T + "Vpc/instance:Instance"
SUBNET = _T + "Subnet/instance:Instance"
NAT = _T + "Nat/gateway:Gateway"
EIP = _T + "Eip/instance:Instance"
ROUTE_TABLE = _T + "Route/table:Table"
ROUTE_ENTRY = _T + "Route/tableEntry:TableEntry"
SECURITY_GROUP = _T + "Security/group:Group"
RULE_SET = _T + "Security/groupRuleSet:GroupRuleSet"
CLUSTER = _T + "Kubernetes/cluster:Cluster"
ENDPOINT = _T + "Kubernetes/clusterEndpoint:ClusterEndpoint"
NODE_POOL = _T + "Kubernetes/nodePool:NodePool"
ENCRYPTION = _T + "Kubernetes/encryptionProtection:EncryptionProtection"
AUTH = _T + "Kubernetes/authAttachment:AuthAttachment"
KMS_KEY = _T + "Kms/key:Key"
BUCKET = _T + "Cos/bucket:Bucket"
CAM_ROLE = _T + "Cam/role:Role"
CAM_POLICY = _T + "Cam/policy:Policy"
CAM_ATTACHMENT = _T + "Cam/rolePolicyAttachment:RolePolicyAttachment"
KEY_PAIR = _T + "Key/pair:Pair"
CVM = _T + "Instance/instance:Instance"

ZONES_KEY = "gpuinfra:tkeZones"
"""Where a stack pins its subnets' zones (a JSON list, as Pulumi passes arrays)."""


def _find(ctx: RuleContext, type_: str, resource_id: Any) -> RecordedResource | None:
    """The resource of `type_` with that id. Ids are not unique across types on Tencent (a rule
    set, an endpoint and an auth attachment take the id of what they configure)."""
    for resource in ctx.of_type(type_):
        if resource.id is not None and resource.id == resource_id:
            return resource
    return None


def _length(
    inputs: Mapping[str, Any], field: str, low: int, high: int, what: str
) -> Iterator[Problem]:
    """`ValidateStringLengthInRange(low, high)` (common/validators.go:104-117): counts runes."""
    value = inputs.get(field)
    if isinstance(value, str) and not low <= len(value) <= high:
        yield field, f"{what} must have {low} to {high} characters, not {len(value)} ({value!r})"


def _cidr_network(value: Any) -> bool:
    """`ValidateCIDRNetworkAddress` (common/validators.go:47-58): a network address."""
    try:
        net = ipaddress.ip_network(str(value), strict=True)
    except ValueError:
        return False
    return str(value) == str(net)


def _truthy_list(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0


# ---------------------------------------------------------------------------------------------
# network: VPC, subnet, NAT gateway, EIP, route table and entry, security groups


@provider_rule(VPC, source=_VPC + "resource_tc_vpc.go:32-43")
def vpc_name_and_cidr(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A VPC name has 1 to 60 characters and its CIDR is a network address."""
    yield from _length(resource.inputs, "name", 1, 60, "the VPC name")
    cidr = resource.inputs.get("cidrBlock")
    if cidr is not None and not _cidr_network(cidr):
        yield "cidrBlock", f"{cidr!r} is not a network address such as 10.0.0.0/16"


@provider_rule(SUBNET, source=_VPC + "resource_tc_subnet.go:35-52")
def subnet_name_and_cidr(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A subnet name has 1 to 60 characters and its CIDR is a network address."""
    yield from _length(resource.inputs, "name", 1, 60, "the subnet name")
    cidr = resource.inputs.get("cidrBlock")
    if cidr is not None and not _cidr_network(cidr):
        yield "cidrBlock", f"{cidr!r} is not a network address such as 10.0.0.0/19"


@provider_rule(SUBNET, source=_VPC + "resource_tc_subnet.go:35-40 (availability_zone ForceNew)")
def subnet_zone_cannot_move(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A subnet's zone is ForceNew: a zone fed by a lookup that changes replaces the subnet.

    Allowed: a zone pinned in config (`gpuinfra:tkeZones`), or `ignore_changes` on
    `availabilityZone` so a later lookup cannot move an existing subnet.
    """
    zone = resource.inputs.get("availabilityZone")
    if not zone or "availabilityZone" in resource.ignore_changes:
        return
    try:
        pinned = json.loads(ctx.config.get(ZONES_KEY) or "[]")
    except json.JSONDecodeError:
        pinned = []
    if zone not in pinned:
        yield (
            "availabilityZone",
            (
                f"{zone!r} is neither pinned ({ZONES_KEY}) nor kept by ignore_changes: a lookup "
                "answering differently later would replace the subnet and every node in it"
            ),
        )


@provider_rule(NAT, source=_VPC + "resource_tc_nat_gateway.go:38-66")
def nat_gateway_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A NAT gateway: name of 1 to 60 characters, 1 to 10 EIPs, bandwidth and connection caps
    from the allowed values."""
    i = resource.inputs
    yield from _length(i, "name", 1, 60, "the NAT gateway name")
    eips = i.get("assignedEipSets")
    if not isinstance(eips, list) or not 1 <= len(eips) <= 10:
        yield "assignedEipSets", "needs 1 to 10 EIP addresses"
    if i.get("bandwidth") is not None and i["bandwidth"] not in (
        20,
        50,
        100,
        200,
        500,
        1000,
        2000,
        5000,
    ):
        yield "bandwidth", "allowed: 20, 50, 100, 200, 500, 1000, 2000, 5000 (Mbps)"
    if i.get("maxConcurrent") is not None and i["maxConcurrent"] not in (
        1000000,
        2000000,
        3000000,
        10000000,
    ):
        yield "maxConcurrent", "allowed: 1000000, 2000000, 3000000, 10000000"


@provider_rule(EIP, source=_CVM + "resource_tc_eip.go:64-69")
def eip_charge_type(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An EIP's charge type is one of the four the API knows."""
    allowed = (
        "BANDWIDTH_PACKAGE",
        "BANDWIDTH_POSTPAID_BY_HOUR",
        "BANDWIDTH_PREPAID_BY_MONTH",
        "TRAFFIC_POSTPAID_BY_HOUR",
    )
    value = resource.inputs.get("internetChargeType")
    if value is not None and value not in allowed:
        yield "internetChargeType", f"{value!r}: allowed " + ", ".join(allowed)


@provider_rule(ROUTE_TABLE, source=_VPC + "resource_tc_route_table.go:34-39")
def route_table_name(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A route table name has 1 to 60 characters."""
    yield from _length(resource.inputs, "name", 1, 60, "the route table name")


@provider_rule(
    ROUTE_ENTRY,
    source=_VPC + "resource_tc_route_table_entry.go:37-49; services/vpc/extension_vpc.go:21-35",
)
def route_entry_destination_and_next_hop(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """A route's destination is a network address and its next hop a known gateway type."""
    i = resource.inputs
    if not _cidr_network(i.get("destinationCidrBlock")):
        yield "destinationCidrBlock", f"{i.get('destinationCidrBlock')!r} is not a network address"
    kinds = (
        "CVM", "VPN", "DIRECTCONNECT", "PEERCONNECTION", "SSLVPN", "HAVIP", "NAT",
        "NORMAL_CVM", "EIP", "CCN", "LOCAL_GATEWAY", "INTRANAT", "USER_CCN",
    )  # fmt: skip
    if i.get("nextType") not in kinds:
        yield "nextType", f"{i.get('nextType')!r}: allowed " + ", ".join(kinds)


@provider_rule(SECURITY_GROUP, source=_VPC + "resource_tc_security_group.go:30-41")
def security_group_name_and_description(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """A security group's name has 1 to 60 characters, its description 1 to 100."""
    yield from _length(resource.inputs, "name", 1, 60, "the security group name")
    yield from _length(resource.inputs, "description", 1, 100, "the description")


_SOURCES = ("cidrBlock", "ipv6CidrBlock", "sourceSecurityId", "addressTemplateId",
            "addressTemplateGroup")  # fmt: skip


@provider_rule(RULE_SET, source=_VPC + "resource_tc_security_group_rule_set.go:20-80, 342-389")
def rule_set_rules(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Each rule: ACCEPT or DROP, exactly one source (Create refuses two; the schema requires
    one), protocol + port or a service template, and port `all` with protocol ALL."""
    for side in ("ingresses", "egresses"):
        for index, rule in enumerate(resource.inputs.get(side) or []):
            where = f"{side}.{index}"
            if str(rule.get("action", "")).upper() not in ("ACCEPT", "DROP"):
                yield f"{where}.action", "must be ACCEPT or DROP"
            sources = [key for key in _SOURCES if rule.get(key)]
            if len(sources) != 1:
                yield (
                    where,
                    ("needs exactly one of " + ", ".join(_SOURCES) + f"; has {sources or 'none'}"),
                )
            protocol = str(rule.get("protocol") or "")
            port = str(rule.get("port") or "")
            if (protocol or port) and (
                rule.get("serviceTemplateId") or rule.get("serviceTemplateGroup")
            ):
                yield where, "protocol/port and a service template exclude each other"
            if protocol and protocol.upper() not in ("TCP", "UDP", "ICMP", "ICMPV6", "ALL"):
                yield f"{where}.protocol", f"{protocol!r}: allowed TCP, UDP, ICMP, ICMPv6, ALL"
            if protocol.upper() == "ALL" and port and port.upper() != "ALL":
                yield f"{where}.port", "must be all when the protocol is ALL"


# ---------------------------------------------------------------------------------------------
# TKE: cluster, endpoint, node pools, Secrets encryption, pod identity


def _private_cidr(value: str, allow_11: bool) -> bool:
    """clusterCidrValidateFunc / serviceCidrValidateFunc: a network address in 9., 10.,
    (11., pods only), 192.168. or 172.16-31."""
    if not _cidr_network(value):
        return False
    first, second = value.split(".")[:2]
    if first in ("9", "10") or (first == "11" and allow_11) or value.startswith("192.168."):
        return True
    return first == "172" and 16 <= int(second) <= 31


@provider_rule(
    CLUSTER,
    source=_TKE + "resource_tc_kubernetes_cluster.go:409-455; "
    "resource_tc_kubernetes_cluster_extension.go:1562-1626",
)
def cluster_networks(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The pod and Service CIDRs are network addresses in TKE's private ranges; at most 32768
    Services, at least 32, and at least 4 pods a node."""
    i = resource.inputs
    if i.get("clusterCidr") and not _private_cidr(str(i["clusterCidr"]), allow_11=True):
        yield "clusterCidr", "must be a network in 9.0.0.0/8, 10/8, 11/8, 172.16/12 or 192.168/16"
    if i.get("serviceCidr") and not _private_cidr(str(i["serviceCidr"]), allow_11=False):
        yield "serviceCidr", "must be a network in 9.0.0.0/8, 10/8, 172.16/12 or 192.168/16"
    services = i.get("clusterMaxServiceNum")
    if services is not None and not 32 <= services <= 32768:
        yield "clusterMaxServiceNum", f"{services}: must be 32 to 32768"
    pods = i.get("clusterMaxPodNum")
    if pods is not None and pods < 4:
        yield "clusterMaxPodNum", f"{pods}: must be at least 4"


@provider_rule(CLUSTER, source=_TKE + "resource_tc_kubernetes_cluster_extension.go:58-68")
def cluster_endpoint_flags(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create: an intranet endpoint needs its subnet (and only then a subnet), an internet
    endpoint needs `worker_config` nodes in the same resource."""
    i = resource.inputs
    if i.get("clusterIntranet") and not i.get("clusterIntranetSubnetId"):
        yield "clusterIntranetSubnetId", "required when clusterIntranet is true"
    if not i.get("clusterIntranet") and i.get("clusterIntranetSubnetId"):
        yield "clusterIntranetSubnetId", "only allowed when clusterIntranet is true"
    if i.get("clusterInternet") and not i.get("workerConfigs"):
        yield (
            "clusterInternet",
            (
                "a cluster created without worker_config cannot open its internet endpoint; "
                "open it with a ClusterEndpoint that depends on a node pool"
            ),
        )


@provider_rule(
    CLUSTER,
    source=_TKE + "resource_tc_kubernetes_cluster_endpoint.md:5; "
    "resource_tc_kubernetes_cluster_extension.go:1294-1305, 2353-2357",
)
def cluster_endpoint_single_owner(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """A ClusterEndpoint and the Cluster must not both set the endpoints: the Cluster's Read
    reports what the ClusterEndpoint opened, and its next Update closes it again."""
    owners = [e for e in ctx.of_type(ENDPOINT) if e.inputs.get("clusterId") == resource.id]
    if not owners:
        return
    for field in ("clusterInternet", "clusterIntranet"):
        if field in resource.inputs and field not in resource.ignore_changes:
            yield (
                field,
                (
                    f"set here while ClusterEndpoint {owners[0].name!r} owns the endpoints: leave "
                    f"{field} unset on the Cluster (and ignore_changes it)"
                ),
            )


@provider_rule(
    ENDPOINT,
    source=_TKE + "resource_tc_kubernetes_cluster_endpoint.go:43-47, 250-257; "
    "services/tke/service_tencentcloud_tke.go:840-878",
)
def endpoint_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An intranet endpoint needs its subnet; an internet endpoint its security group; Create
    waits for a running node of the cluster, so the endpoint must come after a node pool that
    keeps at least one node."""
    i = resource.inputs
    if i.get("clusterIntranet") and not i.get("clusterIntranetSubnetId"):
        yield "clusterIntranetSubnetId", "required when clusterIntranet is true"
    if not i.get("clusterIntranet") and i.get("clusterIntranetSubnetId"):
        yield "clusterIntranetSubnetId", "only allowed when clusterIntranet is true"
    if i.get("clusterInternet") and not i.get("clusterInternetSecurityGroup"):
        yield (
            "clusterInternetSecurityGroup",
            (
                "required with clusterInternet: a security group admitting 443 from the admin "
                "networks only"
            ),
        )
    pools = [
        p
        for p in ctx.of_type(NODE_POOL)
        if p.inputs.get("clusterId") == i.get("clusterId") and (p.inputs.get("minSize") or 0) >= 1
    ]
    if not any(ctx.depends_on(resource, pool) for pool in pools):
        yield (
            "dependsOn",
            (
                "Create waits for a running node: depend on a node pool of this cluster with "
                "minSize >= 1"
            ),
        )


@provider_rule(NODE_POOL, source=_TKE + "resource_tc_kubernetes_node_pool_extension.go:1051-1056")
def node_pool_orderly_security_groups(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """Create refuses a non-empty `auto_scaling_config.security_group_ids` (unordered): use
    `orderly_security_group_ids`."""
    if _truthy_list(get(resource.inputs, "autoScalingConfig.securityGroupIds")):
        yield "autoScalingConfig.securityGroupIds", "refused at Create: use orderlySecurityGroupIds"


@provider_rule(NODE_POOL, source=_TKE + "resource_tc_kubernetes_node_pool_extension.go:1025-1049")
def node_pool_login(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create needs exactly one of `key_ids` and `password` (an empty password is none)."""
    keys = _truthy_list(get(resource.inputs, "autoScalingConfig.keyIds"))
    password = bool(get(resource.inputs, "autoScalingConfig.password"))
    if keys == password:
        yield (
            "autoScalingConfig.keyIds",
            (
                "set exactly one of keyIds and password (prefer a key pair)"
                if not keys
                else "keyIds and password exclude each other"
            ),
        )


@provider_rule(
    NODE_POOL,
    source=_TKE + "resource_tc_kubernetes_node_pool.go:365-395; "
    "resource_tc_kubernetes_node_pool_extension.go:1084-1093; common/validators.go:342-349",
)
def node_pool_spot_options(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """SPOTPAID sends SpotOptions with `spot_max_price` and `spot_instance_type` always, so both
    are needed: a decimal price and `one-time`."""
    launch = resource.inputs.get("autoScalingConfig") or {}
    if launch.get("instanceChargeType") != "SPOTPAID":
        return
    price = launch.get("spotMaxPrice")
    try:
        float(str(price))
    except ValueError:
        yield (
            "autoScalingConfig.spotMaxPrice",
            (f"SPOTPAID needs a decimal price such as '3.00', not {price!r}"),
        )
    if launch.get("spotInstanceType") != "one-time":
        yield "autoScalingConfig.spotInstanceType", "SPOTPAID needs spotInstanceType 'one-time'"


@provider_rule(NODE_POOL, source=_TKE + "resource_tc_kubernetes_node_pool.go:42-46, 484-489")
def node_pool_names(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A node pool name has at most 25 characters (Chinese, letters, digits, `_`, `-`, `.`);
    the instances' name at most 60."""
    name = resource.inputs.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 25:
        yield "name", f"{name!r}: a TKE node pool name has 1 to 25 characters"
    elif not re.fullmatch(r"[\w.\-\u4e00-\u9fff]+", name):
        yield "name", f"{name!r}: only letters, digits, Chinese, '_', '-' and '.'"
    instance_name = get(resource.inputs, "autoScalingConfig.instanceName")
    if isinstance(instance_name, str) and len(instance_name) > 60:
        yield "autoScalingConfig.instanceName", f"{instance_name!r}: at most 60 characters"


@provider_rule(
    NODE_POOL,
    source=_TKE + "resource_tc_kubernetes_node_pool.go:48-82; "
    "resource_tc_kubernetes_node_pool_extension.go:902-915, 1435-1460",
)
def node_pool_sizes(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """0 <= min <= desired <= max <= 2000; `wait_node_ready` only without autoscaling."""
    i = resource.inputs
    low, high = i.get("minSize"), i.get("maxSize")
    desired = i.get("desiredCapacity")
    for field, value in (("minSize", low), ("maxSize", high), ("desiredCapacity", desired)):
        if value is not None and not 0 <= value <= 2000:
            yield field, f"{value}: must be 0 to 2000"
    if low is not None and high is not None and low > high:
        yield "minSize", f"{low} exceeds maxSize {high}"
    if desired and low is not None and high is not None and not low <= desired <= high:
        yield "desiredCapacity", f"{desired} is outside minSize..maxSize ({low}..{high})"
    if i.get("waitNodeReady") and i.get("enableAutoScale", True):
        yield "waitNodeReady", "only allowed when enableAutoScale is false"


@provider_rule(
    NODE_POOL,
    source=_TKE + "resource_tc_kubernetes_node_pool.go:243-286, 315-321; "
    "common/validators.go:382-393",
)
def node_pool_disks_and_gpu_args(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The system disk has 20 to 2048 GB; each of driver, CUDA and cuDNN in `gpu_args`, when
    given, has both a non-empty `name` and `version`."""
    size = get(resource.inputs, "autoScalingConfig.systemDiskSize")
    if size is not None and not 20 <= size <= 2048:
        yield "autoScalingConfig.systemDiskSize", f"{size}: must be 20 to 2048 GB"
    for part in ("driver", "cuda", "cudnn"):
        value = get(resource.inputs, f"nodeConfig.gpuArgs.{part}")
        if value and not all(str(value.get(k) or "").strip() for k in ("name", "version")):
            yield f"nodeConfig.gpuArgs.{part}", "needs both name and version"


@provider_rule(
    ENCRYPTION,
    source=_TKE + "resource_tc_kubernetes_encryption_protection.go:29-48; "
    "services/kms/resource_tc_kms_key.go:32-37, 149-151",
)
def encryption_protection_key(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Secrets encryption needs a KMS key id and region; a key of this plan must be enabled (a
    Tencent KMS key is created disabled unless `is_enabled`)."""
    key_id = get(resource.inputs, "kmsConfiguration.keyId")
    if not key_id or not get(resource.inputs, "kmsConfiguration.kmsRegion"):
        yield "kmsConfiguration", "needs keyId and kmsRegion"
        return
    key = _find(ctx, KMS_KEY, key_id)
    if key is not None and key.inputs.get("isEnabled") is not True:
        yield (
            "kmsConfiguration.keyId",
            (
                f"KMS key {key.name!r} is created disabled (no is_enabled): Secrets encryption "
                "would use a disabled key; set is_enabled=True on it"
            ),
        )


@provider_rule(AUTH, source=_TKE + "resource_tc_kubernetes_auth_attachment.go:33-83; .md:3")
def auth_attachment_options(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """`use_tke_default` excludes `issuer`/`jwks_uri`; an auto-created OIDC provider needs the
    pod-identity webhook add-on; the cluster must run Kubernetes 1.20 or newer."""
    i = resource.inputs
    if i.get("useTkeDefault") and (i.get("issuer") or i.get("jwksUri")):
        yield "issuer", "conflicts with useTkeDefault"
    if i.get("autoCreateOidcConfig") and not i.get("autoInstallPodIdentityWebhookAddon"):
        yield "autoInstallPodIdentityWebhookAddon", "must be true when autoCreateOidcConfig is"
    cluster = _find(ctx, CLUSTER, i.get("clusterId"))
    version = str(cluster.inputs.get("clusterVersion") or "") if cluster else ""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match and (int(match.group(1)), int(match.group(2))) < (1, 20):
        yield "clusterId", f"cluster version {version} is older than 1.20"


# ---------------------------------------------------------------------------------------------
# KMS, COS, CAM


@provider_rule(KMS_KEY, source=_REPO + "services/kms/resource_tc_kms_key.go:22-50, 149-151")
def kms_key_enabled_and_named(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create disables the key unless `is_enabled` (default false); the alias takes letters,
    digits, `_` and `-`, starting with a letter or digit; deletion waits 7 to 30 days."""
    i = resource.inputs
    if i.get("isEnabled") is not True:
        yield "isEnabled", "Create disables the key unless isEnabled is true"
    alias = i.get("alias")
    if not isinstance(alias, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", alias):
        yield "alias", f"{alias!r}: letters, digits, '_' and '-', starting with a letter or digit"
    window = i.get("pendingDeleteWindowInDays")
    if window is not None and not 7 <= window <= 30:
        yield "pendingDeleteWindowInDays", f"{window}: must be 7 to 30"


@provider_rule(
    BUCKET,
    source=_REPO + "services/cos/resource_tc_cos_bucket.go:173-206, 426-470; "
    "common/validators.go:240-251",
)
def cos_bucket_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A bucket is `<name>-<10-digit APPID>` of at most 60 characters; canned ACL and
    encryption from the allowed values; lifecycle days >= 0 (multipart abort >= 1)."""
    i = resource.inputs
    bucket = str(i.get("bucket") or "")
    if not 1 <= len(bucket) <= 60 or not re.fullmatch(
        r"[a-z0-9]([a-z0-9-]*[a-z0-9])?-[0-9]{10}", bucket
    ):
        yield "bucket", f"{bucket!r}: must be <name>-<APPID> (10 digits), at most 60 characters"
    if i.get("acl") is not None and i["acl"] not in ("private", "public-read", "public-read-write"):
        yield "acl", f"{i['acl']!r}: allowed private, public-read, public-read-write"
    if i.get("encryptionAlgorithm") and i["encryptionAlgorithm"] not in ("AES256", "KMS", "SM4"):
        yield "encryptionAlgorithm", f"{i['encryptionAlgorithm']!r}: allowed AES256, KMS, SM4"
    for index, rule in enumerate(i.get("lifecycleRules") or []):
        days = get(rule, "nonCurrentExpiration.nonCurrentDays")
        if days is not None and days < 0:
            yield f"lifecycleRules.{index}.nonCurrentExpiration.nonCurrentDays", "must be >= 0"
        abort = get(rule, "abortIncompleteMultipartUpload.daysAfterInitiation")
        if abort is not None and abort < 1:
            yield f"lifecycleRules.{index}.abortIncompleteMultipartUpload", "must be >= 1 day"


def _document_problems(document: Any) -> Iterator[str]:
    """PolicyDocumentForceCheck: JSON; `resource` an array; `action` a string or an array;
    `principal.qcs` an array (it is unmarshalled as []string)."""
    try:
        parsed = json.loads(str(document))
    except json.JSONDecodeError as error:
        yield f"not JSON ({error})"
        return
    statements = parsed.get("statement") if isinstance(parsed, dict) else None
    if not isinstance(statements, list):
        yield "needs a statement array"
        return
    for index, statement in enumerate(statements):
        if not isinstance(statement, dict):
            yield f"statement {index} is not an object"
            continue
        if "resource" in statement and not isinstance(statement["resource"], list):
            yield f"statement {index}: resource must be an array"
        if "action" in statement and not isinstance(statement["action"], (str, list)):
            yield f"statement {index}: action must be a string or an array"
        qcs = (statement.get("principal") or {}).get("qcs")
        if qcs is not None and not isinstance(qcs, list):
            yield f"statement {index}: principal.qcs must be an array"


@provider_rule(
    CAM_ROLE,
    CAM_POLICY,
    source=_CAM + "service_tencentcloud_cam.go:1179-1215; resource_tc_cam_role.go:105-110; "
    "resource_tc_cam_policy.go:92-97",
)
def cam_document(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create checks the document: JSON, `resource` an array, `action` a string or an array,
    `principal.qcs` an array; the name is required."""
    if not resource.inputs.get("name"):
        yield "name", "required"
    for problem in _document_problems(resource.inputs.get("document")):
        yield "document", problem


@provider_rule(CAM_ATTACHMENT, source=_CAM + "resource_tc_cam_role_policy_attachment.go:27-40, 95")
def cam_attachment_ids(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An attachment names a role id and a numeric policy id (its id is `<role>#<policy>`)."""
    i = resource.inputs
    if not i.get("roleId"):
        yield "roleId", "required"
    if not str(i.get("policyId") or "").isdigit():
        yield "policyId", f"{i.get('policyId')!r}: a CAM policy id is a number"


# ---------------------------------------------------------------------------------------------
# CVM: key pair, instance


@provider_rule(KEY_PAIR, source=_VALIDATORS + ":119-130 (ValidateKeyPairName)")
def key_pair_name(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A key pair name has 1 to 25 characters of letters, digits and `_`."""
    name = resource.inputs.get("keyName")
    if not isinstance(name, str) or not re.fullmatch(r"[a-zA-Z0-9_]{1,25}", name):
        yield "keyName", f"{name!r}: 1 to 25 letters, digits or '_'"


@provider_rule(
    CVM, source=_CVM + "resource_tc_instance.go:66-72, 260-279, 346-352, 412-425, 826-833"
)
def cvm_instance_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Instance name 2 to 128 characters; `key_ids` excludes `password`, `security_groups`
    excludes `orderly_security_groups`; a data disk deleted with the instance only on
    POSTPAID_BY_HOUR (Create refuses it on spot or prepaid)."""
    i = resource.inputs
    yield from _length(i, "instanceName", 2, 128, "the instance name")
    if _truthy_list(i.get("keyIds")) and i.get("password"):
        yield "password", "conflicts with keyIds"
    if _truthy_list(i.get("securityGroups")) and _truthy_list(i.get("orderlySecurityGroups")):
        yield "securityGroups", "conflicts with orderlySecurityGroups"
    charge = i.get("instanceChargeType") or "POSTPAID_BY_HOUR"
    for index, disk in enumerate(_as_list(i.get("dataDisks"))):
        # The schema defaults it to true (resource_tc_instance.go:346-352), so an unset value
        # is refused too: only an explicit false passes on spot or prepaid.
        if disk.get("deleteWithInstance", True) is not False and charge != "POSTPAID_BY_HOUR":
            yield (
                f"dataDisks.{index}.deleteWithInstance",
                f"true (the default when unset) is only allowed on POSTPAID_BY_HOUR instances, "
                f"not {charge}",
            )


def _as_list(value: Any) -> Sequence[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


# ---------------------------------------------------------------------------------------
# Workstation

USER_DATA_LIMIT = 16 * 1024


@provider_rule(
    CVM,
    source=(
        "tencentcloudstack/terraform-provider-tencentcloud@v1.82.42 "
        'tencentcloud/services/cvm/resource_tc_instance.go:453 ("user_data_raw" ... "Up to '
        '16 KB after base64 encoded")'
    ),
)
def user_data_raw_over_16kb(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CVM takes at most 16 KB of user data after base64 encoding."""
    raw = resource.inputs.get("userDataRaw")
    if isinstance(raw, str):
        size = len(base64.b64encode(raw.encode()))
        if size > USER_DATA_LIMIT:
            yield (
                "userDataRaw",
                f"{size} bytes after base64; CVM takes at most {USER_DATA_LIMIT} (16 KB)",
            )
