"""Node groups: AL2023 NVIDIA GPU pool, spot or on-demand, scale to zero, tainted, IMDSv2."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.conftest import BuildStack

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def test_gpu_pools_from_dev_config(dev_plan: Plan) -> None:
    small = dev_plan.one(NODE_GROUP, "gpuinfra-dev-small-nodes").inputs
    assert small["amiType"] == "AL2023_x86_64_NVIDIA"
    assert small["capacityType"] == "SPOT"
    assert small["instanceTypes"] == ["g5.xlarge"]
    assert small["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    assert small["labels"]["gpuinfra.io/accelerator"] == "A10G"
    large = dev_plan.one(NODE_GROUP, "gpuinfra-dev-large-nodes").inputs
    assert large["amiType"] == "AL2023_x86_64_NVIDIA"
    assert large["capacityType"] == "ON_DEMAND"
    assert large["instanceTypes"] == ["g5.12xlarge"]
    assert large["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 1}


def test_gpu_pools_are_tainted(dev_plan: Plan, prod_plan: Plan) -> None:
    gpu = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
    for pool in ("small", "large"):
        taints = dev_plan.one(NODE_GROUP, f"gpuinfra-dev-{pool}-nodes").inputs["taints"]
        assert taints == [gpu, {"key": "gpuinfra.io/pool", "value": pool, "effect": "NO_SCHEDULE"}]
    # prod's single pool of the flat keys keeps the one taint it always had.
    taints = prod_plan.one(NODE_GROUP, "gpuinfra-prod-gpu-nodes").inputs["taints"]
    assert taints == [gpu]


def test_system_pool_is_on_demand_cpu_and_untainted(dev_plan: Plan) -> None:
    system = dev_plan.one(NODE_GROUP, "gpuinfra-dev-system-nodes").inputs
    assert system["amiType"] == "AL2023_x86_64_STANDARD"
    assert system["capacityType"] == "ON_DEMAND"
    assert system["instanceTypes"] == ["m6i.large"]
    assert not system.get("taints")
    assert system["scalingConfig"]["minSize"] >= 1


def test_prod_gpu_pool_is_on_demand_and_picked_by_model(prod_plan: Plan) -> None:
    gpu = prod_plan.one(NODE_GROUP, "gpuinfra-prod-gpu-nodes").inputs
    assert gpu["capacityType"] == "ON_DEMAND"
    assert gpu["instanceTypes"] == ["p4de.24xlarge"]
    assert gpu["labels"]["gpuinfra.io/accelerator"] == "A100-80GB"


def test_every_node_requires_imdsv2_with_one_hop(dev_plan: Plan, prod_plan: Plan) -> None:
    templates = dev_plan.of_type(TEMPLATE) + prod_plan.of_type(TEMPLATE)
    assert len(templates) == 5  # dev: system, small, large; prod: system, gpu
    for template in templates:
        metadata = template.inputs["metadataOptions"]
        assert metadata["httpTokens"] == "required"
        assert metadata["httpPutResponseHopLimit"] == 1


def test_root_volume_encrypted_gp3_sized_from_config(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("prod", {"gpuPoolDiskSizeGb": 321})
    [volume] = plan.one(TEMPLATE, "gpuinfra-prod-gpu-lt").inputs["blockDeviceMappings"]
    assert volume["deviceName"] == "/dev/xvda"
    assert volume["ebs"] == {
        "volumeSize": 321,
        "volumeType": "gp3",
        "encrypted": "true",
        "deleteOnTermination": "true",
    }


def test_node_groups_use_their_launch_template(dev_plan: Plan) -> None:
    for group in dev_plan.of_type(NODE_GROUP):
        template = dev_plan.one(TEMPLATE, group.name.replace("-nodes", "-lt"))
        assert group.inputs["launchTemplate"]["id"] == template.id
        assert "diskSize" not in group.inputs  # conflicts with a launch template


def test_node_role_has_only_node_policies(dev_plan: Plan) -> None:
    role = dev_plan.one("aws:iam/role:Role", "gpuinfra-dev-node-role")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "ec2.amazonaws.com"}]
    attached = sorted(
        a.inputs["policyArn"].rsplit("/", 1)[1]
        for a in dev_plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if a.inputs["role"] == role.outputs["name"]
    )
    assert attached == [
        "AmazonEC2ContainerRegistryReadOnly",
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
    ]
