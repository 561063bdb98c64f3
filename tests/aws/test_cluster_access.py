"""Who can use the EKS cluster, node versions that follow it, and when the GPU layer may start."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from components.settings import SettingsError, parse_settings
from gpuinfra.engine import Plan
from gpuinfra.mocks import aws as aws_mocks
from tests.conftest import BuildStack

CLUSTER = "aws:eks/cluster:Cluster"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
DEPLOYER = f"arn:aws:iam::123456789012:role/{aws_mocks.DEPLOY_ROLE}"
ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def test_creator_gets_no_hidden_entry(dev_plan: Plan) -> None:
    access = dev_plan.one(CLUSTER).inputs["accessConfig"]
    assert access == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}


def test_deployer_is_admitted_by_its_role_arn_not_its_session(dev_plan: Plan) -> None:
    (entry,) = dev_plan.of_type(ENTRY)
    assert entry.inputs["principalArn"] == DEPLOYER
    assert entry.inputs["clusterName"] == dev_plan.one(CLUSTER).outputs["name"]
    (association,) = dev_plan.of_type(ASSOCIATION)
    assert association.inputs["principalArn"] == DEPLOYER
    assert association.inputs["policyArn"] == ADMIN_POLICY
    assert association.inputs["accessScope"] == {"type": "cluster"}
    assert entry.urn in association.dependencies


def test_configured_admins_get_entries_once(build_stack_plan: BuildStack) -> None:
    sso = "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Admin_1"
    plan = build_stack_plan("dev", {"clusterAdminArns": [sso, DEPLOYER]})
    principals = sorted(e.inputs["principalArn"] for e in plan.of_type(ENTRY))
    assert principals == sorted([DEPLOYER, sso])
    assert len(plan.of_type(ASSOCIATION)) == 2


def test_an_admin_keeps_its_resource_whether_listed_or_deploying(
    dev_plan: Plan, build_stack_plan: BuildStack
) -> None:
    """Listing the deployer too must not make a second entry for one principal (refused)."""
    listed = build_stack_plan("dev", {"clusterAdminArns": [DEPLOYER]})
    assert [e.name for e in listed.of_type(ENTRY)] == [e.name for e in dev_plan.of_type(ENTRY)]


@pytest.mark.parametrize(
    ("arn", "fragment"),
    [
        ("arn:aws:sts::123456789012:assumed-role/admins/me", "role/admins"),
        ("admins", "must be an IAM role or user ARN"),
        ("arn:aws:iam::123456789012:role/aws-service-role/eks.amazonaws.com/x", "service-linked"),
    ],
)
def test_admin_arns_refused_with_the_fix(arn: str, fragment: str) -> None:
    with pytest.raises(SettingsError) as raised:
        parse_settings(
            {
                "gpuPoolInstanceType": "g5.xlarge",
                "clusterAdminArns": f'["{arn}"]',
                "gpuLayer": "separate",
            },
            stack="dev",
            provider_config={"aws:region": "us-east-1"},
        )
    (problem,) = raised.value.problems
    assert problem.key == "gpuinfra:clusterAdminArns" and fragment in problem.allowed


def test_node_groups_run_the_clusters_minor(dev_plan: Plan, build_stack_plan: BuildStack) -> None:
    assert {g.inputs["version"] for g in dev_plan.of_type(NODE_GROUP)} == {"1.35"}
    plan = build_stack_plan("dev", {"kubernetesVersion": "1.34"})
    assert {g.inputs["version"] for g in plan.of_type(NODE_GROUP)} == {"1.34"}


def test_gpu_layer_waits_for_access_and_node_groups(dev_plan: Plan) -> None:
    (provider,) = dev_plan.of_type("pulumi:providers:kubernetes")
    deps = set(provider.dependencies)
    assert {a.urn for a in dev_plan.of_type(ASSOCIATION)} <= deps
    assert {g.urn for g in dev_plan.of_type(NODE_GROUP)} <= deps
    assert "kubeconfig" in dev_plan.secret_outputs


def test_support_status_is_reported(dev_plan: Plan) -> None:
    assert dev_plan.outputs["kubernetesSupport"].startswith("Kubernetes 1.35: EKS standard support")


@pytest.fixture
def deployed() -> Iterator[dict[str, dict]]:
    aws_mocks.DEPLOYED_CLUSTERS.clear()
    yield aws_mocks.DEPLOYED_CLUSTERS
    aws_mocks.DEPLOYED_CLUSTERS.clear()


def test_a_jump_of_two_minors_is_refused_before_any_resource(
    build_stack_plan: BuildStack, deployed: dict[str, dict]
) -> None:
    deployed["gpuinfra-dev"] = {"version": "1.33", "nodeGroups": {"system": "1.33", "gpu": "1.33"}}
    with pytest.raises(SettingsError) as raised:
        build_stack_plan("dev")
    (problem,) = raised.value.problems
    assert problem.key == "gpuinfra:kubernetesVersion"
    assert "1.34, then 1.35" in problem.allowed


def test_node_groups_left_behind_hold_the_control_plane_back(
    build_stack_plan: BuildStack, deployed: dict[str, dict]
) -> None:
    deployed["gpuinfra-dev"] = {"version": "1.34", "nodeGroups": {"gpu": "1.33"}}
    with pytest.raises(SettingsError, match=r"node groups run 1\.33"):
        build_stack_plan("dev")
    # Their own minor first: the node groups catch up with the control plane.
    plan = build_stack_plan("dev", {"kubernetesVersion": "1.34"})
    assert {g.inputs["version"] for g in plan.of_type(NODE_GROUP)} == {"1.34"}


def test_one_minor_up_from_a_deployed_cluster_is_fine(
    build_stack_plan: BuildStack, deployed: dict[str, dict]
) -> None:
    deployed["gpuinfra-dev"] = {"version": "1.34", "nodeGroups": {"gpu": "1.34"}}
    assert build_stack_plan("dev").one(CLUSTER).inputs["version"] == "1.35"
