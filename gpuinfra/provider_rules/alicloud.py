"""Provider rules for the alicloud resources the stacks create (see model.py).

pulumi-alicloud 4.x bridges aliyun/terraform-provider-alicloud's v2 line. The exact build
the 4.0.0 SDK bridges is newer than any snapshot in reach (its docs cite v1.295.0 and
v2.0.0-beta5), so line numbers are those of `ace5bcf8`, release/v2 on 2026-08-21, checked
against v1.289.0 where it matters. API facts come from Alibaba's own Go SDKs, whose request
models carry the API reference text: alibabacloud-go/cs-20151215@v7.6.0,
alibabacloud-go/vpc-20160428@v7.2.5 and alibabacloud-go/ram-20150501@v2.2.1.

`d.GetOk` (trap 1): most Create functions send a boolean only when it is true. For each
resource below the booleans read that way are listed; a rule refuses `False` where the API
default is true (the program would ask for one thing and get the other), and the list says
where a dropped false is harmless (the default is false too).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .model import Problem, RuleContext, dropped_falsy, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

TF = "aliyun/terraform-provider-alicloud@ace5bcf8"
CS_API = "alibabacloud-go/cs-20151215@v7.6.0"
VPC_API = "alibabacloud-go/vpc-20160428@v7.2.5"
RAM_API = "alibabacloud-go/ram-20150501@v2.2.1"
ECS_SG_TYPES_DOC = (
    "https://www.alibabacloud.com/help/en/ecs/user-guide/"
    "basic-security-groups-and-advanced-security-groups (updated 2026-04-27)"
)

CLUSTER = "alicloud:cs/managedKubernetes:ManagedKubernetes"
NODE_POOL = "alicloud:cs/nodePool:NodePool"
AUTOSCALING = "alicloud:cs/autoscalingConfig:AutoscalingConfig"
VPC = "alicloud:vpc/network:Network"
VSWITCH = "alicloud:vpc/switch:Switch"
NAT = "alicloud:vpc/natGateway:NatGateway"
SNAT = "alicloud:vpc/snatEntry:SnatEntry"
EIP = "alicloud:ecs/eipAddress:EipAddress"
EIP_ASSOCIATION = "alicloud:ecs/eipAssociation:EipAssociation"
SECURITY_GROUP = "alicloud:ecs/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "alicloud:ecs/securityGroupRule:SecurityGroupRule"
INSTANCE = "alicloud:ecs/instance:Instance"
KMS_KEY = "alicloud:kms/key:Key"
KMS_ALIAS = "alicloud:kms/alias:Alias"
BUCKET = "alicloud:oss/bucket:Bucket"
BUCKET_ACL = "alicloud:oss/bucketAcl:BucketAcl"
BUCKET_PUBLIC_ACCESS_BLOCK = "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock"
RAM_ROLE = "alicloud:ram/role:Role"
RAM_POLICY = "alicloud:ram/policy:Policy"
RAM_ATTACHMENT = "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment"


def _referenced(ctx: RuleContext, value: Any, type_: str) -> RecordedResource | None:
    return ctx.by_id(value, type_)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# ---------------------------------------------------------------------------------------
# ACK: ManagedKubernetes
# GetOk-dropped booleans in Create (resource_alicloud_cs_managed_kubernetes.go):
#   new_nat_gateway :683 (SnatEntry, API default true: refused below),
#   slb_internet_enabled :687 (EndpointPublicAccess, API default false: a false is harmless;
#     but the provider's own default is true, so leaving it out makes the endpoint public),
#   is_enterprise_security_group :695 (API default true: refused below),
#   enable_rrsa :749 (API default false: harmless). deletion_protection is GetOkExists :667.


@provider_rule(
    CLUSTER,
    source=f"{TF} alicloud/resource_alicloud_cs_managed_kubernetes.go:683,695; {CS_API} "
    "client/create_cluster_request_model.go:545-572,1040-1065",
)
def ack_false_never_sent(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create sends new_nat_gateway and is_enterprise_security_group only when true; the
    API defaults of both (SnatEntry, IsEnterpriseSecurityGroup) are true."""
    inputs = resource.inputs
    if dropped_falsy(inputs, "newNatGateway"):
        yield (
            "newNatGateway",
            "false is never sent (d.GetOk), and CreateCluster's snat_entry defaults to true: "
            "ACK creates a NAT gateway and SNAT entries anyway. Leave it true and make no NAT "
            "gateway of your own in the cluster's VPC",
        )
    if dropped_falsy(inputs, "isEnterpriseSecurityGroup") and not inputs.get("securityGroupId"):
        yield (
            "isEnterpriseSecurityGroup",
            "false is never sent (d.GetOk), and CreateCluster's is_enterprise_security_group "
            "defaults to true: the cluster group is advanced anyway. Set it true and keep "
            "basic groups off its nodes, or pass your own securityGroupId",
        )


@provider_rule(
    CLUSTER,
    source=f"{TF} alicloud/resource_alicloud_cs_managed_kubernetes.go:683; {CS_API} "
    "client/create_cluster_request_model.go:1053-1065",
)
def ack_snat_beside_own_nat(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CreateCluster with snat_entry true (always, see ack_false_never_sent) makes ACK set up
    a NAT gateway and SNAT rules for the cluster's vSwitches."""
    vpcs = set()
    for vswitch_id in _strings(resource.inputs.get("vswitchIds")):
        vswitch = _referenced(ctx, vswitch_id, VSWITCH)
        if vswitch is not None and isinstance(vswitch.inputs.get("vpcId"), str):
            vpcs.add(vswitch.inputs["vpcId"])
    own = [n.name for n in ctx.of_type(NAT) if n.inputs.get("vpcId") in vpcs]
    if own:
        yield (
            "newNatGateway",
            f"ACK configures NAT and SNAT for the cluster's vSwitches itself (snat_entry is "
            f"true), beside this stack's NAT gateway {', '.join(own)} in the same VPC: two "
            "NAT gateways or two SNAT entries per vSwitch. Let ACK make the NAT gateway and "
            "drop your own",
        )


@provider_rule(
    CLUSTER,
    source=f"{TF} alicloud/resource_alicloud_cs_managed_kubernetes.go:55,95-99,146,353",
)
def ack_cluster_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The schema's validators: name 1-63 characters, 1-5 vSwitches named `vsw-...`,
    proxy_mode and cluster_spec from fixed lists."""
    inputs = resource.inputs
    name = inputs.get("name")
    if isinstance(name, str) and not 1 <= len(name) <= 63:
        yield "name", f"{name!r} is {len(name)} characters; ACK takes 1 to 63"
    vswitches = inputs.get("vswitchIds")
    if isinstance(vswitches, list) and not 1 <= len(vswitches) <= 5:
        yield "vswitchIds", f"{len(vswitches)} vSwitches; ACK takes 1 to 5"
    for vswitch_id in _strings(vswitches):
        if not vswitch_id.startswith("vsw-"):
            yield "vswitchIds", f"{vswitch_id!r} is not a vSwitch id (vsw-...)"
    proxy = inputs.get("proxyMode")
    if proxy is not None and proxy not in ("iptables", "ipvs", "nftables"):
        yield "proxyMode", f"{proxy!r}: allowed iptables, ipvs, nftables"
    spec = inputs.get("clusterSpec")
    allowed = ("ack.standard", "ack.pro.small", "ack.pro.xlarge", "ack.pro.2xlarge")
    if spec is not None and spec not in (*allowed, "ack.pro.4xlarge"):
        yield "clusterSpec", f"{spec!r}: allowed {', '.join(allowed)}, ack.pro.4xlarge"


_ACK_VERSION = re.compile(r"^\d+\.\d+\.\d+-aliyun\.\d+$")


@provider_rule(
    CLUSTER,
    source=f"{TF} alicloud/resource_alicloud_cs_managed_kubernetes.go:663,920,1176-1204",
)
def ack_version_pinned(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create sends `version` as KubernetesVersion, Read sets it to ACK's CurrentVersion and
    any change calls UpgradeCluster (control plane and, unless upgrade_policy says
    control_plane_only, every node pool)."""
    version = resource.inputs.get("version")
    if not isinstance(version, str) or not _ACK_VERSION.match(version):
        yield (
            "version",
            f"{version!r}: pin the full ACK version (e.g. 1.33.3-aliyun.1). Without one ACK "
            "picks the newest and any later difference is an UpgradeCluster",
        )
    elif get(resource.inputs, "upgradePolicy.controlPlaneOnly") is not True:
        yield (
            "upgradePolicy.controlPlaneOnly",
            "not true: a version change would upgrade every node pool in the same call "
            "(UpgradeCluster MasterOnly unset). Set it true and upgrade node pools one by one",
        )


# ---------------------------------------------------------------------------------------
# Security groups on nodes and instances


def _group_type(ctx: RuleContext, group_id: str) -> str | None:
    """`normal` (basic) or `enterprise` (advanced), or None when the plan cannot tell."""
    group = _referenced(ctx, group_id, SECURITY_GROUP)
    if group is not None:
        # security_group_type defaults to normal (website/docs/r/security_group.html.markdown:75)
        return str(group.inputs.get("securityGroupType") or "normal")
    for cluster in ctx.of_type(CLUSTER):
        if cluster.outputs.get("securityGroupId") == group_id and not cluster.inputs.get(
            "securityGroupId"
        ):
            # ACK made it: advanced, the API default, and a false is never sent.
            return "enterprise"
    return None


def _mixed_types(ctx: RuleContext, field: str, group_ids: Sequence[str]) -> Iterator[Problem]:
    types = {g: _group_type(ctx, g) for g in group_ids}
    known = {t for t in types.values() if t is not None}
    if len(known) > 1:
        listed = ", ".join(f"{g} ({t})" for g, t in types.items())
        yield (
            field,
            f"mixes basic and advanced security groups ({listed}); ECS refuses an instance in "
            "both kinds. Use groups of one type (ACK's own cluster group is advanced)",
        )


@provider_rule(
    NODE_POOL,
    INSTANCE,
    source=f"{ECS_SG_TYPES_DOC}; {TF} alicloud/resource_alicloud_cs_managed_kubernetes.go:695",
)
def one_security_group_type(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An ECS instance (or node) joins basic or advanced security groups, never both."""
    field = "securityGroupIds" if resource.type == NODE_POOL else "securityGroups"
    yield from _mixed_types(ctx, field, _strings(resource.inputs.get(field)))


# ---------------------------------------------------------------------------------------
# ACK: NodePool
# GetOk-dropped booleans in Create (resource_alicloud_cs_kubernetes_node_pool.go):
#   system_disk_encrypted :1222, compensate_with_on_demand :1245, spot_instance_remedy :1398,
#   unschedulable :1679, install_cloud_monitor :1708 (cms_enabled, API default false), all
#   defaulting to false in the API, so a false is harmless. scaling_config.enable and
#   min_size go through jsonpath (:1621-1632) and are sent even when false or 0.


@provider_rule(
    NODE_POOL,
    source=f"{TF} alicloud/resource_alicloud_cs_kubernetes_node_pool.go:1173-1189; {CS_API} "
    "client/create_cluster_node_pool_request_model.go:1744-1752",
)
def node_pool_security_groups(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CreateClusterNodePool needs security_group_ids (or the deprecated security_group_id)."""
    inputs = resource.inputs
    if not _strings(inputs.get("securityGroupIds")) and not inputs.get("securityGroupId"):
        yield (
            "securityGroupIds",
            "missing: CreateClusterNodePool requires the node pool's security groups; pass "
            "the cluster's securityGroupId",
        )


@provider_rule(
    NODE_POOL,
    source=f"{TF} alicloud/resource_alicloud_cs_kubernetes_node_pool.go:218,646,778-786,804-807,"
    "856,902; "
    f"{CS_API} client/create_cluster_node_pool_request_model.go:1528-1537",
)
def node_pool_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The schema's validators, and on-demand compensation, which works only with
    multi_az_policy COST_OPTIMIZED."""
    inputs = resource.inputs
    policy = inputs.get("multiAzPolicy")
    if policy is not None and policy not in ("PRIORITY", "COST_OPTIMIZED", "BALANCE"):
        yield "multiAzPolicy", f"{policy!r}: allowed PRIORITY, COST_OPTIMIZED, BALANCE"
    if inputs.get("compensateWithOnDemand") is True and policy != "COST_OPTIMIZED":
        yield (
            "compensateWithOnDemand",
            f"takes effect only with multiAzPolicy COST_OPTIMIZED (is {policy!r}): no "
            "pay-as-you-go node would replace missing spot capacity",
        )
    kind = get(inputs, "scalingConfig.type")
    if kind is not None and kind not in ("cpu", "gpu", "gpushare", "spot"):
        yield "scalingConfig.type", f"{kind!r}: allowed cpu, gpu, gpushare, spot"
    for key, ceiling in (("minSize", 1000), ("maxSize", 2000)):
        size = get(inputs, f"scalingConfig.{key}")
        if isinstance(size, int) and not 0 <= size <= ceiling:
            yield f"scalingConfig.{key}", f"{size}: allowed 0 to {ceiling}"
    pools = inputs.get("spotInstancePools")
    if isinstance(pools, int) and not 0 <= pools <= 10:
        yield "spotInstancePools", f"{pools}: allowed 0 to 10"
    algorithm = inputs.get("systemDiskEncryptAlgorithm")
    if algorithm is not None and algorithm != "aes-256":
        yield "systemDiskEncryptAlgorithm", f"{algorithm!r}: the only value is aes-256"
    tokens = get(inputs, "instanceMetadataOptions.httpTokens")
    if tokens is not None and tokens not in ("optional", "required"):
        yield "instanceMetadataOptions.httpTokens", f"{tokens!r}: allowed optional, required"


# ---------------------------------------------------------------------------------------
# ACK: AutoscalingConfig
# Create is Update (resource_alicloud_cs_autoscaling_config.go:119-121), which reads
# skip_nodes_with_system_pods :234, skip_nodes_with_local_storage :237,
# daemonset_eviction_for_nodes :240, recycle_node_deletion_enabled :249 and
# scale_up_from_zero :252 with GetOk; scale_down_enabled is sent as is (:229-230).
# Defaults (website/docs/r/cs_autoscaling_config.html.markdown): skip_nodes_with_system_pods
# true, scale_up_from_zero true (refused below); the others false (harmless).

_AUTOSCALER_TRUE_DEFAULTS = ("skipNodesWithSystemPods", "scaleUpFromZero")


@provider_rule(
    AUTOSCALING,
    source=f"{TF} alicloud/resource_alicloud_cs_autoscaling_config.go:173-174,192-193,234,252; "
    f"{TF} website/docs/r/cs_autoscaling_config.html.markdown",
)
def autoscaler_false_never_sent(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A false for a field whose default is true is never sent and reads back as true:
    the setting does not apply, and every `pulumi up` shows a diff."""
    for field in _AUTOSCALER_TRUE_DEFAULTS:
        if dropped_falsy(resource.inputs, field):
            yield (
                field,
                "false is never sent (d.GetOk) and the autoscaler keeps its default, true; "
                "Read then reports true: a diff on every update. Leave it true",
            )


_DURATION = re.compile(r"^\d+m$")


@provider_rule(
    AUTOSCALING,
    source=f"{TF} alicloud/resource_alicloud_cs_autoscaling_config.go:41-50; {CS_API} "
    "client/create_autoscaling_config_request_model.go:47-52,163-168",
)
def autoscaler_durations(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """unneeded_duration and cool_down_duration are minutes, written like the defaults
    (`10m`)."""
    for field in ("unneededDuration", "coolDownDuration"):
        value = resource.inputs.get(field)
        if value is not None and not (isinstance(value, str) and _DURATION.match(value)):
            yield field, f"{value!r}: write whole minutes such as 10m"


# ---------------------------------------------------------------------------------------
# VPC, vSwitch, NAT gateway, SNAT, EIP
# Their Create functions read no boolean the stacks set with GetOk (vpc enable_ipv6 and
# dry_run, vswitch ipv6 mask, nat icmp_reply_enabled, snat eip_affinity, eip auto_pay are all
# GetOkExists: resource_alicloud_vpc.go:246, resource_alicloud_nat_gateway.go:243,
# resource_alicloud_snat_entry.go:98, resource_alicloud_eip_address.go:230).

_RESERVED = [ipaddress.ip_network(c) for c in ("100.64.0.0/10", "224.0.0.0/4", "127.0.0.0/8")]
_RESERVED.append(ipaddress.ip_network("169.254.0.0/16"))


@provider_rule(VPC, source=f"{VPC_API} client/create_vpc_request_model.go:57-61")
def vpc_cidr_block(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CreateVpc refuses 100.64.0.0/10, 224.0.0.0/4, 127.0.0.0/8, 169.254.0.0/16 and their
    subnets."""
    cidr = resource.inputs.get("cidrBlock")
    if not isinstance(cidr, str):
        return
    try:
        network = ipaddress.ip_network(cidr)
    except ValueError:
        yield "cidrBlock", f"{cidr!r} is not a CIDR block"
        return
    for reserved in _RESERVED:
        if network.version == 4 and network.overlaps(reserved):
            yield "cidrBlock", f"{cidr} overlaps {reserved}, which a VPC cannot use"


@provider_rule(VSWITCH, source=f"{VPC_API} client/create_vswitch_request_model.go:43-53")
def vswitch_cidr_block(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A vSwitch's block has a /16 to /29 mask, lies inside its VPC's, and is not in
    100.64.0.0/10."""
    cidr = resource.inputs.get("cidrBlock")
    if not isinstance(cidr, str):
        return
    try:
        network = ipaddress.ip_network(cidr)
    except ValueError:
        yield "cidrBlock", f"{cidr!r} is not a CIDR block"
        return
    if not 16 <= network.prefixlen <= 29:
        yield "cidrBlock", f"{cidr}: the mask must be /16 to /29"
    if network.version == 4 and network.overlaps(_RESERVED[0]):
        yield "cidrBlock", f"{cidr} overlaps 100.64.0.0/10, which a vSwitch cannot use"
    vpc = _referenced(ctx, resource.inputs.get("vpcId"), VPC)
    vpc_cidr = vpc.inputs.get("cidrBlock") if vpc is not None else None
    if isinstance(vpc_cidr, str):
        parent = ipaddress.ip_network(vpc_cidr, strict=False)
        if network.version != parent.version or not network.subnet_of(parent):  # type: ignore[arg-type]
            yield "cidrBlock", f"{cidr} is not inside its VPC's {vpc_cidr}"


@provider_rule(
    NAT,
    source=f"{VPC_API} client/create_nat_gateway_request_model.go:238-244; "
    f"{TF} website/docs/r/nat_gateway.html.markdown:116-118",
)
def nat_gateway_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CreateNatGateway needs a vSwitch; only Enhanced gateways billed PayByLcu are sold."""
    inputs = resource.inputs
    if not inputs.get("vswitchId"):
        yield "vswitchId", "required: the NAT gateway takes a private address from a vSwitch"
    if inputs.get("natType", "Enhanced") != "Enhanced":
        yield "natType", f"{inputs['natType']!r}: only Enhanced can be created"
    charge = inputs.get("internetChargeType")
    if charge is not None and charge != "PayByLcu":
        yield "internetChargeType", f"{charge!r}: only PayByLcu can be created"


@provider_rule(
    SNAT,
    source=f"{VPC_API} client/create_snat_entry_request_model.go:101-160; CreateSnatEntry "
    "https://www.alibabacloud.com/help/doc-detail/120259.htm ('Each vSwitch or ECS instance "
    "can be specified in only one SNAT entry'; 'SnatIp must be an EIP attached to the NAT "
    "gateway', doc-detail/42672)",
)
def snat_entry_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """One SNAT entry per vSwitch (ACK's own count), source vSwitch xor CIDR, and an EIP
    already associated with the gateway."""
    inputs = resource.inputs
    vswitch = inputs.get("sourceVswitchId")
    if bool(vswitch) == bool(inputs.get("sourceCidr")):
        yield "sourceVswitchId", "give exactly one of sourceVswitchId and sourceCidr"
    if not inputs.get("snatIp"):
        yield "snatIp", "required for an Internet NAT gateway: the EIP(s) to translate to"
    if vswitch:
        others = [
            s.name
            for s in ctx.of_type(SNAT)
            if s.urn != resource.urn and s.inputs.get("sourceVswitchId") == vswitch
        ]
        if others:
            yield "sourceVswitchId", f"{vswitch} already has an SNAT entry ({', '.join(others)})"
        clusters = [
            c.name for c in ctx.of_type(CLUSTER) if vswitch in _strings(c.inputs.get("vswitchIds"))
        ]
        if clusters:
            yield (
                "sourceVswitchId",
                f"{vswitch} is a vSwitch of ACK cluster {', '.join(clusters)}, which configures "
                "SNAT for it itself (snat_entry is always true): leave it to ACK",
            )
    eips = [e for e in ctx.of_type(EIP) if e.outputs.get("ipAddress") == inputs.get("snatIp")]
    table = inputs.get("snatTableId")
    for eip in eips:
        associations = [
            a
            for a in ctx.of_type(EIP_ASSOCIATION)
            if a.inputs.get("allocationId") == eip.id
            and (nat := _referenced(ctx, a.inputs.get("instanceId"), NAT)) is not None
            and table in (nat.outputs.get("snatTableIds") or "").split(",")
        ]
        if not associations:
            yield "snatIp", f"EIP {eip.name} is not associated with this entry's NAT gateway"
        elif not any(ctx.depends_on(resource, a) for a in associations):
            yield (
                "snatIp",
                f"EIP {eip.name} must be associated with the NAT gateway before the entry is "
                "created: make the entry depend on the EipAssociation",
            )


@provider_rule(EIP, source=f"{VPC_API} client/allocate_eip_address_request_model.go:81-89,143-151")
def eip_bandwidth(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Pay-as-you-go EIPs take 1-200 Mbit/s billed by traffic, 1-500 by bandwidth."""
    inputs = resource.inputs
    raw = inputs.get("bandwidth")
    if raw is None:
        return
    try:
        bandwidth = int(str(raw))
    except ValueError:
        yield "bandwidth", f"{raw!r} is not a whole number of Mbit/s"
        return
    if inputs.get("paymentType", "PayAsYouGo") in ("PayAsYouGo", "PostPaid"):
        by_traffic = inputs.get("internetChargeType", "PayByBandwidth") == "PayByTraffic"
        ceiling = 200 if by_traffic else 500
        if not 1 <= bandwidth <= ceiling:
            yield "bandwidth", f"{bandwidth} Mbit/s: allowed 1 to {ceiling} for this billing"


_ASSOCIATION_TYPES = {NAT: "Nat", INSTANCE: "EcsInstance"}


@provider_rule(
    EIP_ASSOCIATION, source=f"{VPC_API} client/associate_eip_address_request_model.go:77-95"
)
def eip_association_type(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """InstanceType defaults to EcsInstance and must be given for anything else (Nat, ...)."""
    target = ctx.by_id(resource.inputs.get("instanceId"), *_ASSOCIATION_TYPES)
    expected = _ASSOCIATION_TYPES.get(target.type) if target is not None else None
    given = resource.inputs.get("instanceType") or "EcsInstance"
    if expected is not None and given != expected:
        yield "instanceType", f"{given!r} for a {target.type}: set {expected!r}"  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------
# Security groups and rules
# No GetOk boolean in SecurityGroup Create (inner_access is GetOkExists in Update :273);
# SecurityGroupRule Create reads none.


@provider_rule(
    SECURITY_GROUP,
    source=f"{TF} alicloud/resource_alicloud_security_group.go:63-64; "
    f"{TF} website/docs/r/security_group.html.markdown:74-75",
)
def security_group_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Type normal or enterprise; name 2-128 characters starting with a letter."""
    inputs = resource.inputs
    kind = inputs.get("securityGroupType")
    if kind is not None and kind not in ("normal", "enterprise"):
        yield "securityGroupType", f"{kind!r}: allowed normal (basic), enterprise (advanced)"
    name = inputs.get("securityGroupName")
    if isinstance(name, str) and (
        not 2 <= len(name) <= 128 or not name[0].isalpha() or name.startswith("http")
    ):
        yield (
            "securityGroupName",
            f"{name!r}: 2 to 128 characters, starting with a letter, not with http(s)://",
        )


@provider_rule(
    SECURITY_GROUP_RULE,
    source=f"{TF} alicloud/resource_alicloud_security_group_rule.go:58,155-233; "
    f"{TF} website/docs/r/security_group_rule.html.markdown:66; {ECS_SG_TYPES_DOC}",
)
def security_group_rule_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Create-time checks: tcp/udp take a real port range, other protocols -1/-1; a VPC
    group's rules are intranet; a source is required; advanced groups take no group
    sources."""
    inputs = resource.inputs
    protocol = inputs.get("ipProtocol")
    ports = inputs.get("portRange", "-1/-1")
    if protocol in ("tcp", "udp") and ports == "-1/-1":
        yield "portRange", f"{protocol} needs a port range within 1/65535, not -1/-1"
    elif protocol in ("icmp", "icmpv6", "gre", "all") and ports != "-1/-1":
        yield "portRange", f"{protocol} takes only -1/-1, not {ports}"
    group = _referenced(ctx, inputs.get("securityGroupId"), SECURITY_GROUP)
    in_vpc = group is not None and bool(group.inputs.get("vpcId"))
    nic = inputs.get("nicType")
    if nic is not None and nic != "intranet" and (in_vpc or inputs.get("sourceSecurityGroupId")):
        yield "nicType", f"{nic!r}: a VPC group's rules (and group sources) must be intranet"
    sources = ("cidrIp", "ipv6CidrIp", "sourceSecurityGroupId", "prefixListId")
    if not any(inputs.get(s) for s in sources):
        yield "cidrIp", "no source: ECS answers MissingParameter.Source (nothing is opened)"
    if inputs.get("cidrIp") and inputs.get("ipv6CidrIp"):
        yield "ipv6CidrIp", "cannot be set together with cidrIp: one rule per address family"
    priority = inputs.get("priority")
    if isinstance(priority, int) and not 1 <= priority <= 100:
        yield "priority", f"{priority}: allowed 1 to 100"
    advanced = group is not None and group.inputs.get("securityGroupType") == "enterprise"
    if inputs.get("sourceSecurityGroupId") and advanced:
        yield (
            "sourceSecurityGroupId",
            "an advanced group cannot authorize another security group: use CIDRs",
        )


# ---------------------------------------------------------------------------------------
# ECS instance: system_disk_encrypted and deletion_protection are GetOkExists
# (resource_alicloud_instance.go:821,957); internet_max_bandwidth_out is GetOk (:871) with
# the API default 0, so a 0 is harmless. Its security groups: one_security_group_type above.


@provider_rule(INSTANCE, source="https://www.alibabacloud.com/help/doc-detail/25387.htm")
def instance_groups_in_vswitch_vpc(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """An instance's vSwitch and security groups must be in the same VPC (ECS "Security
    group overview", configuration constraints, updated 2025-11-20)."""
    vswitch = _referenced(ctx, resource.inputs.get("vswitchId"), VSWITCH)
    vpc = vswitch.inputs.get("vpcId") if vswitch is not None else None
    if vpc is None:
        return
    for group_id in _strings(resource.inputs.get("securityGroups")):
        group = _referenced(ctx, group_id, SECURITY_GROUP)
        if group is not None and group.inputs.get("vpcId") not in (None, vpc):
            yield "securityGroups", f"{group.name} is in another VPC than the instance's vSwitch"


# ---------------------------------------------------------------------------------------
# KMS (Create reads no boolean; automatic_rotation is a string)


@provider_rule(
    KMS_KEY,
    source=f"{TF} alicloud/resource_alicloud_kms_key.go:61,80,97; "
    f"{TF} website/docs/r/kms_key.html.markdown:55",
)
def kms_key_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """pending_window_in_days 7-366; automatic rotation needs rotation_interval; key_spec
    and protection_level from fixed lists."""
    inputs = resource.inputs
    window = inputs.get("pendingWindowInDays")
    if isinstance(window, int) and not 7 <= window <= 366:
        yield "pendingWindowInDays", f"{window}: allowed 7 to 366"
    if inputs.get("automaticRotation") == "Enabled" and not inputs.get("rotationInterval"):
        yield "rotationInterval", "required when automaticRotation is Enabled (e.g. 365d)"
    spec = inputs.get("keySpec")
    specs = ("Aliyun_AES_256", "Aliyun_AES_128", "Aliyun_AES_192", "Aliyun_SM4", "RSA_2048")
    if spec is not None and spec not in (*specs, "RSA_3072", "EC_P256", "EC_SM2", "EC_P256K"):
        yield "keySpec", f"{spec!r} is not a KMS key spec"
    level = inputs.get("protectionLevel")
    if level is not None and level not in ("SOFTWARE", "HSM"):
        yield "protectionLevel", f"{level!r}: allowed SOFTWARE, HSM"


@provider_rule(KMS_ALIAS, source=f"{TF} website/docs/r/kms_alias.html.markdown:43")
def kms_alias_name(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """An alias starts with `alias/` followed by 1 to 255 characters."""
    name = resource.inputs.get("aliasName")
    if isinstance(name, str) and not (name.startswith("alias/") and 1 <= len(name) - 6 <= 255):
        yield "aliasName", f"{name!r}: must be alias/ plus 1 to 255 characters"


# ---------------------------------------------------------------------------------------
# OSS: Bucket Create reads no GetOk boolean the stacks set (force_destroy is read at delete,
# with d.Get); BucketPublicAccessBlock sends block_public_access with d.Get, false included
# (resource_alicloud_oss_bucket_public_access_block.go:58-61).

_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")


@provider_rule(
    BUCKET,
    source=f"{TF} alicloud/resource_alicloud_oss_bucket.go:29-34,397-410,436-450,496-502",
)
def oss_bucket_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """A bucket name is 3-63 lowercase letters, digits and hyphens; versioning Enabled or
    Suspended; SSE AES256, KMS or SM4."""
    inputs = resource.inputs
    name = inputs.get("bucket")
    if isinstance(name, str) and not _BUCKET_NAME.match(name):
        yield (
            "bucket",
            f"{name!r}: 3 to 63 lowercase letters, digits and hyphens, starting and ending "
            "with a letter or digit",
        )
    status = get(inputs, "versioning.status")
    if status is not None and status not in ("Enabled", "Suspended"):
        yield "versioning.status", f"{status!r}: allowed Enabled, Suspended"
    algorithm = get(inputs, "serverSideEncryptionRule.sseAlgorithm")
    if algorithm is not None and algorithm not in ("AES256", "KMS", "SM4"):
        yield "serverSideEncryptionRule.sseAlgorithm", f"{algorithm!r}: allowed AES256, KMS, SM4"


@provider_rule(
    BUCKET_ACL,
    BUCKET_PUBLIC_ACCESS_BLOCK,
    source=f"{TF} alicloud/resource_alicloud_oss_bucket_acl.go:29-37; "
    f"{TF} alicloud/resource_alicloud_oss_bucket.go:37-41; "
    f"{TF} alicloud/resource_alicloud_oss_bucket_public_access_block.go:32-36,58-61",
)
def oss_bucket_settings(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The ACL is private, public-read or public-read-write (the bucket's own validator);
    block_public_access is required and sent as given, false included."""
    inputs = resource.inputs
    if resource.type == BUCKET_ACL:
        acl = inputs.get("acl")
        if acl not in ("private", "public-read", "public-read-write"):
            yield "acl", f"{acl!r}: allowed private, public-read, public-read-write"
    elif not isinstance(inputs.get("blockPublicAccess"), bool):
        yield "blockPublicAccess", "required: true blocks every public ACL and policy"


# ---------------------------------------------------------------------------------------
# RAM: Role Create reads max_session_duration with GetOkExists (resource_alicloud_ram_role.go
# :146); Policy and RolePolicyAttachment read no boolean.

_ROLE_NAME = re.compile(r"^[A-Za-z0-9.-]{1,64}$")
_POLICY_NAME = re.compile(r"^[A-Za-z0-9-]{1,128}$")


def _json_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        json.loads(value)
    except ValueError as error:
        return f"is not JSON ({error})"
    return None


@provider_rule(
    RAM_ROLE,
    source=f"{RAM_API} client/create_role_request_model.go:41-58; "
    f"{TF} alicloud/resource_alicloud_ram_role.go:35-39",
)
def ram_role_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Role name 1-64 letters, digits, periods and hyphens; session 3600-43200 s; the trust
    policy is JSON."""
    inputs = resource.inputs
    name = inputs.get("roleName")
    if isinstance(name, str) and not _ROLE_NAME.match(name):
        yield "roleName", f"{name!r}: 1 to 64 letters, digits, periods and hyphens"
    duration = inputs.get("maxSessionDuration")
    if isinstance(duration, int) and not 3600 <= duration <= 43200:
        yield "maxSessionDuration", f"{duration}: allowed 3600 to 43200 seconds"
    problem = _json_problem(inputs.get("assumeRolePolicyDocument"))
    if problem:
        yield "assumeRolePolicyDocument", problem


@provider_rule(
    RAM_POLICY,
    source=f"{RAM_API} client/create_policy_request_model.go:23-47; "
    f"{TF} alicloud/resource_alicloud_ram_policy.go:43",
)
def ram_policy_fields(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """Policy name 1-128 letters, digits and hyphens; the document JSON, at most 6144
    characters."""
    inputs = resource.inputs
    name = inputs.get("policyName")
    if isinstance(name, str) and not _POLICY_NAME.match(name):
        yield "policyName", f"{name!r}: 1 to 128 letters, digits and hyphens"
    document = inputs.get("policyDocument")
    problem = _json_problem(document)
    if problem:
        yield "policyDocument", problem
    elif isinstance(document, str) and len(document) > 6144:
        yield "policyDocument", f"{len(document)} characters: at most 6144"


@provider_rule(
    RAM_ATTACHMENT,
    source=f"{TF} alicloud/resource_alicloud_ram_role_policy_attachment.go:35-37",
)
def ram_attachment_type(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """policy_type is System or Custom."""
    kind = resource.inputs.get("policyType")
    if kind not in ("System", "Custom"):
        yield "policyType", f"{kind!r}: allowed System, Custom"


def covered_types() -> Mapping[str, int]:
    """How many rules each Alibaba type has (the tests check every type the stacks create)."""
    from .model import RULES

    counts: dict[str, int] = {}
    for rule in RULES:
        for type_ in rule.types:
            if type_.startswith("alicloud:"):
                counts[type_] = counts.get(type_, 0) + 1
    return counts


# ---------------------------------------------------------------------------------------
# Workstation


@provider_rule(
    INSTANCE,
    source=(
        "aliyun/terraform-provider-alicloud@v1.289.0 website/docs/r/instance.html.markdown:241 "
        '("http_put_response_hop_limit ... **NOTE:**: This parameter is not available for use '
        'yet"); sent as RunInstances HttpPutResponseHopLimit, '
        "alicloud/resource_alicloud_instance.go:1208"
    ),
)
def metadata_hop_limit_not_available(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """ECS does not offer the metadata PUT hop limit yet; the provider still sends it."""
    if resource.inputs.get("httpPutResponseHopLimit") is not None:
        yield (
            "httpPutResponseHopLimit",
            "documented by the provider as not available for use yet; leave it unset (the "
            "API's default is 1)",
        )


@provider_rule(
    INSTANCE,
    source=(
        "aliyun/terraform-provider-alicloud@v1.289.0 "
        "alicloud/resource_alicloud_instance.go:765-769 "
        '("role_name" Deprecated: "Field `role_name` has been deprecated from provider version '
        '1.275.0. New resource `alicloud_ecs_ram_role_attachment` instead.")'
    ),
)
def instance_role_name_deprecated(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """The instance's `role_name` is deprecated; the provider points to a separate resource."""
    if resource.inputs.get("roleName"):
        yield (
            "roleName",
            "deprecated since provider 1.275.0: attach the RAM role with "
            "alicloud.ecs.RamRoleAttachment(instance_id=..., ram_role_name=...)",
        )
