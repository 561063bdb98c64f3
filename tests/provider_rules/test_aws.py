# ruff: noqa: E501  (literal resource inputs)
"""AWS provider rules: each one refuses an input that breaks it and accepts the stacks' own.

Most cases are plain recorded resources (the engine's camelCase inputs, as a rule sees them);
a few run a small program through the mock engine, where the mocks' answers matter (zone IDs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi_aws as aws

from gpuinfra.engine import Plan, RecordedResource, run_program
from gpuinfra.provider_rules import Refusal, check_resources

_COUNTER = iter(range(1_000_000))


def res(
    type_: str,
    inputs: Mapping[str, Any],
    *,
    name: str | None = None,
    outputs: Mapping[str, Any] | None = None,
    id: str | None = None,
    deps: tuple[str, ...] = (),
) -> RecordedResource:
    n = next(_COUNTER)
    name = name or f"r{n}"
    return RecordedResource(
        urn=f"urn:pulumi:s::p::{type_}::{name}", type=type_, name=name, parent=None,
        provider=None, custom=True, protect=False, inputs=dict(inputs),
        outputs={**inputs, **(outputs or {})}, id=id or f"id-{n}", dependencies=list(deps),
    )  # fmt: skip


def refused(rule: str, *resources: RecordedResource) -> list[Refusal]:
    return [r for r in check_resources(resources) if r.rule == f"aws.{rule}"]


def fields(rule: str, *resources: RecordedResource) -> list[str]:
    return [r.field for r in refused(rule, *resources)]


CLUSTER = "aws:eks/cluster:Cluster"
SUBNET = "aws:ec2/subnet:Subnet"


def subnet(zone_id: str) -> RecordedResource:
    return res(SUBNET, {"availabilityZoneId": zone_id, "cidrBlock": "10.0.0.0/24"})


def cluster(subnets: list[RecordedResource], **extra: Any) -> RecordedResource:
    inputs: dict[str, Any] = {
        "name": "c",
        "version": "1.35",
        "vpcConfig": {"subnetIds": [s.id for s in subnets], "endpointPublicAccess": False},
        "accessConfig": {
            "authenticationMode": "API",
            "bootstrapClusterCreatorAdminPermissions": True,
        },
    }
    inputs.update(extra)
    return res(CLUSTER, inputs)


# --- EKS cluster: zones ----------------------------------------------------------------------


def test_eks_cluster_subnets_in_supported_zones() -> None:
    good = [subnet("use1-az1"), subnet("use1-az2")]
    assert not fields("eks_cluster_subnets_in_supported_zones", cluster(good), *good)
    for zone in ("use1-az3", "usw1-az2", "cac1-az3"):
        bad = [subnet("use1-az1"), subnet(zone)]
        assert fields("eks_cluster_subnets_in_supported_zones", cluster(bad), *bad) == [
            "vpcConfig.subnetIds"
        ]


def test_zones_picked_by_name_index_meet_the_zone_eks_refuses() -> None:
    """The old program's way (names[i]) in the mock account, where us-east-1b is use1-az3."""

    def program() -> None:
        zones = aws.get_availability_zones_output(state="available")
        subnets = [
            aws.ec2.Subnet(f"s{i}", vpc_id="vpc-1", cidr_block=f"10.0.{i}.0/24",
                           availability_zone=zones.names[i])
            for i in range(2)
        ]  # fmt: skip
        aws.eks.Cluster(
            "c", role_arn="arn:aws:iam::123456789012:role/r", version="1.35",
            vpc_config={"subnet_ids": [s.id for s in subnets]},
            access_config={"bootstrap_cluster_creator_admin_permissions": True},
        )  # fmt: skip

    plan = run_program(program, project="p", stack="s", config={}, provider_rules=False)
    found = [r for r in check_resources(plan.resources) if r.rule.endswith("supported_zones")]
    assert len(found) == 1 and "use1-az3" in found[0].message


def test_eks_cluster_subnets_span_two_zones() -> None:
    same = [subnet("use1-az1"), subnet("use1-az1")]
    assert fields("eks_cluster_subnets_span_two_zones", cluster(same), *same)
    two = [subnet("use1-az1"), subnet("use1-az2")]
    assert not fields("eks_cluster_subnets_span_two_zones", cluster(two), *two)


def test_shipped_stacks_meet_every_aws_rule(dev_plan: Plan, prod_plan: Plan) -> None:
    for plan in (dev_plan, prod_plan):
        assert not [r for r in check_resources(plan.resources) if r.rule.startswith("aws.")]


# --- EKS cluster: access and version ---------------------------------------------------------

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ROLE = "arn:aws:iam::123456789012:role/admins"
ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def _no_bootstrap(**extra: Any) -> RecordedResource:
    two = [subnet("use1-az1"), subnet("use1-az2")]
    access = {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}
    return cluster(two, accessConfig=access, **extra)


def _entry(principal: str = ROLE, **extra: Any) -> RecordedResource:
    return res(ENTRY, {"clusterName": "c", "principalArn": principal, "type": "STANDARD", **extra})


def _association(entry: RecordedResource | None, **extra: Any) -> RecordedResource:
    inputs = {"clusterName": "c", "principalArn": ROLE, "policyArn": ADMIN,
              "accessScope": {"type": "cluster"}, **extra}  # fmt: skip
    return res(ASSOCIATION, inputs, deps=(entry.urn,) if entry else ())


def test_eks_cluster_bootstrap_admin_chosen() -> None:
    two = [subnet("use1-az1"), subnet("use1-az2")]
    unset = cluster(two, accessConfig={"authenticationMode": "API"})
    assert fields("eks_cluster_bootstrap_admin_chosen", unset) == [
        "accessConfig.bootstrapClusterCreatorAdminPermissions"
    ]
    assert not fields("eks_cluster_bootstrap_admin_chosen", cluster(two))


def test_eks_cluster_has_an_admin() -> None:
    assert fields("eks_cluster_has_an_admin", _no_bootstrap()) == ["accessConfig"]
    entry = _entry()
    view_only = _association(entry, policyArn=ADMIN.replace("ClusterAdmin", "View"))
    assert fields("eks_cluster_has_an_admin", _no_bootstrap(), entry, view_only)
    assert not fields("eks_cluster_has_an_admin", _no_bootstrap(), entry, _association(entry))


def test_eks_cluster_version_offered() -> None:
    two = [subnet("use1-az1"), subnet("use1-az2")]
    assert fields("eks_cluster_version_offered", cluster(two, version="1.31")) == ["version"]
    assert fields("eks_cluster_version_offered", cluster(two, version=None)) == ["version"]
    assert not fields("eks_cluster_version_offered", cluster(two, version="1.35"))


def test_eks_cluster_public_endpoint_limited() -> None:
    two = [subnet("use1-az1"), subnet("use1-az2")]
    ids = [s.id for s in two]
    world = cluster(two, vpcConfig={"subnetIds": ids, "endpointPublicAccess": True})
    assert fields("eks_cluster_public_endpoint_limited", world) == ["vpcConfig.publicAccessCidrs"]
    default_public = cluster(two, vpcConfig={"subnetIds": ids})  # the provider's default: true
    assert fields("eks_cluster_public_endpoint_limited", default_public)
    v6 = cluster(two, vpcConfig={"subnetIds": ids, "publicAccessCidrs": ["2001:db8::/48"]})
    assert fields("eks_cluster_public_endpoint_limited", v6)
    ok = cluster(two, vpcConfig={"subnetIds": ids, "publicAccessCidrs": ["203.0.113.0/24"]})
    assert not fields("eks_cluster_public_endpoint_limited", ok)


def test_eks_access_entry_principal_is_iam() -> None:
    session = "arn:aws:sts::123456789012:assumed-role/admins/me"
    assert fields("eks_access_entry_principal_is_iam", _entry(session)) == ["principalArn"]
    linked = "arn:aws:iam::123456789012:role/aws-service-role/eks.amazonaws.com/AWSServiceRoleForAmazonEKS"
    assert fields("eks_access_entry_principal_is_iam", _entry(linked)) == ["principalArn"]
    assert fields("eks_access_entry_principal_is_iam", _entry(userName="system:me")) == ["userName"]
    assert not fields("eks_access_entry_principal_is_iam", _entry())
    path = "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Admin_1"
    assert not fields("eks_access_entry_principal_is_iam", _entry(path))


def test_eks_access_entry_one_per_principal() -> None:
    first, second = _entry(), _entry()
    assert fields("eks_access_entry_one_per_principal", first, second) == ["principalArn"]
    assert not fields("eks_access_entry_one_per_principal", first, _entry(ROLE + "2"))


def test_eks_access_policy_association_needs_entry() -> None:
    entry = _entry()
    assert fields("eks_access_policy_association_needs_entry", _association(None))
    assert fields("eks_access_policy_association_needs_entry", entry, _association(None))
    assert not fields("eks_access_policy_association_needs_entry", entry, _association(entry))


def test_eks_access_policy_association_scope() -> None:
    entry = _entry()
    rule = "eks_access_policy_association_scope"
    assert fields(rule, entry, _association(entry, accessScope={"type": "namespace"})) == [
        "accessScope.namespaces"
    ]
    assert fields(rule, entry, _association(entry, accessScope={"type": "global"}))
    assert fields(rule, entry, _association(entry, policyArn="arn:aws:iam::aws:policy/Admin"))
    assert not fields(rule, entry, _association(entry))


# --- EKS node groups -------------------------------------------------------------------------

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def _group(template: RecordedResource | None = None, **extra: Any) -> RecordedResource:
    inputs: dict[str, Any] = {
        "clusterName": "c", "version": "1.35", "instanceTypes": ["g5.xlarge"],
        "scalingConfig": {"minSize": 0, "desiredSize": 0, "maxSize": 2},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    }  # fmt: skip
    if template is not None:
        inputs["launchTemplate"] = {"id": template.id, "version": "1"}
    inputs.update(extra)
    return res(NODE_GROUP, inputs)


def _eks(version: str = "1.35") -> RecordedResource:
    return res(CLUSTER, {"name": "c", "version": version},
               outputs={"vpcConfig": {"clusterSecurityGroupId": "sg-cluster"}})  # fmt: skip


def test_eks_node_group_version_follows_cluster() -> None:
    rule = "eks_node_group_version_follows_cluster"
    assert fields(rule, _eks(), _group(version=None)) == ["version"]
    assert fields(rule, _eks("1.35"), _group(version="1.34")) == ["version"]
    assert not fields(rule, _eks(), _group())
    custom_ami = res(LT, {"imageId": "ami-1"})
    assert fields(rule, _eks(), custom_ami, _group(custom_ami)) == ["version"]


def test_eks_node_group_scaling_and_taints() -> None:
    rule = "eks_node_group_scaling_and_taints"
    bad_size = _group(scalingConfig={"minSize": 2, "desiredSize": 1, "maxSize": 3})
    assert fields(rule, bad_size) == ["scalingConfig.desiredSize"]
    assert fields(rule, _group(scalingConfig={"minSize": 0, "desiredSize": 0, "maxSize": 0}))
    k8s_spelling = _group(taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    assert fields(rule, k8s_spelling) == ["taints"]
    assert not fields(rule, _group())


def test_eks_node_group_launch_template_fit() -> None:
    rule = "eks_node_group_launch_template_fit"
    template = res(LT, {})
    assert fields(rule, _eks(), template, _group(template, diskSize=100)) == ["diskSize"]
    assert fields(rule, _eks(), template, _group(template, remoteAccess={"ec2SshKey": "k"}))
    others_only = res(LT, {"vpcSecurityGroupIds": ["sg-admin"]})
    assert fields(rule, _eks(), others_only, _group(others_only)) == ["launchTemplate"]
    with_cluster_sg = res(LT, {"vpcSecurityGroupIds": ["sg-cluster", "sg-admin"]})
    assert not fields(rule, _eks(), with_cluster_sg, _group(with_cluster_sg))
    assert fields(rule, _group(instanceTypes=[f"t{i}" for i in range(21)]))
    assert not fields(rule, _eks(), template, _group(template))


ADDON = "aws:eks/addon:Addon"


def _addon(*deps: RecordedResource, **extra: Any) -> RecordedResource:
    inputs = {
        "clusterName": "c", "addonName": "aws-mountpoint-s3-csi-driver",
        "serviceAccountRoleArn": "arn:aws:iam::123456789012:role/s3-csi",
        "configurationValues": '{"node": {"tolerateAllTaints": true}}', **extra,
    }  # fmt: skip
    return res(ADDON, inputs, deps=tuple(d.urn for d in deps))


def test_eks_addon_values() -> None:
    rule = "eks_addon_values"
    assert not fields(rule, _addon())
    assert not fields(rule, _addon(addonVersion="v2.7.0-eksbuild.1"))
    assert fields(rule, _addon(addonVersion="2.7.0")) == ["addonVersion"]
    assert fields(rule, _addon(serviceAccountRoleArn="s3-csi")) == ["serviceAccountRoleArn"]
    assert fields(rule, _addon(resolveConflictsOnCreate="PRESERVE")) == ["resolveConflictsOnCreate"]
    assert fields(rule, _addon(configurationValues="node: {}")) == ["configurationValues"]


def test_eks_addon_after_its_nodes() -> None:
    rule = "eks_addon_after_its_nodes"
    group = _group()
    assert fields(rule, group, _addon()) == ["dependsOn"]
    assert not fields(rule, group, _addon(group))
    assert not fields(rule, _addon())  # the cluster's nodes exist already (no group here)
    [refusal] = refused(rule, group, _addon())
    assert "20 minutes" in refusal.message


# --- EC2 -------------------------------------------------------------------------------------


def test_ec2_launch_template_values() -> None:
    rule = "ec2_launch_template_values"
    bool_not_string = res(LT, {"blockDeviceMappings": [{"ebs": {"encrypted": True}}]})
    assert fields(rule, bool_not_string) == ["blockDeviceMappings.0.ebs.encrypted"]
    assert fields(rule, res(LT, {"metadataOptions": {"httpTokens": "yes"}}))
    assert fields(rule, res(LT, {"metadataOptions": {"httpPutResponseHopLimit": 0}}))
    assert fields(rule, res(LT, {"defaultVersion": 2, "updateDefaultVersion": True}))
    good = {"blockDeviceMappings": [{"ebs": {"encrypted": "true", "volumeType": "gp3"}}],
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1}}  # fmt: skip
    assert not fields(rule, res(LT, good))


def test_ec2_subnet_zone_and_cidr() -> None:
    rule = "ec2_subnet_zone_and_cidr"
    both = res(SUBNET, {"availabilityZone": "us-east-1a", "availabilityZoneId": "use1-az6"})
    assert fields(rule, both) == ["availabilityZoneId"]
    assert fields(rule, res(SUBNET, {"cidrBlock": "10.0.0.1/24"})) == ["cidrBlock"]
    assert not fields(rule, subnet("use1-az1"))


def test_ec2_vpc_cidr_block() -> None:
    rule = "ec2_vpc_cidr_block"
    assert fields(rule, res("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.0/8"})) == ["cidrBlock"]
    assert fields(rule, res("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.1/16"}))
    assert not fields(rule, res("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.0/16"}))


def test_ec2_internet_gateway_one_per_vpc() -> None:
    igw = "aws:ec2/internetGateway:InternetGateway"
    rule = "ec2_internet_gateway_one_per_vpc"
    assert fields(rule, res(igw, {"vpcId": "vpc-1"}), res(igw, {"vpcId": "vpc-1"})) == ["vpcId"]
    assert not fields(rule, res(igw, {"vpcId": "vpc-1"}), res(igw, {"vpcId": "vpc-2"}))


def test_ec2_default_security_group_one_per_vpc() -> None:
    dsg = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
    rule = "ec2_default_security_group_one_per_vpc"
    assert fields(rule, res(dsg, {"vpcId": "vpc-1"}), res(dsg, {"vpcId": "vpc-1"}))
    assert not fields(rule, res(dsg, {"vpcId": "vpc-1"}))


def test_ec2_route_table_routes() -> None:
    rt = "aws:ec2/routeTable:RouteTable"
    rule = "ec2_route_table_routes"
    two = {"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-1", "natGatewayId": "nat-1"}
    assert fields(rule, res(rt, {"routes": [two]})) == ["routes.0"]
    host_bits = {"cidrBlock": "10.0.0.1/16", "gatewayId": "igw-1"}
    assert fields(rule, res(rt, {"routes": [host_bits]})) == ["routes.0.cidrBlock"]
    assert not fields(rule, res(rt, {"routes": [{"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-1"}]}))


def test_ec2_route_table_association_one_target() -> None:
    rta = "aws:ec2/routeTableAssociation:RouteTableAssociation"
    rule = "ec2_route_table_association_one_target"
    assert fields(rule, res(rta, {"routeTableId": "rtb-1"})) == ["subnetId"]
    assert fields(rule, res(rta, {"routeTableId": "r", "subnetId": "s", "gatewayId": "g"}))
    assert not fields(rule, res(rta, {"routeTableId": "rtb-1", "subnetId": "subnet-1"}))


def test_ec2_eip_domain() -> None:
    eip = "aws:ec2/eip:Eip"
    assert fields("ec2_eip_domain", res(eip, {})) == ["domain"]
    assert not fields("ec2_eip_domain", res(eip, {"domain": "vpc"}))


def test_ec2_nat_gateway_public_needs_eip() -> None:
    nat = "aws:ec2/natGateway:NatGateway"
    rule = "ec2_nat_gateway_public_needs_eip"
    assert fields(rule, res(nat, {"subnetId": "subnet-1"})) == ["allocationId"]
    private = {"subnetId": "subnet-1", "connectivityType": "private"}
    assert not fields(rule, res(nat, private))
    assert not fields(rule, res(nat, {"subnetId": "subnet-1", "allocationId": "eipalloc-1"}))


def test_ec2_vpc_endpoint_gateway_shape() -> None:
    vpce = "aws:ec2/vpcEndpoint:VpcEndpoint"
    rule = "ec2_vpc_endpoint_gateway_shape"
    s3 = {"serviceName": "com.amazonaws.us-east-1.s3", "vpcEndpointType": "Gateway"}
    assert fields(rule, res(vpce, {**s3, "subnetIds": ["subnet-1"]})) == ["subnetIds"]
    ecr = {"serviceName": "com.amazonaws.us-east-1.ecr.dkr", "vpcEndpointType": "Gateway"}
    assert fields(rule, res(vpce, ecr)) == ["serviceName"]
    assert not fields(rule, res(vpce, {**s3, "routeTableIds": ["rtb-1"]}))


def test_ec2_security_group_description() -> None:
    sg = "aws:ec2/securityGroup:SecurityGroup"
    rule = "ec2_security_group_description"
    assert fields(rule, res(sg, {"description": "SSH, Jupyter 8888 — admins"})) == ["description"]
    assert fields(rule, res(sg, {"description": "x" * 256}))
    assert not fields(rule, res(sg, {"description": "SSH 22, Jupyter 8888 (admin networks)"}))


def test_vpc_ingress_rule_one_source() -> None:
    ingress = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    rule = "vpc_ingress_rule_one_source"
    base = {"securityGroupId": "sg-1", "ipProtocol": "tcp", "fromPort": 22, "toPort": 22}
    assert fields(rule, res(ingress, base)) == ["cidrIpv4"]
    both = {**base, "cidrIpv4": "10.0.0.0/8", "cidrIpv6": "2001:db8::/48"}
    assert fields(rule, res(ingress, both)) == ["cidrIpv4"]
    assert fields(rule, res(ingress, {**base, "cidrIpv4": "2001:db8::/48"})) == ["cidrIpv4"]
    assert fields(rule, res(ingress, {**base, "ipProtocol": "-1", "cidrIpv4": "10.0.0.0/8"}))
    assert not fields(rule, res(ingress, {**base, "cidrIpv4": "10.0.0.0/8"}))


# --- IAM, KMS, logs, Auto Scaling ------------------------------------------------------------

TRUST = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow"}]}'


def test_iam_role_inputs() -> None:
    role = "aws:iam/role:Role"
    assert fields("iam_role_inputs", res(role, {"assumeRolePolicy": "{not json"})) == [
        "assumeRolePolicy"
    ]
    assert fields("iam_role_inputs", res(role, {"assumeRolePolicy": TRUST, "name": "r" * 65}))
    assert fields(
        "iam_role_inputs", res(role, {"assumeRolePolicy": TRUST, "maxSessionDuration": 60})
    )
    assert not fields("iam_role_inputs", res(role, {"assumeRolePolicy": TRUST}))


def test_iam_role_policy_document() -> None:
    policy = "aws:iam/rolePolicy:RolePolicy"
    assert fields("iam_role_policy_document", res(policy, {"policy": '{"Version": "2012-10-17"}'}))
    big = '{"Version": "2012-10-17", "Statement": [' + ",".join(['{"Effect":"Allow"}'] * 700) + "]}"
    assert fields("iam_role_policy_document", res(policy, {"policy": big})) == ["policy"]
    assert not fields("iam_role_policy_document", res(policy, {"policy": TRUST}))


def test_iam_role_policy_attachment_arn() -> None:
    attach = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    rule = "iam_role_policy_attachment_arn"
    assert fields(rule, res(attach, {"policyArn": "AmazonEKSClusterPolicy"})) == ["policyArn"]
    assert not fields(
        rule, res(attach, {"policyArn": "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"})
    )


def test_iam_oidc_provider_url() -> None:
    oidc = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
    rule = "iam_oidc_provider_url"
    plain = {"url": "http://oidc.example/id/1", "clientIdLists": ["sts.amazonaws.com"]}
    assert fields(rule, res(oidc, plain)) == ["url"]
    assert fields(rule, res(oidc, {**plain, "url": "https://oidc.example", "clientIdLists": []}))
    assert not fields(rule, res(oidc, {**plain, "url": "https://oidc.example/id/1"}))


def test_kms_key_window_and_description() -> None:
    key = "aws:kms/key:Key"
    rule = "kms_key_window_and_description"
    assert fields(rule, res(key, {"deletionWindowInDays": 3})) == ["deletionWindowInDays"]
    assert not fields(rule, res(key, {"deletionWindowInDays": 30}))


def test_kms_alias_name() -> None:
    alias = "aws:kms/alias:Alias"
    assert fields("kms_alias_name", res(alias, {"name": "alias/aws/ebs"})) == ["name"]
    assert fields("kms_alias_name", res(alias, {"name": "gpuinfra-dev-eks-secrets"})) == ["name"]
    assert not fields("kms_alias_name", res(alias, {"name": "alias/gpuinfra-dev-eks-secrets"}))


def test_cloudwatch_log_group_retention() -> None:
    group = "aws:cloudwatch/logGroup:LogGroup"
    rule = "cloudwatch_log_group_retention"
    assert fields(rule, res(group, {"retentionInDays": 0})) == ["retentionInDays"]
    assert fields(rule, res(group, {"retentionInDays": 100})) == ["retentionInDays"]
    assert not fields(rule, res(group, {"retentionInDays": 365}))


def test_autoscaling_tag_limits() -> None:
    tag = "aws:autoscaling/tag:Tag"
    rule = "autoscaling_tag_limits"
    long_key = {"autoscalingGroupName": "asg", "tag": {"key": "k" * 129, "value": "v"}}
    assert fields(rule, res(tag, long_key)) == ["tag.key"]
    assert fields(
        rule, res(tag, {"autoscalingGroupName": "asg", "tag": {"key": "aws:x", "value": ""}})
    )
    ok = {
        "autoscalingGroupName": "asg",
        "tag": {"key": "k8s.io/cluster-autoscaler/enabled", "value": "true"},
    }
    assert not fields(rule, res(tag, ok))


# --- S3 --------------------------------------------------------------------------------------

SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"


def test_s3_bucket_name() -> None:
    bucket = "aws:s3/bucket:Bucket"
    assert fields("s3_bucket_name", res(bucket, {"bucket": "Team_Data"})) == ["bucket"]
    assert not fields("s3_bucket_name", res(bucket, {"bucket": "team-data"}))


def test_s3_bucket_setting_single_owner() -> None:
    rule = "s3_bucket_setting_single_owner"
    versioning = "aws:s3/bucketVersioning:BucketVersioning"
    config = {"bucket": "b", "versioningConfiguration": {"status": "Enabled"}}
    assert fields(rule, res(versioning, config), res(versioning, config)) == ["bucket"]
    assert not fields(rule, res(versioning, config), res(versioning, {**config, "bucket": "c"}))


def test_s3_ownership_controls_value() -> None:
    controls = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
    rule = "s3_ownership_controls_value"
    assert fields(rule, res(controls, {"bucket": "b", "rule": {"objectOwnership": "Owner"}}))
    assert not fields(
        rule, res(controls, {"bucket": "b", "rule": {"objectOwnership": "BucketOwnerEnforced"}})
    )


def test_s3_public_access_block_complete() -> None:
    block = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
    rule = "s3_public_access_block_complete"
    assert fields(rule, res(block, {"bucket": "b", "blockPublicAcls": True})) == [
        "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"
    ]  # fmt: skip
    flags = dict.fromkeys(("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                           "restrictPublicBuckets"), True)  # fmt: skip
    assert not fields(rule, res(block, {"bucket": "b", **flags}))


def test_s3_versioning_status() -> None:
    versioning = "aws:s3/bucketVersioning:BucketVersioning"
    rule = "s3_versioning_status"
    assert fields(
        rule, res(versioning, {"bucket": "b", "versioningConfiguration": {"status": "On"}})
    )
    assert not fields(
        rule, res(versioning, {"bucket": "b", "versioningConfiguration": {"status": "Enabled"}})
    )


def test_s3_encryption_values() -> None:
    rule = "s3_encryption_values"
    inert = {"bucket": "b", "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"},
                                       "bucketKeyEnabled": True}]}  # fmt: skip
    assert fields(rule, res(SSE, inert)) == ["rules.0.bucketKeyEnabled"]
    kms = {"bucket": "b", "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms"},
                                     "bucketKeyEnabled": True}]}  # fmt: skip
    assert not fields(rule, res(SSE, kms))
    wrong = {
        "bucket": "b",
        "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES128"}}],
    }
    assert fields(rule, res(SSE, wrong))


def test_s3_lifecycle_rules() -> None:
    lifecycle = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
    rule = "s3_lifecycle_rules"
    zero = {"id": "abort", "status": "Enabled", "filter": {},
            "abortIncompleteMultipartUpload": {"daysAfterInitiation": 0}}  # fmt: skip
    assert fields(rule, res(lifecycle, {"bucket": "b", "rules": [zero]})) == [
        "rules.0.abortIncompleteMultipartUpload.daysAfterInitiation"
    ]
    tagged = {**zero, "abortIncompleteMultipartUpload": {"daysAfterInitiation": 7},
              "filter": {"tag": {"key": "k", "value": "v"}}}  # fmt: skip
    assert fields(rule, res(lifecycle, {"bucket": "b", "rules": [tagged]})) == ["rules.0.filter"]
    good = {**zero, "abortIncompleteMultipartUpload": {"daysAfterInitiation": 7}}
    assert not fields(rule, res(lifecycle, {"bucket": "b", "rules": [good]}))


def test_s3_bucket_policy_document() -> None:
    policy = "aws:s3/bucketPolicy:BucketPolicy"
    rule = "s3_bucket_policy_document"
    assert fields(rule, res(policy, {"bucket": "b", "policy": "[]"})) == ["policy"]
    assert not fields(rule, res(policy, {"bucket": "b", "policy": TRUST}))


def test_every_aws_type_the_stacks_create_has_a_rule(dev_plan: Plan, prod_plan: Plan) -> None:
    """The rules cover every AWS resource type of the shipped stacks (the workstation's types,
    off in both, are the workstation issue's)."""
    from gpuinfra.provider_rules import RULES

    covered = {t for rule in RULES for t in rule.types}
    created = {r.type for plan in (dev_plan, prod_plan) for r in plan.resources if r.custom}
    missing = sorted(t for t in created if t.startswith("aws:") and t not in covered)
    assert not missing, missing
