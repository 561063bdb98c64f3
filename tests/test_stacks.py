"""Whole stacks: dev and prod build, every resource of the design is there, names are unique,
everything is tagged and parented to a component."""

from __future__ import annotations

from collections import Counter

import pytest

from gpuinfra.engine import Plan

EXPECTED_DEV = {
    "aws:ec2/vpc:Vpc": 1,
    "aws:ec2/subnet:Subnet": 4,
    "aws:ec2/internetGateway:InternetGateway": 1,
    "aws:ec2/natGateway:NatGateway": 1,
    "aws:ec2/eip:Eip": 1,
    "aws:ec2/routeTable:RouteTable": 3,
    "aws:ec2/routeTableAssociation:RouteTableAssociation": 4,
    "aws:ec2/securityGroup:SecurityGroup": 1,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": 3,
    "aws:kms/key:Key": 1,
    "aws:eks/cluster:Cluster": 1,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": 1,
    "aws:eks/nodeGroup:NodeGroup": 3,  # system, and the GPU pools small and large
    "aws:ec2/launchTemplate:LaunchTemplate": 3,
    "aws:iam/role:Role": 5,  # cluster, nodes, training IRSA, cluster-autoscaler IRSA, S3 CSI IRSA
    "aws:s3/bucket:Bucket": 1,
    "aws:s3/bucketVersioning:BucketVersioning": 1,
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": 1,
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": 1,
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": 1,
    "aws:iam/rolePolicy:RolePolicy": 3,  # training, cluster-autoscaler, S3 CSI (read-only)
    # discovery (2 per group) + each GPU pool's node template (GPUs, 5 labels, 2 taints)
    "aws:autoscaling/tag:Tag": 22,
}

UNTAGGABLE = {
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/rolePolicy:RolePolicy",
    "aws:kms/alias:Alias",
    "aws:s3/bucketVersioning:BucketVersioning",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
    "aws:s3/bucketPolicy:BucketPolicy",
    "aws:autoscaling/tag:Tag",  # is itself a tag on an Auto Scaling group
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",  # takes no tags
}


def test_dev_has_every_designed_resource(dev_plan: Plan) -> None:
    counts = Counter(r.type for r in dev_plan.resources)
    for type_, expected in EXPECTED_DEV.items():
        assert counts[type_] == expected, type_


def test_prod_scales_out_zones_and_nat(prod_plan: Plan) -> None:
    counts = Counter(r.type for r in prod_plan.resources)
    assert counts["aws:ec2/subnet:Subnet"] == 6
    assert counts["aws:ec2/natGateway:NatGateway"] == 3
    assert counts["aws:eks/nodeGroup:NodeGroup"] == 2


@pytest.mark.parametrize("plan_name", ["dev_plan", "prod_plan"])
def test_names_are_unique_per_type(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: Plan = request.getfixturevalue(plan_name)
    keys = Counter((r.type, r.name) for r in plan.resources)
    assert [k for k, n in keys.items() if n > 1] == []


@pytest.mark.parametrize("plan_name", ["dev_plan", "prod_plan"])
def test_every_taggable_resource_is_tagged(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: Plan = request.getfixturevalue(plan_name)
    stack = plan.stack
    for resource in plan.resources:
        if not resource.custom or resource.type in UNTAGGABLE:
            continue
        if resource.type.startswith(("kubernetes:", "pulumi:providers:")):
            continue  # Kubernetes objects carry labels, checked in tests/kubernetes/
        tags = resource.inputs.get("tags") or {}
        assert tags.get("gpuinfra:stack") == stack, resource.name
        assert tags.get("gpuinfra:component"), resource.name


def test_every_cloud_resource_belongs_to_a_component(dev_plan: Plan) -> None:
    components = {r.urn for r in dev_plan.resources if not r.custom}
    assert components, "no component resources recorded"
    for resource in dev_plan.resources:
        if resource.custom:
            assert resource.parent in components, resource.name
        else:
            assert resource.type.startswith("gpuinfra:")


def test_outputs(dev_plan: Plan) -> None:
    for key in ("kubeconfig", "clusterName", "bucketName", "bucketUri", "trainingRoleArn"):
        assert dev_plan.outputs.get(key), key
    assert dev_plan.outputs["clusterName"] == "gpuinfra-dev"
    assert dev_plan.outputs["bucketUri"] == f"s3://{dev_plan.outputs['bucketName']}"
    assert dev_plan.secret_outputs == {"kubeconfig"}


def test_no_resource_is_registered_for_invalid_settings() -> None:
    from components.settings import SettingsError
    from tests.conftest import build

    recorded: list[Plan] = []
    with pytest.raises(SettingsError):
        recorded.append(build("dev", {"maxGpus": 5}))
    assert recorded == []
