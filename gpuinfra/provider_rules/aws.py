"""Provider rules for the aws resources the stacks create (see model.py).

pulumi-aws 7.x bridges hashicorp/terraform-provider-aws v6 (its provider/go.mod replaces the
module with the `upstream` submodule, pulumi/pulumi-aws#5665 onwards). Sources below cite the
provider file and the schema field or function that makes the check (read from the
terraform-provider-aws snapshot the search index holds), or the AWS documentation of the API
that refuses the request (EKS user guide at awsdocs/amazon-eks-user-guide@4d52b4d, file:line,
and its docs.aws.amazon.com page).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from components.settings import eks_versions
from components.settings.clouds.aws import s3_bucket_name_problem

from .model import Problem, RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

Problems = Iterator[tuple[str, str]]

TFAWS = "hashicorp/terraform-provider-aws"
EKS_GUIDE = "awsdocs/amazon-eks-user-guide@4d52b4d latest/ug"

CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON = "aws:eks/addon:Addon"
ACCESS_ENTRY = "aws:eks/accessEntry:AccessEntry"
ACCESS_POLICY_ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
SUBNET = "aws:ec2/subnet:Subnet"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"

EKS_UNSUPPORTED_ZONE_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})


def _today() -> dt.date:
    return dt.date.today()


def _subnet_zone_id(subnet: RecordedResource) -> str | None:
    """The zone ID a subnet lands in: given as `availabilityZoneId`, or what EC2 reports for
    the zone name (the mock fills `availabilityZoneId` in from the account's mapping)."""
    return subnet.inputs.get("availabilityZoneId") or subnet.outputs.get("availabilityZoneId")


def _subnets(ids: Any, ctx: RuleContext) -> list[RecordedResource]:
    found = (ctx.by_id(subnet_id) for subnet_id in (ids or []))
    return [s for s in found if s is not None and s.type == SUBNET]


# --- EKS cluster -----------------------------------------------------------------------------


@provider_rule(
    CLUSTER,
    source=f"{EKS_GUIDE}/networking/network-reqs.adoc:86-101 (https://docs.aws.amazon.com/eks/"
    "latest/userguide/network-reqs.html, Subnet requirements for clusters)",
)
def eks_cluster_subnets_in_supported_zones(
    resource: RecordedResource, ctx: RuleContext
) -> Problems:
    """EKS refuses cluster subnets in use1-az3, usw1-az2 and cac1-az3 (by zone ID)."""
    for subnet in _subnets(get(resource.inputs, "vpcConfig.subnetIds"), ctx):
        zone_id = _subnet_zone_id(subnet)
        if zone_id in EKS_UNSUPPORTED_ZONE_IDS:
            yield (
                "vpcConfig.subnetIds",
                f"subnet {subnet.name!r} is in zone {zone_id}, where EKS creates no cluster; "
                "exclude it by zone ID (getAvailabilityZones exclude_zone_ids), not by name",
            )


@provider_rule(
    CLUSTER,
    source=f"{EKS_GUIDE}/networking/network-reqs.adoc:78 (https://docs.aws.amazon.com/eks/latest/"
    "userguide/network-reqs.html)",
)
def eks_cluster_subnets_span_two_zones(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EKS needs the cluster's subnets in at least two Availability Zones."""
    subnets = _subnets(get(resource.inputs, "vpcConfig.subnetIds"), ctx)
    zones = {_subnet_zone_id(s) for s in subnets}
    if subnets and None not in zones and len(zones) < 2:
        yield (
            "vpcConfig.subnetIds",
            f"all subnets are in {', '.join(sorted(z for z in zones if z))}; EKS needs subnets "
            "in at least two Availability Zones",
        )


def _policy_arns(resource: RecordedResource) -> str:
    return str(resource.inputs.get("policyArn", ""))


@provider_rule(
    CLUSTER,
    source=f"{TFAWS} internal/service/eks/cluster.go (schema access_config."
    "bootstrap_cluster_creator_admin_permissions: ForceNew, Default true; "
    "expandCreateAccessConfigRequest sends it as given)",
)
def eks_cluster_bootstrap_admin_chosen(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """The creator-admin bootstrap flag defaults to true and replaces the cluster when changed."""
    value = get(resource.inputs, "accessConfig.bootstrapClusterCreatorAdminPermissions")
    if value is None:
        yield (
            "accessConfig.bootstrapClusterCreatorAdminPermissions",
            "not set: the provider sends true (an access entry for whoever creates the cluster, "
            "outside Pulumi), and changing it later replaces the cluster; choose it explicitly",
        )


def _access_granted(cluster: RecordedResource, ctx: RuleContext) -> bool:
    names = {cluster.inputs.get("name"), cluster.outputs.get("name")} - {None}
    for association in ctx.of_type(ACCESS_POLICY_ASSOCIATION):
        if association.inputs.get("clusterName") not in names:
            continue
        scope = get(association.inputs, "accessScope.type")
        if scope == "cluster" and _policy_arns(association).endswith(
            ("/AmazonEKSClusterAdminPolicy", "/AmazonEKSAdminPolicy")
        ):
            return True
    return False


@provider_rule(
    CLUSTER,
    source=f"{EKS_GUIDE}/manage-access/k8s-access/grant-k8s-access.adoc:59-83 (authentication "
    f"modes; with API only, access entries are the only way in) and {TFAWS} internal/service/"
    "eks/cluster.go",
)
def eks_cluster_has_an_admin(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """With API authentication and no creator bootstrap, only access entries let anyone in."""
    mode = get(resource.inputs, "accessConfig.authenticationMode")
    bootstrap = get(resource.inputs, "accessConfig.bootstrapClusterCreatorAdminPermissions")
    if mode == "API" and bootstrap is False and not _access_granted(resource, ctx):
        yield (
            "accessConfig",
            "API authentication without the creator bootstrap and no cluster-scoped admin "
            "access policy association for this cluster: nobody could use it; add an "
            "AccessEntry and AccessPolicyAssociation (AmazonEKSClusterAdminPolicy)",
        )


@provider_rule(
    CLUSTER,
    source="https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html (release "
    "calendar; components/settings/eks_versions.py)",
)
def eks_cluster_version_offered(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EKS creates clusters only on minors in standard or extended support."""
    version = resource.inputs.get("version")
    if version is None:
        yield "version", "not set: EKS picks its default minor, which moves; pin one"
        return
    problem = eks_versions.version_problem(str(version), _today())
    if problem:
        yield "version", problem


@provider_rule(
    CLUSTER,
    source=f"{TFAWS} internal/service/eks/cluster.go (expandVpcConfigRequest sends "
    "public_access_cidrs only when non-empty; EKS then defaults to 0.0.0.0/0)",
)
def eks_cluster_public_endpoint_limited(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A public endpoint with no CIDRs sent is open to 0.0.0.0/0; EKS takes IPv4 CIDRs here."""
    vpc = resource.inputs.get("vpcConfig") or {}
    public = vpc.get("endpointPublicAccess", True)  # schema default true
    cidrs = vpc.get("publicAccessCidrs") or []
    if public and not cidrs:
        yield (
            "vpcConfig.publicAccessCidrs",
            "public endpoint with no CIDRs: the empty list is not sent and EKS opens the "
            "endpoint to 0.0.0.0/0; list the admin networks",
        )
    for cidr in cidrs:
        try:
            if ipaddress.ip_network(cidr, strict=True).version != 4:
                yield "vpcConfig.publicAccessCidrs", f"{cidr}: EKS takes IPv4 CIDRs here"
        except ValueError:
            yield "vpcConfig.publicAccessCidrs", f"{cidr} is not a CIDR network address"


# --- EKS access entries ------------------------------------------------------------------------

_IAM_PRINCIPAL = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/.+$")


@provider_rule(
    ACCESS_ENTRY,
    source=f"{EKS_GUIDE}/manage-access/k8s-access/grant-k8s-access.adoc:202-208,214,257 "
    f"(https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html); {TFAWS} "
    "internal/service/eks/access_entry.go (type default STANDARD)",
)
def eks_access_entry_principal_is_iam(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """An access entry names one IAM role or user by its IAM ARN (no STS session, no
    service-linked role); a username must not take a reserved prefix."""
    arn = str(resource.inputs.get("principalArn", ""))
    if ":assumed-role/" in arn:
        yield (
            "principalArn",
            f"{arn} is an STS session ARN; give the role's IAM ARN (getSessionContext issuerArn)",
        )
    elif not _IAM_PRINCIPAL.match(arn):
        yield "principalArn", f"{arn!r} is not an IAM role or user ARN"
    elif ":role/aws-service-role/" in arn:
        yield "principalArn", "access entries refuse service-linked roles"
    username = str(resource.inputs.get("userName") or "")
    if username.startswith(("system:", "eks:", "aws:", "amazon:", "iam:")):
        yield "userName", f"{username!r} starts with a prefix EKS reserves"


@provider_rule(
    ACCESS_ENTRY,
    source=f"{EKS_GUIDE}/manage-access/k8s-access/grant-k8s-access.adoc:202 (an IAM principal "
    "can't be included in more than one access entry)",
)
def eks_access_entry_one_per_principal(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EKS refuses a second access entry for a principal on the same cluster."""
    key = (resource.inputs.get("clusterName"), resource.inputs.get("principalArn"))
    same = [
        r
        for r in ctx.of_type(ACCESS_ENTRY)
        if (r.inputs.get("clusterName"), r.inputs.get("principalArn")) == key
    ]
    if len(same) > 1 and same[0].urn != resource.urn:
        yield "principalArn", f"{key[1]} already has an access entry ({same[0].name!r})"


@provider_rule(
    ACCESS_POLICY_ASSOCIATION,
    source=f"{TFAWS} internal/service/eks/access_policy_association.go "
    "(resourceAccessPolicyAssociationCreate retries only 'The specified principalArn could "
    "not be found', then fails)",
)
def eks_access_policy_association_needs_entry(
    resource: RecordedResource, ctx: RuleContext
) -> Problems:
    """An access policy goes on an existing access entry of the same principal."""
    cluster = resource.inputs.get("clusterName")
    principal = resource.inputs.get("principalArn")
    entries = [
        e
        for e in ctx.of_type(ACCESS_ENTRY)
        if e.inputs.get("clusterName") == cluster and e.inputs.get("principalArn") == principal
    ]
    if not entries:
        yield "principalArn", f"no AccessEntry for {principal} on this cluster in the plan"
    elif not any(ctx.depends_on(resource, e) for e in entries):
        yield (
            "principalArn",
            "does not wait for its AccessEntry: EKS answers 'principalArn could not be "
            "found' when the association comes first; take principal_arn from the entry",
        )


@provider_rule(
    ACCESS_POLICY_ASSOCIATION,
    source="EKS API AssociateAccessPolicy, AccessScope (type cluster | namespace; namespaces "
    "only with namespace): https://docs.aws.amazon.com/eks/latest/APIReference/"
    "API_AccessScope.html; policy ARNs arn:<partition>:eks::aws:cluster-access-policy/<name> "
    f"({EKS_GUIDE}/manage-access/k8s-access/access-policy-reference.adoc)",
)
def eks_access_policy_association_scope(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """The scope is a cluster or named namespaces, and the policy an EKS access policy."""
    scope = get(resource.inputs, "accessScope.type")
    namespaces = get(resource.inputs, "accessScope.namespaces") or []
    if scope not in ("cluster", "namespace"):
        yield "accessScope.type", f"{scope!r}: allowed cluster, namespace"
    elif scope == "namespace" and not namespaces:
        yield "accessScope.namespaces", "a namespace scope needs at least one namespace"
    elif scope == "cluster" and namespaces:
        yield "accessScope.namespaces", "a cluster scope takes no namespaces"
    if not re.match(r"^arn:aws[a-z-]*:eks::aws:cluster-access-policy/\w+$", _policy_arns(resource)):
        yield "policyArn", f"{_policy_arns(resource)!r} is not an EKS access policy ARN"


# --- EKS node groups ---------------------------------------------------------------------------


def _cluster_named(name: Any, ctx: RuleContext) -> RecordedResource | None:
    for cluster in ctx.of_type(CLUSTER):
        if name in (cluster.inputs.get("name"), cluster.outputs.get("name")):
            return cluster
    return None


def _launch_template(resource: RecordedResource, ctx: RuleContext) -> RecordedResource | None:
    template = ctx.by_id(get(resource.inputs, "launchTemplate.id"))
    return template if template is not None and template.type == LAUNCH_TEMPLATE else None


@provider_rule(
    NODE_GROUP,
    source=f"{TFAWS} internal/service/eks/node_group.go (version Optional+Computed, sent only "
    "when set, updated only on a change); EKS user guide, update-cluster.adoc:63 and "
    f"launch-templates.adoc:444-447 ({EKS_GUIDE}/clusters, /nodes)",
)
def eks_node_group_version_follows_cluster(
    resource: RecordedResource, ctx: RuleContext
) -> Problems:
    """A node group without `version` stays on its first minor while the cluster moves on;
    one newer than the cluster is refused."""
    template = _launch_template(resource, ctx)
    if template is not None and template.inputs.get("imageId"):
        if resource.inputs.get("version"):
            yield "version", "a launch template with an AMI ID takes no version (EKS refuses it)"
        return
    cluster = _cluster_named(resource.inputs.get("clusterName"), ctx)
    wanted = cluster.inputs.get("version") if cluster else None
    version = resource.inputs.get("version")
    if version is None:
        yield (
            "version",
            "not set: the group keeps the minor it was created with while the cluster is "
            f"upgraded; set it to the cluster's ({wanted or 'its version'})",
        )
    elif wanted and version != wanted:
        yield "version", f"{version} differs from the cluster's {wanted}: nodes follow the cluster"


@provider_rule(
    NODE_GROUP,
    source=f"{TFAWS} internal/service/eks/node_group.go (scaling_config: min_size and "
    "desired_size IntAtLeast(0), max_size IntAtLeast(1); taint MaxItems 50, key 1-63, value "
    "0-63, effect NO_SCHEDULE | NO_EXECUTE | PREFER_NO_SCHEDULE); EKS API "
    "NodegroupScalingConfig (desired between min and max)",
)
def eks_node_group_scaling_and_taints(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Sizes within the provider's and EKS's bounds; taints in EKS's spelling."""
    scaling = resource.inputs.get("scalingConfig") or {}
    low, want, high = (scaling.get(k) for k in ("minSize", "desiredSize", "maxSize"))
    if isinstance(low, int) and low < 0:
        yield "scalingConfig.minSize", "must be 0 or more"
    if isinstance(high, int) and high < 1:
        yield "scalingConfig.maxSize", "must be 1 or more"
    sizes = (low, want, high)
    if all(isinstance(v, int) for v in sizes) and sorted(sizes) != list(sizes):  # type: ignore[type-var]
        yield "scalingConfig.desiredSize", f"{want} is not between {low} and {high}"
    taints = resource.inputs.get("taints") or []
    if len(taints) > 50:
        yield "taints", "at most 50 taints"
    for taint in taints:
        if not 1 <= len(str(taint.get("key", ""))) <= 63:
            yield "taints", f"key {taint.get('key')!r} must be 1 to 63 characters"
        if len(str(taint.get("value") or "")) > 63:
            yield "taints", f"value {taint.get('value')!r} is longer than 63 characters"
        if taint.get("effect") not in ("NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE"):
            yield "taints", f"effect {taint.get('effect')!r}: EKS spells it NO_SCHEDULE etc."


@provider_rule(
    NODE_GROUP,
    source=f"{EKS_GUIDE}/nodes/launch-templates.adoc:73,79,87,105 (https://docs.aws.amazon.com/"
    "eks/latest/userguide/launch-templates.html)",
)
def eks_node_group_launch_template_fit(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """With a launch template: disk size and remote access belong to it, at most 20 instance
    types, and security groups it names must include the cluster security group."""
    instance_types = resource.inputs.get("instanceTypes") or []
    if len(instance_types) > 20:
        yield "instanceTypes", "EKS takes at most 20 instance types"
    template = _launch_template(resource, ctx)
    if template is None:
        return
    if resource.inputs.get("diskSize"):
        yield "diskSize", "prohibited with a launch template: size the launch template's volume"
    if resource.inputs.get("remoteAccess"):
        yield "remoteAccess", "prohibited with a launch template: give it a security group"
    if template.inputs.get("instanceType") and instance_types:
        yield "instanceTypes", "the launch template already names an instance type"
    groups = template.inputs.get("vpcSecurityGroupIds") or []
    cluster = _cluster_named(resource.inputs.get("clusterName"), ctx)
    cluster_group = get(cluster.outputs, "vpcConfig.clusterSecurityGroupId") if cluster else None
    if groups and cluster_group and cluster_group not in groups:
        yield (
            "launchTemplate",
            "the launch template names security groups without the cluster security group: "
            "EKS then adds none and the nodes cannot reach the control plane",
        )


# --- EKS add-ons -------------------------------------------------------------------------------

_SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@provider_rule(
    ADDON,
    source=f"{TFAWS} internal/service/eks/addon.go (resourceAddon schema: addon_version "
    "validation.StringMatch semver with a leading v, service_account_role_arn verify.ValidARN, "
    "resolve_conflicts_on_create NONE | OVERWRITE, configuration_values a string)",
)
def eks_addon_values(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """The provider's validators of an EKS add-on: a `v`-prefixed semantic version, an ARN for
    the ServiceAccount role, a known conflict resolution, JSON configuration values."""
    version = resource.inputs.get("addonVersion")
    if version is not None and not _SEMVER.match(str(version)):
        yield "addonVersion", f"{version!r} must follow semantic version format (v1.2.3-eksbuild.1)"
    role = resource.inputs.get("serviceAccountRoleArn")
    if role is not None and not str(role).startswith("arn:"):
        yield "serviceAccountRoleArn", f"{role!r} is not an ARN (the role's arn output)"
    conflicts = resource.inputs.get("resolveConflictsOnCreate")
    if conflicts is not None and conflicts not in ("NONE", "OVERWRITE"):
        yield "resolveConflictsOnCreate", f"{conflicts!r}: allowed NONE, OVERWRITE"
    values = resource.inputs.get("configurationValues")
    if values is not None:
        try:
            json.loads(str(values))
        except ValueError:
            yield "configurationValues", "must be JSON text (json.dumps of the add-on's settings)"


@provider_rule(
    ADDON,
    source=f"{TFAWS} internal/service/eks/addon.go (resourceAddonCreate waits in "
    "waitAddonCreated: Pending CREATING, DEGRADED; Target ACTIVE; 20 minute create timeout)",
)
def eks_addon_after_its_nodes(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """The provider waits until a new add-on is ACTIVE (20 minutes): an add-on whose pods run
    on the cluster's nodes stays DEGRADED until there are nodes, so where the same update
    creates the node groups, the add-on must wait for one."""
    cluster = resource.inputs.get("clusterName")
    groups = [g for g in ctx.of_type(NODE_GROUP) if g.inputs.get("clusterName") == cluster]
    if groups and not any(ctx.depends_on(resource, g) for g in groups):
        yield (
            "dependsOn",
            f"add-on {resource.inputs.get('addonName')!r} of cluster {cluster!r} does not wait "
            "for a node group of it: its pods would have nowhere to run while `pulumi up` waits "
            "20 minutes for ACTIVE",
        )


# --- EC2 ---------------------------------------------------------------------------------------


@provider_rule(
    LAUNCH_TEMPLATE,
    source=f"{TFAWS} internal/service/ec2/ec2_launch_template.go (ebs encrypted and "
    "delete_on_termination are nullable-bool strings, volume_type an EC2 VolumeType, "
    "throughput 125-1000, description <= 255, default_version ConflictsWith "
    "update_default_version); EC2 API InstanceMetadataOptionsRequest (HttpTokens optional | "
    "required, HttpPutResponseHopLimit 1-64)",
)
def ec2_launch_template_values(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Block-device and metadata values the provider and EC2 accept."""
    for i, mapping in enumerate(resource.inputs.get("blockDeviceMappings") or []):
        ebs = mapping.get("ebs") or {}
        for key in ("encrypted", "deleteOnTermination"):
            if key in ebs and ebs[key] not in ("true", "false", ""):
                yield (
                    f"blockDeviceMappings.{i}.ebs.{key}",
                    f"{ebs[key]!r}: the provider takes 'true' or 'false'",
                )
        volume_type = ebs.get("volumeType")
        if volume_type and volume_type not in (
            "standard",
            "io1",
            "io2",
            "gp2",
            "sc1",
            "st1",
            "gp3",
        ):
            yield (
                f"blockDeviceMappings.{i}.ebs.volumeType",
                f"{volume_type!r} is not an EBS volume type",
            )
        throughput = ebs.get("throughput")
        if throughput is not None and not 125 <= int(throughput) <= 1000:
            yield f"blockDeviceMappings.{i}.ebs.throughput", "must be 125 to 1000 MiB/s"
    tokens = get(resource.inputs, "metadataOptions.httpTokens")
    if tokens is not None and tokens not in ("optional", "required"):
        yield "metadataOptions.httpTokens", f"{tokens!r}: allowed optional, required"
    hops = get(resource.inputs, "metadataOptions.httpPutResponseHopLimit")
    if hops is not None and not 1 <= int(hops) <= 64:
        yield "metadataOptions.httpPutResponseHopLimit", "must be 1 to 64"
    if len(str(resource.inputs.get("description") or "")) > 255:
        yield "description", "at most 255 characters"
    if resource.inputs.get("defaultVersion") is not None and resource.inputs.get(
        "updateDefaultVersion"
    ):
        yield "defaultVersion", "conflicts with updateDefaultVersion"


@provider_rule(
    SUBNET,
    source=f"{TFAWS} internal/service/ec2/vpc_subnet.go (availability_zone and "
    "availability_zone_id ConflictsWith each other, both ForceNew; cidr_block "
    "verify.ValidIPv4CIDRNetworkAddress)",
)
def ec2_subnet_zone_and_cidr(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A subnet names its zone one way only, and its CIDR is a network address."""
    if resource.inputs.get("availabilityZone") and resource.inputs.get("availabilityZoneId"):
        yield "availabilityZoneId", "conflicts with availabilityZone: give the zone ID only"
    yield from _network_cidr(resource, "cidrBlock")


def _network_cidr(resource: RecordedResource, field: str) -> Problems:
    cidr = resource.inputs.get(field)
    if cidr is None:
        return
    try:
        ipaddress.IPv4Network(str(cidr), strict=True)
    except ValueError:
        yield field, f"{cidr!r} is not an IPv4 CIDR network address (no host bits)"


@provider_rule(
    "aws:ec2/vpc:Vpc",
    source=f"{TFAWS} internal/service/ec2/vpc_.go (cidr_block "
    "verify.ValidIPv4CIDRNetworkAddress); Amazon VPC user guide, 'VPC CIDR blocks' (a /16 to "
    "/28 netmask)",
)
def ec2_vpc_cidr_block(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A VPC's IPv4 block is a network address between /16 and /28."""
    yield from _network_cidr(resource, "cidrBlock")
    cidr = resource.inputs.get("cidrBlock")
    try:
        prefix = ipaddress.IPv4Network(str(cidr), strict=False).prefixlen
    except ValueError:
        return
    if not 16 <= prefix <= 28:
        yield "cidrBlock", f"/{prefix}: a VPC block is /16 to /28"


def _one_per_vpc(resource: RecordedResource, ctx: RuleContext, what: str) -> Problems:
    vpc = resource.inputs.get("vpcId")
    same = [r for r in ctx.of_type(resource.type) if r.inputs.get("vpcId") == vpc]
    if vpc and len(same) > 1 and same[0].urn != resource.urn:
        yield "vpcId", f"the VPC already has {what} ({same[0].name!r})"


@provider_rule(
    "aws:ec2/internetGateway:InternetGateway",
    source="Amazon VPC user guide, 'Internet gateways' (a VPC has at most one internet gateway "
    "attached): https://docs.aws.amazon.com/vpc/latest/userguide/VPC_Internet_Gateway.html",
)
def ec2_internet_gateway_one_per_vpc(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """EC2 attaches at most one internet gateway to a VPC."""
    yield from _one_per_vpc(resource, ctx, "an internet gateway")


@provider_rule(
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
    source="Amazon VPC user guide, 'Default security groups for your VPCs' (one per VPC): "
    "https://docs.aws.amazon.com/vpc/latest/userguide/default-security-group.html; the "
    "resource adopts that group and replaces its rules (pulumi-aws ec2.DefaultSecurityGroup)",
)
def ec2_default_security_group_one_per_vpc(
    resource: RecordedResource, ctx: RuleContext
) -> Problems:
    """A VPC has one default security group; two resources adopting it undo each other."""
    yield from _one_per_vpc(resource, ctx, "a DefaultSecurityGroup")


@provider_rule(
    "aws:ec2/routeTable:RouteTable",
    source=f"{TFAWS} internal/service/ec2/vpc_route_table.go (route cidr_block "
    "verify.ValidIPv4CIDRNetworkAddress); EC2 API CreateRoute (exactly one target)",
)
def ec2_route_table_routes(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Each inline route has a network-address destination and exactly one target."""
    targets = (
        "carrierGatewayId", "coreNetworkArn", "egressOnlyGatewayId", "gatewayId",
        "localGatewayId", "natGatewayId", "networkInterfaceId", "transitGatewayId",
        "vpcEndpointId", "vpcPeeringConnectionId",
    )  # fmt: skip
    for i, route in enumerate(resource.inputs.get("routes") or []):
        given = [t for t in targets if route.get(t)]
        if len(given) != 1:
            yield f"routes.{i}", f"needs exactly one target, has {given or 'none'}"
        cidr = route.get("cidrBlock")
        if cidr:
            try:
                ipaddress.IPv4Network(str(cidr), strict=True)
            except ValueError:
                yield f"routes.{i}.cidrBlock", f"{cidr!r} is not a CIDR network address"


@provider_rule(
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    source=f"{TFAWS} internal/service/ec2/vpc_route_table_association.go (subnet_id, "
    "gateway_id: ExactlyOneOf)",
)
def ec2_route_table_association_one_target(
    resource: RecordedResource, ctx: RuleContext
) -> Problems:
    """A route table association names exactly one of a subnet or a gateway."""
    given = [k for k in ("subnetId", "gatewayId") if resource.inputs.get(k)]
    if len(given) != 1:
        yield "subnetId", f"exactly one of subnetId, gatewayId; has {given or 'none'}"


@provider_rule(
    "aws:ec2/eip:Eip",
    source=f"{TFAWS} internal/service/ec2/ec2_eip.go (domain: enum DomainType, vpc | standard; "
    "an address without domain vpc is not for a VPC's NAT gateway)",
)
def ec2_eip_domain(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """An Elastic IP for a VPC says domain vpc."""
    if resource.inputs.get("domain") != "vpc":
        yield "domain", f"{resource.inputs.get('domain')!r}: set domain to vpc"


@provider_rule(
    "aws:ec2/natGateway:NatGateway",
    source="EC2 API CreateNatGateway (a public NAT gateway needs an Elastic IP allocation): "
    "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateNatGateway.html",
)
def ec2_nat_gateway_public_needs_eip(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A public NAT gateway (the default connectivity) needs an allocation ID and a subnet."""
    public = resource.inputs.get("connectivityType", "public") == "public"
    if public and not resource.inputs.get("allocationId"):
        yield "allocationId", "a public NAT gateway needs an Elastic IP allocation"
    if not resource.inputs.get("subnetId"):
        yield "subnetId", "required"


@provider_rule(
    "aws:ec2/vpcEndpoint:VpcEndpoint",
    source="Amazon VPC PrivateLink guide, 'Gateway endpoints' (route tables, no subnets or "
    "security groups; service com.amazonaws.<region>.s3|dynamodb): https://docs.aws.amazon.com/"
    "vpc/latest/privatelink/gateway-endpoints.html",
)
def ec2_vpc_endpoint_gateway_shape(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A gateway endpoint takes route tables, never subnets or security groups."""
    if resource.inputs.get("vpcEndpointType", "Gateway") != "Gateway":
        return
    for field in ("subnetIds", "securityGroupIds"):
        if resource.inputs.get(field):
            yield field, "a Gateway endpoint takes route tables, not this"
    service = str(resource.inputs.get("serviceName", ""))
    if not re.fullmatch(r"com\.amazonaws\.[a-z0-9-]+\.(s3|dynamodb)", service):
        yield "serviceName", f"{service!r}: gateway endpoints serve S3 or DynamoDB only"


@provider_rule(
    "aws:ec2/securityGroup:SecurityGroup",
    source=f"{TFAWS} internal/service/ec2/vpc_security_group.go (description "
    "StringLenBetween(0, 255), ForceNew); EC2 API CreateSecurityGroup (GroupDescription: "
    "a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{{}}!$*)",
)
def ec2_security_group_description(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A group description is at most 255 characters of EC2's allowed set."""
    text = str(resource.inputs.get("description", "Managed by Pulumi"))
    if len(text) > 255:
        yield "description", "at most 255 characters"
    bad = sorted(set(re.sub(r"[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]", "", text)))
    if bad:
        yield "description", f"characters EC2 refuses: {''.join(bad)!r}"


@provider_rule(
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    source=f"{TFAWS} internal/service/ec2/vpc_security_group_rule.go (ConfigValidators: "
    "ExactlyOneOf cidr_ipv4, cidr_ipv6, prefix_list_id, referenced_security_group_id); EC2 "
    "API IpPermission (ports only for tcp/udp/icmp)",
)
def vpc_ingress_rule_one_source(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A rule names exactly one source, and ports only for a protocol that has them."""
    sources = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")
    given = [k for k in sources if resource.inputs.get(k)]
    if len(given) != 1:
        yield "cidrIpv4", f"exactly one of {', '.join(sources)}; has {given or 'none'}"
    protocol = str(resource.inputs.get("ipProtocol", ""))
    if protocol in ("-1", "all") and (
        resource.inputs.get("fromPort") is not None or resource.inputs.get("toPort") is not None
    ):
        yield "fromPort", "all protocols (-1) take no ports"
    for field, version in (("cidrIpv4", 4), ("cidrIpv6", 6)):
        cidr = resource.inputs.get(field)
        if cidr:
            try:
                if ipaddress.ip_network(str(cidr), strict=True).version != version:
                    raise ValueError
            except ValueError:
                yield field, f"{cidr!r} is not an IPv{version} CIDR network address"


# --- IAM, KMS, CloudWatch Logs, Auto Scaling ---------------------------------------------------


def _json_policy(resource: RecordedResource, field: str) -> Problems:
    text = resource.inputs.get(field)
    if not isinstance(text, str):
        return
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        yield field, f"not JSON: {error.msg}"
        return
    if not isinstance(document, dict) or "Statement" not in document:
        yield field, "an IAM policy document needs a Statement"
    elif document.get("Version") not in (None, "2012-10-17", "2008-10-17"):
        yield field, f"Version {document.get('Version')!r}: use 2012-10-17"


@provider_rule(
    "aws:iam/role:Role",
    source=f"{TFAWS} internal/service/iam/role.go (assume_role_policy "
    "verify.ValidIAMPolicyJSON; name <= 64; description <= 1000 characters; "
    "max_session_duration 3600-43200)",
)
def iam_role_inputs(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A role's trust policy is a policy document; name, description and session bounded."""
    yield from _json_policy(resource, "assumeRolePolicy")
    if len(str(resource.inputs.get("name") or "")) > 64:
        yield "name", "at most 64 characters"
    if len(str(resource.inputs.get("description") or "")) > 1000:
        yield "description", "at most 1000 characters"
    duration = resource.inputs.get("maxSessionDuration")
    if duration is not None and not 3600 <= int(duration) <= 43200:
        yield "maxSessionDuration", "3600 to 43200 seconds"


@provider_rule(
    "aws:iam/rolePolicy:RolePolicy",
    source=f"{TFAWS} internal/service/iam/role_policy.go (policy verify.ValidIAMPolicyJSON); "
    "IAM quotas: inline role policies at most 10,240 characters in all "
    "(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html)",
)
def iam_role_policy_document(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """An inline role policy is a policy document within IAM's size quota."""
    yield from _json_policy(resource, "policy")
    text = resource.inputs.get("policy")
    if isinstance(text, str) and len(re.sub(r"\s", "", text)) > 10240:
        yield "policy", "longer than IAM's 10,240-character inline role policy quota"


@provider_rule(
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    source=f"{TFAWS} internal/service/iam/role_policy_attachment.go (policy_arn verify.ValidARN)",
)
def iam_role_policy_attachment_arn(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """An attachment names a policy by ARN."""
    arn = str(resource.inputs.get("policyArn", ""))
    if not re.match(r"^arn:aws[a-z-]*:iam::(aws|\d{12}):policy/.+$", arn):
        yield "policyArn", f"{arn!r} is not an IAM policy ARN"


@provider_rule(
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
    source=f"{TFAWS} internal/service/iam/validate.go (validOpenIDURL: https scheme, no query "
    "parameters); IAM quotas (up to 100 client IDs, each up to 255 characters)",
)
def iam_oidc_provider_url(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """The issuer URL is https without a query; client IDs within IAM's limits."""
    url = str(resource.inputs.get("url", ""))
    if not url.startswith("https://"):
        yield "url", f"{url!r} must use the https scheme"
    if "?" in url:
        yield "url", "no query parameters (OIDC issuer)"
    clients = resource.inputs.get("clientIdLists") or []
    if not 1 <= len(clients) <= 100 or any(not 1 <= len(str(c)) <= 255 for c in clients):
        yield "clientIdLists", "1 to 100 client IDs of 1 to 255 characters"


@provider_rule(
    "aws:kms/key:Key",
    source=f"{TFAWS} internal/service/kms/key.go (deletion_window_in_days IntBetween(7, 30), "
    "description StringLenBetween(0, 8192))",
)
def kms_key_window_and_description(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """KMS waits 7 to 30 days before deleting a key."""
    window = resource.inputs.get("deletionWindowInDays")
    if window is not None and not 7 <= int(window) <= 30:
        yield "deletionWindowInDays", "7 to 30 days"
    if len(str(resource.inputs.get("description") or "")) > 8192:
        yield "description", "at most 8192 characters"


@provider_rule(
    "aws:kms/alias:Alias",
    source=f"{TFAWS} internal/service/kms/validate.go (validNameForResource: "
    "^alias/[0-9A-Za-z_/-]+$, not alias/aws/)",
)
def kms_alias_name(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """An alias starts with alias/, uses [0-9A-Za-z_/-], and not AWS's alias/aws/ prefix."""
    name = resource.inputs.get("name")
    if name is None:
        return
    if str(name).startswith("alias/aws/"):
        yield "name", "alias/aws/ is reserved for AWS managed keys"
    elif not re.fullmatch(r"alias/[0-9A-Za-z_/-]+", str(name)):
        yield "name", f"{name!r} must be alias/ followed by [0-9A-Za-z_/-]"


_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827,
                   2192, 2557, 2922, 3288, 3653)  # fmt: skip


@provider_rule(
    "aws:cloudwatch/logGroup:LogGroup",
    source=f"{TFAWS} internal/service/logs/group.go (retention_in_days IntInSlice; 0 is "
    "dropped by d.GetOk in resourceGroupCreate: the group keeps logs forever)",
)
def cloudwatch_log_group_retention(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Retention is one of CloudWatch's values; 0 or none keeps the logs (and bills) forever."""
    days = resource.inputs.get("retentionInDays")
    if not days:
        yield "retentionInDays", "not set or 0: never sent, the logs are kept forever"
    elif int(days) not in _RETENTION_DAYS:
        yield "retentionInDays", f"{days}: allowed {', '.join(map(str, _RETENTION_DAYS))}"


@provider_rule(
    "aws:autoscaling/tag:Tag",
    source="Amazon EC2 Auto Scaling user guide, 'Tag restrictions' (key 1-128 and value 0-256 "
    "characters, no aws: prefix): https://docs.aws.amazon.com/autoscaling/ec2/userguide/"
    "ec2-auto-scaling-tagging.html",
)
def autoscaling_tag_limits(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Auto Scaling tag keys are 1-128 characters, not aws:-prefixed; values up to 256."""
    tag = resource.inputs.get("tag") or {}
    key = str(tag.get("key", ""))
    if not 1 <= len(key) <= 128:
        yield "tag.key", f"{len(key)} characters: 1 to 128"
    if key.lower().startswith("aws:"):
        yield "tag.key", "the aws: prefix is reserved"
    if len(str(tag.get("value", ""))) > 256:
        yield "tag.value", "at most 256 characters"
    if not resource.inputs.get("autoscalingGroupName"):
        yield "autoscalingGroupName", "required"


# --- S3 ------------------------------------------------------------------------------------------

BUCKET = "aws:s3/bucket:Bucket"
BUCKET_SETTINGS = (
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "aws:s3/bucketVersioning:BucketVersioning",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "aws:s3/bucketPolicy:BucketPolicy",
)


@provider_rule(
    BUCKET,
    source=f"{TFAWS} internal/service/s3/bucket.go (validBucketName); S3 user guide, "
    "'General purpose bucket naming rules' (https://docs.aws.amazon.com/AmazonS3/latest/"
    "userguide/bucketnamingrules.html)",
)
def s3_bucket_name(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A bucket name is 3-63 lowercase letters, digits, dots and hyphens, S3's way."""
    name = resource.inputs.get("bucket") or resource.outputs.get("bucket")
    if name:
        problem = s3_bucket_name_problem(str(name))
        if problem:
            yield "bucket", f"{name!r} {problem}"


@provider_rule(
    *BUCKET_SETTINGS,
    source="S3 keeps one ownership control, public access block, versioning, encryption, "
    "lifecycle configuration and policy per bucket (each Put* replaces the last; "
    f"{TFAWS} website/docs/r/s3_bucket_lifecycle_configuration.html.markdown: declaring two "
    "for one bucket causes a perpetual difference)",
)
def s3_bucket_setting_single_owner(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Two resources holding the same setting of one bucket overwrite each other."""
    bucket = resource.inputs.get("bucket")
    same = [r for r in ctx.of_type(resource.type) if r.inputs.get("bucket") == bucket]
    if bucket and len(same) > 1 and same[0].urn != resource.urn:
        yield "bucket", f"this bucket's setting already belongs to {same[0].name!r}"


@provider_rule(
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    source=f"{TFAWS} internal/service/s3/bucket_ownership_controls.go (rule.object_ownership: "
    "enum ObjectOwnership, BucketOwnerPreferred | ObjectWriter | BucketOwnerEnforced)",
)
def s3_ownership_controls_value(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Object ownership is one of S3's three settings."""
    value = get(resource.inputs, "rule.objectOwnership")
    if value not in ("BucketOwnerPreferred", "ObjectWriter", "BucketOwnerEnforced"):
        yield "rule.objectOwnership", f"{value!r} is not an S3 object ownership setting"


@provider_rule(
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    source=f"{TFAWS} internal/service/s3/bucket_public_access_block.go (the four flags are "
    "Optional, default false: an unset one leaves that kind of public access allowed)",
)
def s3_public_access_block_complete(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Every flag left unset defaults to false, allowing that kind of public access."""
    for flag in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                 "restrictPublicBuckets"):  # fmt: skip
        if resource.inputs.get(flag) is None:
            yield flag, "not set: defaults to false; say true or false"


@provider_rule(
    "aws:s3/bucketVersioning:BucketVersioning",
    source=f"{TFAWS} internal/service/s3/bucket_versioning.go (versioning_configuration.status: "
    "Enabled | Suspended | Disabled, Disabled only for a bucket never versioned)",
)
def s3_versioning_status(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Versioning status is Enabled, Suspended or Disabled."""
    status = get(resource.inputs, "versioningConfiguration.status")
    if status not in ("Enabled", "Suspended", "Disabled"):
        yield "versioningConfiguration.status", f"{status!r}: Enabled, Suspended or Disabled"


@provider_rule(
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    source="S3 user guide, 'Reducing the cost of SSE-KMS with Amazon S3 Bucket Keys' (bucket "
    "keys apply to SSE-KMS only): https://docs.aws.amazon.com/AmazonS3/latest/userguide/"
    f"bucket-key.html; {TFAWS} internal/service/s3/bucket_server_side_encryption_"
    "configuration.go (sse_algorithm: AES256 | aws:kms | aws:kms:dsse)",
)
def s3_encryption_values(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A default encryption rule names an S3 algorithm; KMS settings only with KMS."""
    for i, rule in enumerate(resource.inputs.get("rules") or []):
        default = rule.get("applyServerSideEncryptionByDefault") or {}
        algorithm = default.get("sseAlgorithm")
        kms = algorithm in ("aws:kms", "aws:kms:dsse")
        if algorithm not in ("AES256", "aws:kms", "aws:kms:dsse"):
            yield f"rules.{i}.applyServerSideEncryptionByDefault.sseAlgorithm", f"{algorithm!r}"
        if rule.get("bucketKeyEnabled") and not kms:
            yield (
                f"rules.{i}.bucketKeyEnabled",
                f"does nothing under {algorithm}: bucket keys reduce SSE-KMS calls only",
            )
        if default.get("kmsMasterKeyId") and not kms:
            yield (
                f"rules.{i}.applyServerSideEncryptionByDefault.kmsMasterKeyId",
                "only with aws:kms",
            )


@provider_rule(
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    source="S3 API PutBucketLifecycleConfiguration / LifecycleRule (ID up to 255 characters, "
    "Status Enabled | Disabled, day counts positive; AbortIncompleteMultipartUpload not with "
    "a tag filter): https://docs.aws.amazon.com/AmazonS3/latest/API/API_LifecycleRule.html",
)
def s3_lifecycle_rules(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """Lifecycle rules S3 accepts: ids, statuses, positive days, no tag filter with aborts."""
    ids = [r.get("id") for r in resource.inputs.get("rules") or []]
    if len(ids) != len(set(ids)):
        yield "rules", "rule ids must be unique"
    for i, rule in enumerate(resource.inputs.get("rules") or []):
        if not 1 <= len(str(rule.get("id") or "")) <= 255:
            yield f"rules.{i}.id", "1 to 255 characters"
        if rule.get("status") not in ("Enabled", "Disabled"):
            yield f"rules.{i}.status", f"{rule.get('status')!r}: Enabled or Disabled"
        for path in ("abortIncompleteMultipartUpload.daysAfterInitiation",
                     "noncurrentVersionExpiration.noncurrentDays", "expiration.days"):  # fmt: skip
            days = get(rule, path)
            if days is not None and int(days) < 1:
                yield f"rules.{i}.{path}", "must be 1 or more"
        if rule.get("abortIncompleteMultipartUpload") and get(rule, "filter.tag"):
            yield f"rules.{i}.filter", "AbortIncompleteMultipartUpload cannot use a tag filter"


@provider_rule(
    "aws:s3/bucketPolicy:BucketPolicy",
    source=f"{TFAWS} internal/service/s3/bucket_policy.go (policy verify.ValidIAMPolicyJSON); "
    "S3: bucket policies up to 20 KB (https://docs.aws.amazon.com/AmazonS3/latest/userguide/"
    "bucket-policies.html)",
)
def s3_bucket_policy_document(resource: RecordedResource, ctx: RuleContext) -> Problems:
    """A bucket policy is a policy document of at most 20 KB."""
    yield from _json_policy(resource, "policy")
    text = resource.inputs.get("policy")
    if isinstance(text, str) and len(text.encode()) > 20 * 1024:
        yield "policy", "larger than S3's 20 KB bucket policy limit"


# ---------------------------------------------------------------------------------------
# Workstation

EC2_INSTANCE = "aws:ec2/instance:Instance"


@provider_rule(
    EC2_INSTANCE,
    source=(
        "hashicorp/terraform-provider-aws issue #38142 (aws_instance instance_market_options: "
        "persistent type creates untracked resource); fix PR #41206 unmerged, it names the "
        "unmatched cleanup condition at internal/service/ec2/ec2_instance.go:2224 (658a6457)"
    ),
)
def persistent_spot_request_outlives_instance(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """Deleting an instance leaves its persistent spot request open, which relaunches it."""
    path = "instanceMarketOptions.spotOptions.spotInstanceType"
    if get(resource.inputs, path) == "persistent":
        yield (
            path,
            "a persistent spot request is not cancelled when the instance is destroyed and "
            "launches an untracked instance: use `one-time` (with `terminate` on interruption)",
        )


@provider_rule(
    EC2_INSTANCE,
    source=(
        "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/interruption-behavior.html "
        '("Stop interrupted Spot Instances ... The Spot Instance request type must be '
        'persistent"); API_SpotMarketOptions SpotInstanceType'
    ),
)
def spot_stop_needs_persistent_request(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """EC2 stops or hibernates an interrupted spot instance only for a persistent request."""
    options = get(resource.inputs, "instanceMarketOptions.spotOptions") or {}
    behavior = options.get("instanceInterruptionBehavior")
    if behavior in ("stop", "hibernate") and options.get("spotInstanceType") != "persistent":
        yield (
            "instanceMarketOptions.spotOptions.instanceInterruptionBehavior",
            f"`{behavior}` needs a persistent spot request (the default is one-time), and a "
            "persistent request outlives the instance: use `terminate`",
        )


@provider_rule(
    EC2_INSTANCE,
    source=(
        "hashicorp/terraform-provider-aws internal/service/ec2/ec2_instance.go, aws_instance "
        'schema: "user_data" ValidateFunc validation.StringLenBetween(0, 16384)'
    ),
)
def user_data_over_16kb(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The provider refuses `user_data` longer than 16384 characters (EC2's 16 KB)."""
    user_data = resource.inputs.get("userData")
    if isinstance(user_data, str) and len(user_data) > 16384:
        yield "userData", f"{len(user_data)} characters; EC2 takes at most 16384 (16 KB)"
