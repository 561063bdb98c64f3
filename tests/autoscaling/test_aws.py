"""EKS: the Cluster Autoscaler, its IRSA role scoped to this cluster, and scale-from-zero tags."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import build, flat_pool

CLUSTER = "gpuinfra-dev"
OWNER_TAG = f"k8s.io/cluster-autoscaler/{CLUSTER}"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG_TAG = "aws:autoscaling/tag:Tag"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


@pytest.fixture(scope="module")
def plan() -> Plan:
    # The single pool of the flat keys (named `gpu`): maxGpus lowers its maximum.
    return build(
        "dev",
        flat_pool("dev", {"gpuPoolScaleDownDelayMinutes": 25, "gpuPoolMaxNodes": 6, "maxGpus": 3}),
    )


def _gpu_group(plan: Plan) -> RecordedResource:
    return plan.one(NODE_GROUP, f"{CLUSTER}-gpu-nodes")


def _command(plan: Plan) -> list[str]:
    deployment = plan.one(DEPLOYMENT, f"{CLUSTER}-cluster-autoscaler")
    containers: list[dict[str, Any]] = deployment.inputs["spec"]["template"]["spec"]["containers"]
    return list(containers[0]["command"])


def _autoscaler_policy(plan: Plan) -> dict[str, Any]:
    policy = plan.one("aws:iam/rolePolicy:RolePolicy", f"{CLUSTER}-cluster-autoscaler-policy")
    return dict(json.loads(policy.inputs["policy"]))


def test_gpu_group_autoscales_from_zero_to_the_capped_maximum(plan: Plan) -> None:
    scaling = _gpu_group(plan).inputs["scalingConfig"]
    assert scaling["minSize"] == 0
    assert scaling["maxSize"] == 3  # maxGpus 3 on 1-GPU nodes caps gpuPoolMaxNodes 6


def test_autoscaler_owns_the_desired_size(plan: Plan) -> None:
    for group in plan.of_type(NODE_GROUP):
        assert "scalingConfig.desiredSize" in group.ignore_changes, group.name


def test_gpu_group_carries_scale_from_zero_tags(plan: Plan) -> None:
    tags = _gpu_group(plan).inputs["tags"]
    assert tags[f"{TEMPLATE}/resources/nvidia.com/gpu"] == "1"
    assert tags[f"{TEMPLATE}/label/gpuinfra.io/accelerator"] == "A10G"
    assert tags[f"{TEMPLATE}/label/k8s.amazonaws.com/accelerator"] == "A10G"
    assert tags[f"{TEMPLATE}/taint/nvidia.com/gpu"] == "true:NoSchedule"
    assert tags["k8s.io/cluster-autoscaler/enabled"] == "true"
    assert tags[OWNER_TAG] == "owned"
    # The label the template promises is one the nodes really get.
    assert _gpu_group(plan).inputs["labels"]["k8s.amazonaws.com/accelerator"] == "A10G"


def test_tags_reach_the_node_groups_auto_scaling_group(plan: Plan) -> None:
    group = _gpu_group(plan)
    asg_name = group.outputs["resources"][0]["autoscalingGroups"][0]["name"]
    on_asg = {
        r.inputs["tag"]["key"]: r.inputs["tag"]["value"]
        for r in plan.of_type(ASG_TAG)
        if r.inputs["autoscalingGroupName"] == asg_name
    }
    expected = {k: v for k, v in group.inputs["tags"].items() if k.startswith("k8s.io/")}
    assert on_asg == expected
    assert len(expected) == 7
    assert not any(r.inputs["tag"]["propagateAtLaunch"] for r in plan.of_type(ASG_TAG))


def test_role_may_resize_only_this_clusters_groups(plan: Plan) -> None:
    statements = {s["Sid"]: s for s in _autoscaler_policy(plan)["Statement"]}
    resize = statements["ResizeThisClustersGroupsOnly"]
    assert set(resize["Action"]) == {
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup",
    }
    assert resize["Condition"] == {"StringEquals": {f"aws:ResourceTag/{OWNER_TAG}": "owned"}}
    node_groups = statements["ReadThisClustersNodeGroups"]
    assert node_groups["Resource"].endswith(f":nodegroup/{CLUSTER}/*")
    # Everything else only describes; nothing else may change anything.
    for sid, statement in statements.items():
        if sid != "ResizeThisClustersGroupsOnly":
            assert all(":Describe" in a or ":Get" in a for a in statement["Action"]), sid


def test_role_trusts_only_the_autoscalers_service_account(plan: Plan) -> None:
    role = plan.one("aws:iam/role:Role", f"{CLUSTER}-cluster-autoscaler-role")
    trust = json.loads(role.inputs["assumeRolePolicy"])
    condition = trust["Statement"][0]["Condition"]["StringEquals"]
    subjects = [v for k, v in condition.items() if k.endswith(":sub")]
    assert subjects == ["system:serviceaccount:kube-system:cluster-autoscaler"]
    account = plan.one(
        "kubernetes:core/v1:ServiceAccount", f"{CLUSTER}-cluster-autoscaler-sa"
    ).inputs["metadata"]
    assert account["namespace"] == "kube-system"
    assert account["annotations"]["eks.amazonaws.com/role-arn"] == role.outputs["arn"]


def test_flags_follow_config(plan: Plan) -> None:
    command = _command(plan)
    assert "--cloud-provider=aws" in command
    assert (
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,"
        f"{OWNER_TAG}" in command
    )
    assert "--scale-down-unneeded-time=25m" in command
    assert "--scale-down-delay-after-add=25m" in command
    assert "--expander=least-waste" in command
    assert "--skip-nodes-with-system-pods=false" in command


def test_default_delay_is_ten_minutes() -> None:
    assert "--scale-down-unneeded-time=10m" in _command(build("dev"))


@pytest.mark.parametrize(
    ("minor", "tag"),
    [("1.35", "v1.35.2"), ("1.33", "v1.33.6"), ("1.36", "v1.36.1"), ("1.34", "v1.34.5")],
)
def test_image_matches_the_cluster_minor(minor: str, tag: str) -> None:
    plan = build("dev", {"kubernetesVersion": minor})
    deployment = plan.one(DEPLOYMENT, f"{CLUSTER}-cluster-autoscaler")
    image = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"registry.k8s.io/autoscaling/cluster-autoscaler:{tag}"


def test_preview_output_names_the_autoscaler(plan: Plan) -> None:
    assert plan.outputs["gpuNodeScaling"].startswith(
        "Cluster Autoscaler: GPU pool gpu 0 to 3 nodes x 1 GPU (at most 3 GPUs; maxGpus 3)"
    )
    assert "after 25 min" in plan.outputs["gpuNodeScaling"]
