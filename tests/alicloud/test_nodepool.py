"""Node pools: a fixed CPU system pool; tainted, scale-to-zero GPU pools (dev: a spot `small`,
an on-demand `large`; a stack file of the flat keys: one pool `gpu`)."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.alicloud.conftest import PREFIX, STACK
from tests.conftest import ROOT, build, flat_pool

POOL = "alicloud:cs/nodePool:NodePool"
GPU = f"{PREFIX}-small-pool"
LARGE = f"{PREFIX}-large-pool"
FLAT = f"{PREFIX}-gpu-pool"
"""The one pool of a stack file of the flat `gpuPool*` keys."""


def _labels(pool: dict) -> dict[str, str]:
    return {label["key"]: label["value"] for label in pool["labels"]}


def test_gpu_pool_types_from_the_catalog_and_scale_to_zero(ali_plan: Plan) -> None:
    gpu = ali_plan.one(POOL, GPU).inputs
    assert gpu["instanceTypes"] == ["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge"]
    assert gpu["scalingConfig"] == {"enable": True, "minSize": 0, "maxSize": 2, "type": "gpu"}
    assert "desiredSize" not in gpu  # the autoscaler owns the size
    assert gpu["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "gpuinfra.io/pool", "value": "small", "effect": "NoSchedule"},
    ]
    large = ali_plan.one(POOL, LARGE).inputs
    assert large["instanceTypes"] == ["ecs.gn7i-c32g1.32xlarge"]
    assert large["scalingConfig"] == {"enable": True, "minSize": 0, "maxSize": 1, "type": "gpu"}
    assert large["taints"][1] == {
        "key": "gpuinfra.io/pool",
        "value": "large",
        "effect": "NoSchedule",
    }


def test_gpu_pool_labels_pin_the_driver(ali_plan: Plan) -> None:
    labels = _labels(ali_plan.one(POOL, GPU).inputs)
    assert labels["ack.aliyun.com/nvidia-driver-version"] == "550.144.03"
    assert labels["gpuinfra.io/accelerator"] == "A10"
    assert _labels(ali_plan.one(POOL, LARGE).inputs)["ack.aliyun.com/nvidia-driver-version"] == (
        "550.144.03"
    )
    unpinned = build(STACK, {"gpuDriverVersion": None})
    assert "ack.aliyun.com/nvidia-driver-version" not in _labels(unpinned.one(POOL, GPU).inputs)


def test_spot_as_price_go_with_on_demand_compensation(ali_plan: Plan) -> None:
    gpu = ali_plan.one(POOL, GPU).inputs
    assert gpu["spotStrategy"] == "SpotAsPriceGo"
    assert "spotPriceLimits" not in gpu
    assert gpu["multiAzPolicy"] == "COST_OPTIMIZED"
    assert gpu["compensateWithOnDemand"] is True
    assert gpu["onDemandPercentageAboveBaseCapacity"] == "0"


def test_spot_with_a_price_limit_for_every_type() -> None:
    plan = build(
        STACK,
        flat_pool(
            STACK,
            {
                "gpuPoolSpotStrategy": "SpotWithPriceLimit",
                "gpuPoolSpotMaxPrice": "3.2",
                "gpuPoolOnDemandFallback": False,
            },
        ),
    )
    gpu = plan.one(POOL, FLAT).inputs
    assert gpu["spotStrategy"] == "SpotWithPriceLimit"
    assert gpu["spotPriceLimits"] == [
        {"instanceType": "ecs.gn7i-c8g1.2xlarge", "priceLimit": "3.2"},
        {"instanceType": "ecs.gn7i-c16g1.4xlarge", "priceLimit": "3.2"},
    ]
    # Not sent when off: Create reads it with d.GetOk, a False would never reach the API.
    assert "compensateWithOnDemand" not in gpu


def test_on_demand_pool_has_no_spot_settings(ali_plan: Plan) -> None:
    flat = build(STACK, flat_pool(STACK, {"gpuPoolCapacityType": "onDemand"}))
    for gpu in (ali_plan.one(POOL, LARGE).inputs, flat.one(POOL, FLAT).inputs):
        assert gpu["spotStrategy"] == "NoSpot"
        assert "compensateWithOnDemand" not in gpu and "spotPriceLimits" not in gpu


def test_every_node_has_an_encrypted_essd_alinux3_containerd(ali_plan: Plan) -> None:
    pools = ali_plan.of_type(POOL)
    assert len(pools) == 3
    for pool in pools:
        inputs = pool.inputs
        assert inputs["systemDiskCategory"] == "cloud_essd"
        assert inputs["systemDiskEncrypted"] is True
        assert inputs["imageType"] == "AliyunLinux3"
        assert inputs["runtimeName"] == "containerd"
        assert inputs["instanceMetadataOptions"] == {"httpTokens": "required"}
    assert ali_plan.one(POOL, GPU).inputs["systemDiskSize"] == 200


def test_system_pool_is_fixed_size_cpu_and_untainted(ali_plan: Plan) -> None:
    system = ali_plan.one(POOL, f"{PREFIX}-system-pool").inputs
    assert system["instanceTypes"] == ["ecs.g7.xlarge"]
    assert system["desiredSize"] == "2"
    assert "scalingConfig" not in system
    assert system["spotStrategy"] == "NoSpot"
    assert not system.get("taints")


def test_extra_types_are_documented_as_cheapest_per_vcpu_not_list_order() -> None:
    """Finding 7: COST_OPTIMIZED buys by vCPU unit price (CreateClusterNodePool), so the
    docs must not promise list order."""
    from components.settings.schema import KEYS

    [extra] = [k for k in KEYS if k.name == "gpuPoolExtraInstanceTypes"]
    assert "lowest price per vCPU" in extra.description
    assert "tried when it has no spot stock" not in extra.description
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "lowest price per vCPU" in readme
