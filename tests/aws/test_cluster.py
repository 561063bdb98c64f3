"""EksCluster: version, KMS-encrypted Secrets, endpoint access, logging, OIDC, kubeconfig."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan

CLUSTER = "aws:eks/cluster:Cluster"


def test_version_and_logging_from_config(dev_plan: Plan, prod_plan: Plan) -> None:
    dev = dev_plan.one(CLUSTER)
    assert dev.inputs["version"] == "1.35"
    assert dev.inputs["enabledClusterLogTypes"] == ["api", "audit", "authenticator"]
    prod = prod_plan.one(CLUSTER)
    assert len(prod.inputs["enabledClusterLogTypes"]) == 5
    assert prod.inputs["deletionProtection"] is True
    group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup")
    assert group.inputs["name"] == "/aws/eks/gpuinfra-prod/cluster"
    assert group.inputs["retentionInDays"] == 365


def test_secrets_encrypted_with_the_stacks_own_key(dev_plan: Plan) -> None:
    key = dev_plan.one("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    encryption = dev_plan.one(CLUSTER).inputs["encryptionConfig"]
    assert encryption["resources"] == ["secrets"]
    assert encryption["provider"]["keyArn"] == key.outputs["arn"]


def test_dev_endpoint_public_only_to_admin_networks(dev_plan: Plan) -> None:
    vpc = dev_plan.one(CLUSTER).inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True
    assert vpc["endpointPrivateAccess"] is True
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_prod_endpoint_is_private(prod_plan: Plan) -> None:
    vpc = prod_plan.one(CLUSTER).inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False
    assert vpc["endpointPrivateAccess"] is True
    assert not vpc.get("publicAccessCidrs")


def test_control_plane_in_private_subnets(dev_plan: Plan) -> None:
    private = {s.id for s in dev_plan.of_type("aws:ec2/subnet:Subnet") if "private" in s.name}
    assert set(dev_plan.one(CLUSTER).inputs["vpcConfig"]["subnetIds"]) == private


def test_oidc_provider_matches_the_cluster_issuer(dev_plan: Plan) -> None:
    cluster = dev_plan.one(CLUSTER)
    oidc = dev_plan.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["url"] == cluster.outputs["identities"][0]["oidcs"][0]["issuer"]
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]


def test_cluster_role_trusts_only_eks(dev_plan: Plan) -> None:
    role = dev_plan.one("aws:iam/role:Role", "gpuinfra-dev-cluster-role")
    statement = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert [s["Principal"] for s in statement] == [{"Service": "eks.amazonaws.com"}]


def test_kubeconfig_is_a_secret_pointing_at_the_cluster(dev_plan: Plan) -> None:
    assert "kubeconfig" in dev_plan.secret_outputs
    kubeconfig = json.loads(dev_plan.outputs["kubeconfig"])
    cluster = dev_plan.one(CLUSTER)
    assert kubeconfig["clusters"][0]["cluster"]["server"] == cluster.outputs["endpoint"]
    assert kubeconfig["users"][0]["user"]["exec"]["args"][:4] == [
        "eks",
        "get-token",
        "--cluster-name",
        "gpuinfra-dev",
    ]
