"""Provider rules for the Volcano Engine resources the stack creates (see model.py).

pulumi-volcenginecc 0.0.45 bridges volcengine/terraform-provider-volcenginecc v0.0.53
(`provider/go.mod` at the pulumi-volcenginecc tag). That provider is generated from Volcano
Engine's Cloud Control schemas: each resource's validators and replace-on-change plan modifiers
are in `internal/volcengine/<service>/<resource>_resource_gen.go`, and the schema it was
generated from (enums and rules written as descriptions, `required`, `createOnlyProperties`) in
`internal/service/cloudcontrol/schemas/Volcengine_<Service>_<Type>.json`. Create sends the
desired state to Cloud Control as given (no `d.GetOk` dropping of false values: it is a
plugin-framework provider). Inputs are the engine's camelCase names (`nodeConfig`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .model import Problem, RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

_REPO = "volcengine/terraform-provider-volcenginecc@v0.0.53 "
_GEN = _REPO + "internal/volcengine/"
_SCHEMA = _REPO + "internal/service/cloudcontrol/schemas/"

_T = "volcenginecc:"
VPC = _T + "vpc/vpc:Vpc"
SUBNET = _T + "vpc/subnet:Subnet"
ROUTE_TABLE = _T + "vpc/routeTable:RouteTable"
EIP = _T + "vpc/eip:Eip"
SECURITY_GROUP = _T + "vpc/securityGroup:SecurityGroup"
NAT = _T + "natgateway/ngw:Ngw"
SNAT = _T + "natgateway/snatentry:Snatentry"
CLUSTER = _T + "vke/cluster:Cluster"
NODE_POOL = _T + "vke/nodePool:NodePool"
KUBECONFIG = _T + "vke/kubeconfig:Kubeconfig"
ADDON = _T + "vke/addon:Addon"
BUCKET = _T + "tos/bucket:Bucket"
BUCKET_ENCRYPTION = _T + "tos/bucketEncryption:BucketEncryption"
IAM_ROLE = _T + "iam/role:Role"
IAM_POLICY = _T + "iam/policy:Policy"

ZONES_KEY = "gpuinfra:vkeZones"
"""Where a stack pins its subnets' zones (a JSON list, as Pulumi passes arrays)."""


def _length(
    inputs: Mapping[str, Any], field: str, low: int, high: int, what: str, required: bool = False
) -> Iterator[Problem]:
    """`stringvalidator.LengthBetween(low, high)` (and `Required: true` when `required`)."""
    value = get(inputs, field)
    if value is None:
        if required:
            yield field, f"{what} is required"
        return
    if isinstance(value, str) and not low <= len(value) <= high:
        yield field, f"{what} must have {low} to {high} characters, not {len(value)} ({value!r})"


def _one_of(inputs: Mapping[str, Any], field: str, allowed: tuple[Any, ...]) -> Iterator[Problem]:
    """`stringvalidator.OneOf(...)` / `int64validator.OneOf(...)`: unset passes."""
    value = get(inputs, field)
    if value is not None and value not in allowed:
        yield field, f"{value!r}: allowed " + ", ".join(repr(a) for a in allowed)


def _required(inputs: Mapping[str, Any], *fields: str) -> Iterator[Problem]:
    for field in fields:
        if get(inputs, field) in (None, "", []):
            yield field, "is required"


# ---------------------------------------------------------------------------------------------
# network: VPC, subnet, route table, EIP, NAT gateway and SNAT entry, security groups


@provider_rule(VPC, source=_GEN + "vpc/vpc_resource_gen.go:118,148-149,530-531")
def vpc_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A VPC name has 1 to 128 characters, its description at most 255; its CIDR is fixed at
    creation (RequiresReplaceIfConfigured), so it must be given."""
    i = resource.inputs
    yield from _length(i, "vpcName", 1, 128, "the VPC name")
    yield from _length(i, "description", 0, 255, "the VPC description")
    yield from _required(i, "cidrBlock")


@provider_rule(SUBNET, source=_GEN + "vpc/subnet_resource_gen.go:72,103-104,280-281,383,397")
def subnet_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A subnet needs its CIDR, VPC and zone; its name has 1 to 128 characters, its description
    at most 255."""
    i = resource.inputs
    yield from _required(i, "cidrBlock", "vpcId", "zoneId")
    yield from _length(i, "subnetName", 1, 128, "the subnet name")
    yield from _length(i, "description", 0, 255, "the subnet description")


@provider_rule(SUBNET, source=_GEN + "vpc/subnet_resource_gen.go:397-399 (zone_id RequiresReplace)")
def subnet_zone_cannot_move(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A subnet's zone is replaced on change: a zone that can move later replaces the subnet.

    Allowed: a zone pinned in config (`gpuinfra:vkeZones`), or `ignore_changes` on `zoneId`.
    """
    zone = resource.inputs.get("zoneId")
    if not zone or "zoneId" in resource.ignore_changes:
        return
    try:
        pinned = json.loads(ctx.config.get(ZONES_KEY) or "[]")
    except json.JSONDecodeError:
        pinned = []
    if zone not in pinned:
        yield (
            "zoneId",
            f"{zone!r} is neither pinned ({ZONES_KEY}) nor kept by ignore_changes: a zone that "
            "changes later would replace the subnet and every node in it",
        )


NEXT_HOP_TYPES = (
    "Instance", "HaVip", "NetworkInterface", "NatGW", "VpnGW", "TransitRouter", "IPv6GW",
    "CloudConnector", "GWLBEndpoint",
)  # fmt: skip


@provider_rule(
    ROUTE_TABLE,
    source=_GEN
    + "vpc/route_table_resource_gen.go:171-172,341-342,621; "
    + _SCHEMA
    + "Volcengine_VPC_RouteTable.json (NextHopType)",
)
def route_table_entries(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A route table needs its VPC and a name of 1 to 128 characters; each custom route has a
    destination, a known next-hop type and a description of at most 255 characters."""
    i = resource.inputs
    yield from _required(i, "vpcId")
    yield from _length(i, "routeTableName", 1, 128, "the route table name")
    for n, entry in enumerate(i.get("customRouteEntries") or []):
        where = f"customRouteEntries.{n}"
        if not entry.get("destinationCidrBlock") and not entry.get("destinationPrefixListId"):
            yield f"{where}.destinationCidrBlock", "a route needs a destination"
        if entry.get("nextHopType") not in NEXT_HOP_TYPES:
            yield (
                f"{where}.nextHopType",
                f"{entry.get('nextHopType')!r}: allowed " + ", ".join(NEXT_HOP_TYPES),
            )
        if not entry.get("nextHopId"):
            yield f"{where}.nextHopId", "a route needs the id of its next hop"
        yield from (
            (f"{where}.{f}", m)
            for f, m in _length(entry, "description", 0, 255, "the route description")
        )


@provider_rule(
    EIP,
    source=_GEN
    + "vpc/eip_resource_gen.go:65-67,103-105,291-292; "
    + _SCHEMA
    + "Volcengine_VPC_EIP.json (Bandwidth: 1 to 200 when BillingType is 3)",
)
def eip_billing_and_bandwidth(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An EIP names its billing type (1, 2 or 3); its bandwidth is 1 to 500 Mbps, 1 to 200 when
    billed by traffic (3); it binds only to the instance types the API knows."""
    i = resource.inputs
    billing = i.get("billingType")
    if billing is None:
        yield "billingType", "is required: 1 subscription, 2 by bandwidth, 3 by traffic"
    else:
        yield from _one_of(i, "billingType", (1, 2, 3))
    bandwidth = i.get("bandwidth")
    high = 200 if billing == 3 else 500
    if isinstance(bandwidth, int) and not 1 <= bandwidth <= high:
        yield "bandwidth", f"{bandwidth} Mbps: allowed 1 to {high} with billingType {billing}"
    yield from _one_of(
        i, "instanceType", ("Nat", "NetworkInterface", "ClbInstance", "EcsInstance", "HaVip", "")
    )


@provider_rule(
    NAT,
    source=_GEN
    + "natgateway/ngw_resource_gen.go:51-52,262-263,343-350,504-512,635; "
    + _SCHEMA
    + "Volcengine_NatGateway_NGW.json (BillingType: intranet takes only 3)",
)
def nat_gateway_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A NAT gateway needs its VPC; billing type 1 to 3 (an intranet one only 3); a known network
    type and specification; a name of at most 128 characters."""
    i = resource.inputs
    yield from _required(i, "vpcId")
    billing = i.get("billingType")
    if billing is not None and billing not in (1, 2, 3):
        yield "billingType", f"{billing!r}: allowed 1, 2, 3"
    if i.get("networkType") == "intranet" and billing not in (None, 3):
        yield "billingType", "an intranet NAT gateway is billed by usage only (3)"
    yield from _one_of(i, "networkType", ("internet", "intranet"))
    yield from _one_of(
        i, "spec", ("Small", "Medium", "Large", "Extra_Large_1", "Extra_Large_2", "")
    )
    yield from _length(i, "natGatewayName", 0, 128, "the NAT gateway name")


@provider_rule(SNAT, source=_GEN + "natgateway/snatentry_resource_gen.go:65-67")
def snat_entry_gateway(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A SNAT entry names its NAT gateway (required; changing it replaces the entry)."""
    yield from _required(resource.inputs, "natGatewayId")


_PERMISSION_FIELDS = ("description", "policy", "portStart", "portEnd", "priority", "protocol")
_PROTOCOLS = ("tcp", "udp", "icmp", "icmpv6", "all")


@provider_rule(
    SECURITY_GROUP,
    source=_GEN + "vpc/security_group_resource_gen.go:365-460,522-523,638",
)
def security_group_rules_complete(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """Every inline rule sets description, policy, ports, priority and protocol (NotNull
    validators); protocols are tcp, udp, icmp, icmpv6 or all; `all` and icmp take ports -1,
    tcp and udp 1 to 65535; priority is 1 to 100. The group needs its VPC; name 1 to 128."""
    i = resource.inputs
    yield from _required(i, "vpcId")
    yield from _length(i, "securityGroupName", 1, 128, "the security group name")
    for direction in ("ingressPermissions", "egressPermissions"):
        for n, perm in enumerate(i.get(direction) or []):
            where = f"{direction}.{n}"
            for field in _PERMISSION_FIELDS:
                if perm.get(field) is None:
                    yield (
                        f"{where}.{field}",
                        (
                            "must be set: the provider refuses a rule with any of "
                            + ", ".join(_PERMISSION_FIELDS)
                            + " unset"
                        ),
                    )
            protocol = perm.get("protocol")
            if protocol is not None and protocol not in _PROTOCOLS:
                yield f"{where}.protocol", f"{protocol!r}: allowed " + ", ".join(_PROTOCOLS)
            low, high = perm.get("portStart"), perm.get("portEnd")
            if protocol in ("all", "icmp", "icmpv6") and (low, high) != (-1, -1):
                yield f"{where}.portStart", f"protocol {protocol} takes only -1 as its ports"
            if protocol in ("tcp", "udp") and not (
                isinstance(low, int) and isinstance(high, int) and 1 <= low <= high <= 65535
            ):
                yield f"{where}.portStart", f"{protocol} ports are 1 to 65535 (start <= end)"
            priority = perm.get("priority")
            if isinstance(priority, int) and not 1 <= priority <= 100:
                yield f"{where}.priority", f"{priority}: allowed 1 to 100"
            if perm.get("policy") not in (None, "accept", "drop"):
                yield f"{where}.policy", f"{perm.get('policy')!r}: allowed accept, drop"


# ---------------------------------------------------------------------------------------------
# VKE: cluster, node pools, kubeconfig, add-ons

_MINOR = re.compile(r"^1\.\d+$")


@provider_rule(
    CLUSTER,
    source=_GEN
    + "vke/cluster_resource_gen.go:341-342,703-705,864-875,912-921,1012-1025; "
    + _SCHEMA
    + "Volcengine_VKE_Cluster.json (ClusterConfig requires SubnetIds)",
)
def vke_cluster_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A VKE cluster: name 2 to 64 characters, description at most 300, control-plane subnets,
    a pod network mode (Flannel or VpcCniShared), Flannel's pods per node from 16, 32, 64, 128,
    256, and a Service CIDR."""
    i = resource.inputs
    yield from _length(i, "name", 2, 64, "the cluster name", required=True)
    yield from _length(i, "description", 0, 300, "the cluster description")
    if not get(i, "clusterConfig.subnetIds"):
        yield "clusterConfig.subnetIds", "the control plane needs its subnets"
    mode = get(i, "podsConfig.podNetworkMode")
    if mode is None:
        yield "podsConfig.podNetworkMode", "is required: Flannel or VpcCniShared"
    yield from _one_of(i, "podsConfig.podNetworkMode", ("Flannel", "VpcCniShared"))
    yield from _one_of(i, "podsConfig.flannelConfig.maxPodsPerNode", (16, 32, 64, 128, 256))
    if mode == "Flannel" and not get(i, "podsConfig.flannelConfig.podCidrs"):
        yield "podsConfig.flannelConfig.podCidrs", "Flannel needs a pod CIDR"
    if not get(i, "servicesConfig.serviceCidrsv4s"):
        yield "servicesConfig.serviceCidrsv4s", "is required (the Service network)"


@provider_rule(
    CLUSTER,
    source=_GEN
    + "vke/cluster_resource_gen.go:467 (RequiresReplaceIfConfigured); "
    + _SCHEMA
    + "Volcengine_VKE_Cluster.json (KubernetesVersionCreate: format x.xx)",
)
def vke_cluster_version_is_a_minor(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """The version a cluster is created with is a minor (`1.32`), which VKE matches to its newest
    release; it is fixed at creation (a change replaces the cluster)."""
    version = resource.inputs.get("kubernetesVersionCreate")
    if version is not None and not _MINOR.match(str(version)):
        yield "kubernetesVersionCreate", f"{version!r} is not a minor version such as 1.32"


@provider_rule(
    CLUSTER,
    source=_SCHEMA
    + "Volcengine_VKE_Cluster.json (ApiServerPublicAccessConfig has no source allowlist); "
    "the API's AccessSourceIpsv4, empty meaning 0.0.0.0/0: "
    "volcengine/terraform-provider-volcengine@v0.0.194 "
    "volcengine/vke/cluster/data_source_volcengine_vke_clusters.go:254-261",
)
def vke_public_endpoint_is_world_open(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """A public VKE API endpoint created through this provider admits every address: its
    allowlist is not an argument, and an empty allowlist means 0.0.0.0/0."""
    if get(resource.inputs, "clusterConfig.apiServerPublicAccessEnabled") is True:
        yield (
            "clusterConfig.apiServerPublicAccessEnabled",
            "would open the Kubernetes API to the whole internet (no allowlist can be given); "
            "keep it false and reach the private endpoint from inside the VPC",
        )


RESERVED_POOL_NAME = "vke-default-nodepool"


@provider_rule(
    NODE_POOL,
    source=_GEN
    + "vke/node_pool_resource_gen.go:138-143,165,832-838,966-967,1430-1435,1687-1695,1722-1747; "
    + _SCHEMA
    + "Volcengine_VKE_NodePool.json (Name: vke-default-nodepool reserved; SpotStrategy: "
    "PostPaid only)",
)
def vke_node_pool_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A node pool: its cluster; a name of 2 to 64 characters other than vke-default-nodepool;
    known charge type, spot strategy (spot only pay-as-you-go), subnet policy, taint effects;
    a system disk of ESSD_PL0 or ESSD_FlexPL, 40 to 2048 GiB."""
    i = resource.inputs
    yield from _required(i, "clusterId")
    yield from _length(i, "name", 2, 64, "the node pool name")
    if i.get("name") == RESERVED_POOL_NAME:
        yield "name", f"{RESERVED_POOL_NAME} is the default pool's name, reserved"
    yield from _one_of(i, "autoScaling.subnetPolicy", ("ZoneBalance", "Priority"))
    yield from _one_of(i, "nodeConfig.instanceChargeType", ("PostPaid", "PrePaid"))
    yield from _one_of(i, "nodeConfig.spotStrategy", ("NoSpot", "SpotAsPriceGo"))
    if get(i, "nodeConfig.spotStrategy") == "SpotAsPriceGo" and get(
        i, "nodeConfig.instanceChargeType"
    ) not in (None, "PostPaid"):
        yield "nodeConfig.spotStrategy", "spot instances are pay-as-you-go (PostPaid) only"
    yield from _one_of(i, "nodeConfig.systemVolume.type", ("ESSD_PL0", "ESSD_FlexPL"))
    size = get(i, "nodeConfig.systemVolume.size")
    if isinstance(size, int) and not 40 <= size <= 2048:
        yield "nodeConfig.systemVolume.size", f"{size} GiB: allowed 40 to 2048"
    if not get(i, "nodeConfig.instanceTypeIds"):
        yield "nodeConfig.instanceTypeIds", "a pool needs an instance type"
    for n, taint in enumerate(get(i, "kubernetesConfig.taints") or []):
        effect = taint.get("effect")
        if effect not in (None, "NoSchedule", "NoExecute", "PreferNoSchedule"):
            yield (
                f"kubernetesConfig.taints.{n}.effect",
                f"{effect!r}: allowed NoSchedule, NoExecute, PreferNoSchedule",
            )


@provider_rule(
    NODE_POOL,
    source=_GEN
    + "vke/node_pool_resource_gen.go:80-89 (auto_scaling.desired_replicas: updatable, sent by "
    "vke:UpdateNodePoolConfig, Volcengine_VKE_NodePool.json handlers.update)",
)
def vke_autoscaled_pool_keeps_its_desired_count(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """An autoscaled pool's desired count is the autoscaler's: a `pulumi up` that resets it
    removes nodes in the middle of training, so `autoScaling.desiredReplicas` is ignored."""
    if get(resource.inputs, "autoScaling.enabled") is True and (
        "autoScaling.desiredReplicas" not in resource.ignore_changes
        and "autoScaling" not in resource.ignore_changes
    ):
        yield (
            "autoScaling.desiredReplicas",
            "the autoscaler moves it: add it to ignore_changes so an update does not undo that",
        )


@provider_rule(
    KUBECONFIG,
    source=_GEN
    + "vke/kubeconfig_resource_gen.go:37-39,122-124,156; the CreateKubeconfig limits as "
    "volcengine/terraform-provider-volcengine@v0.0.194 "
    "volcengine/vke/kubeconfig/resource_volcengine_vke_kubeconfig.go:38-50 states them",
)
def vke_kubeconfig_type_and_duration(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """A kubeconfig names its cluster and type (Public or Private); it is valid 1 to 43800
    hours."""
    i = resource.inputs
    yield from _required(i, "clusterId", "type")
    yield from _one_of(i, "type", ("Public", "Private"))
    hours = i.get("validDuration")
    if isinstance(hours, int) and not 1 <= hours <= 43800:
        yield "validDuration", f"{hours} hours: allowed 1 to 43800"


@provider_rule(
    ADDON,
    source=_GEN
    + "vke/addon_resource_gen.go:44,91-99,117-125,141; "
    + _SCHEMA
    + "Volcengine_VKE_Addon.json (DeployNodeType only with Unmanaged)",
)
def vke_addon_deploy_mode(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An add-on names its cluster and itself; it is Managed or Unmanaged, and an Unmanaged one
    says where it runs (Node or VirtualNode)."""
    i = resource.inputs
    yield from _required(i, "clusterId", "name")
    yield from _one_of(i, "deployMode", ("Unmanaged", "Managed"))
    yield from _one_of(i, "deployNodeType", ("Node", "VirtualNode"))
    if i.get("deployMode") == "Unmanaged" and not i.get("deployNodeType"):
        yield "deployNodeType", "an Unmanaged add-on needs Node or VirtualNode"


# ---------------------------------------------------------------------------------------------
# TOS and IAM


@provider_rule(BUCKET, source=_GEN + "tos/bucket_resource_gen.go:303-315,453-458,1024-1029")
def tos_bucket_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A TOS bucket's name has 3 to 63 characters (and replaces the bucket on change); its
    versioning status is Enabled or Suspended; its ACL a known canned one."""
    i = resource.inputs
    yield from _length(i, "name", 3, 63, "the bucket name", required=True)
    yield from _one_of(i, "enableVersionStatus", ("Enabled", "Suspended"))
    yield from _one_of(
        i,
        "aclGrant.acl",
        (
            "private", "public-read", "public-read-write", "authenticated-read",
            "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write",
            "bucket-owner-entrusted", "default",
        ),
    )  # fmt: skip


@provider_rule(
    BUCKET_ENCRYPTION,
    source=_SCHEMA + "Volcengine_TOS_BucketEncryption.json (required Name; SSEAlgorithm values)",
)
def tos_bucket_encryption_algorithm(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """Default encryption names its bucket and an algorithm: kms (with a key), AES256 or SM4."""
    i = resource.inputs
    yield from _required(i, "name")
    yield from _one_of(i, "sseAlgorithm", ("kms", "AES256", "SM4"))
    if i.get("kmsMasterKeyId") and i.get("sseAlgorithm") != "kms":
        yield "kmsMasterKeyId", "a KMS key only applies with sseAlgorithm kms"


_ROLE_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")


@provider_rule(
    IAM_ROLE,
    source=_GEN
    + "iam/role_resource_gen.go:118-120,207-226,268; "
    + _SCHEMA
    + "Volcengine_IAM_Role.json (RoleName: 1 to 64 of letters, digits, .-_)",
)
def iam_role_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A role's name has 1 to 64 letters, digits or .-_; its session lasts 3600 to 43200
    seconds; each attached policy names itself and its type (System or Custom); its trust
    policy is a JSON document."""
    i = resource.inputs
    name = i.get("roleName")
    if name is None:
        yield "roleName", "is required (the role's identifier)"
    elif not _ROLE_NAME.match(str(name)):
        yield "roleName", f"{name!r}: 1 to 64 letters, digits, '.', '-' or '_'"
    duration = i.get("maxSessionDuration")
    if isinstance(duration, int) and not 3600 <= duration <= 43200:
        yield "maxSessionDuration", f"{duration} s: allowed 3600 to 43200"
    for n, policy in enumerate(i.get("policies") or []):
        if not policy.get("policyName"):
            yield f"policies.{n}.policyName", "is required"
        if policy.get("policyType") not in ("System", "Custom"):
            yield (
                f"policies.{n}.policyType",
                f"{policy.get('policyType')!r}: allowed System, Custom",
            )
    document = i.get("trustPolicyDocument")
    if document is not None:
        try:
            json.loads(document)
        except (TypeError, json.JSONDecodeError):
            yield "trustPolicyDocument", "is not a JSON document"


@provider_rule(IAM_POLICY, source=_GEN + "iam/policy_resource_gen.go:86-87,118-120,134-139,296-304")
def iam_policy_arguments(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A policy has a name of 1 to 64 characters, a document of 1 to 6144 characters, a type
    (System or Custom) and a description of at most 128 characters."""
    i = resource.inputs
    yield from _length(i, "policyName", 1, 64, "the policy name", required=True)
    yield from _length(i, "policyDocument", 1, 6144, "the policy document", required=True)
    if i.get("policyType") is None:
        yield "policyType", "is required: System or Custom"
    yield from _one_of(i, "policyType", ("System", "Custom"))
    yield from _length(i, "description", 0, 128, "the policy description")
