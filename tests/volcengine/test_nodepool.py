"""Node pools: the GPU pools tainted, labelled, spot (SpotAsPriceGo) or pay-as-you-go, scaling
from zero with VKE's autoscaler; the system pool pay-as-you-go; none resets the autoscaler's
count."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.volcengine.conftest import SECURITY_GROUP, build_ve, pool


def test_gpu_pool_is_spot_tainted_and_scales_from_zero(ve_plan: Plan) -> None:
    gpu = pool(ve_plan, "spot")
    node = gpu.inputs["nodeConfig"]
    assert node["instanceTypeIds"] == ["ecs.gni2.3xlarge"]
    assert (node["instanceChargeType"], node["spotStrategy"]) == ("PostPaid", "SpotAsPriceGo")
    assert node["instancesDistribution"] == {
        "capacityRebalance": True,
        "compensateWithOnDemand": False,
    }
    scaling = gpu.inputs["autoScaling"]
    assert scaling["enabled"] is True
    assert (scaling["minReplicas"], scaling["desiredReplicas"], scaling["maxReplicas"]) == (0, 0, 2)
    k8s = gpu.inputs["kubernetesConfig"]
    assert k8s["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "gpuinfra.io/pool", "value": "spot", "effect": "NoSchedule"},
    ]
    assert {"key": "gpuinfra.io/accelerator", "value": "A10"} in k8s["labels"]
    assert {"key": "gpuinfra.io/pool", "value": "spot"} in k8s["labels"]
    assert gpu.inputs["name"] == "spot"  # the pool's VKE name is its own
    assert "autoScaling.desiredReplicas" in gpu.ignore_changes
    assert node["publicAccessEnabled"] is False


def test_on_demand_pool_uses_no_spot(ve_plan: Plan) -> None:
    plan = build_ve({"gpuPoolCapacityType": "onDemand"})
    for node_pool in (pool(plan, "gpu"), pool(ve_plan, "ondemand")):
        node = node_pool.inputs["nodeConfig"]
        assert node["spotStrategy"] == "NoSpot"
        assert "instancesDistribution" not in node
    assert plan.outputs["gpuPools"]["gpu"]["capacityType"] == "onDemand"
    assert ve_plan.outputs["gpuPools"]["ondemand"]["nodes"] == "0 to 4"
    assert ve_plan.outputs["gpuPools"]["spot"]["capacityType"] == "spot"


def test_maxgpus_lowers_the_pool_maximum() -> None:
    plan = build_ve({"gpuPoolMaxNodes": 4, "maxGpus": 3})
    assert pool(plan, "gpu").inputs["autoScaling"]["maxReplicas"] == 3


def test_system_pool_and_disks(ve_plan: Plan) -> None:
    system = pool(ve_plan, "system")
    node = system.inputs["nodeConfig"]
    assert node["spotStrategy"] == "NoSpot"
    assert node["instanceTypeIds"] == ["ecs.g4i.2xlarge"]
    assert system.inputs["kubernetesConfig"]["taints"] == []
    gpu_node = pool(ve_plan, "spot").inputs["nodeConfig"]
    assert gpu_node["dataVolumes"] == [
        {"type": "ESSD_PL0", "size": 200, "mountPoint": "/var/lib/containerd"}
    ]
    assert gpu_node["additionalContainerStorageEnabled"] is True


def test_pools_sit_in_the_node_and_admin_groups(ve_plan: Plan) -> None:
    groups = {g.name: g.outputs["securityGroupId"] for g in ve_plan.of_type(SECURITY_GROUP)}
    for role in ("system", "spot", "ondemand"):
        ids = pool(ve_plan, role).inputs["nodeConfig"]["security"]["securityGroupIds"]
        assert ids == [
            groups["gpuinfra-volcengine-dev-nodes-sg"],
            groups["gpuinfra-volcengine-dev-admin-sg"],
        ]
