"""Node pools: GPU pool tainted, spot, scales to zero, gpu_args as configured; system pool."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import build_tc, pool


def test_gpu_pool_tainted_and_labelled(tc_plan: Plan) -> None:
    gpu = pool(tc_plan, "gpu").inputs
    assert gpu["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert gpu["labels"] == {"gpuinfra.io/accelerator": "T4", "gpuinfra.io/pool": "gpu"}
    assert gpu["autoScalingConfig"]["instanceType"] == "GN7.2XLARGE32"


def test_gpu_pool_scales_to_zero_with_autoscaling(tc_plan: Plan) -> None:
    gpu = pool(tc_plan, "gpu")
    assert (gpu.inputs["minSize"], gpu.inputs["desiredCapacity"], gpu.inputs["maxSize"]) == (
        0,
        0,
        2,
    )
    assert gpu.inputs["enableAutoScale"] is True
    assert gpu.inputs["deleteKeepInstance"] is False
    assert gpu.ignore_changes == ["desiredCapacity"]


def test_gpu_pool_is_one_time_spot_with_a_price_cap(tc_plan: Plan) -> None:
    launch = pool(tc_plan, "gpu").inputs["autoScalingConfig"]
    assert launch["instanceChargeType"] == "SPOTPAID"
    assert launch["spotInstanceType"] == "one-time"
    assert launch["spotMaxPrice"] == "3.00"


def test_on_demand_gpu_pool_has_no_spot_settings() -> None:
    plan = build_tc({"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": None})
    launch = pool(plan, "gpu").inputs["autoScalingConfig"]
    assert launch["instanceChargeType"] == "POSTPAID_BY_HOUR"
    assert "spotInstanceType" not in launch and "spotMaxPrice" not in launch


def test_gpu_args_as_configured(tc_plan: Plan) -> None:
    gpu_args = pool(tc_plan, "gpu").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"]["version"] == "535.54.03"
    assert gpu_args["cuda"]["version"] == "12.2.0"
    assert gpu_args["cudnn"]["version"] == "8.9.4"
    assert gpu_args["migEnable"] is False


def test_driver_only_and_platform_default() -> None:
    only_driver = build_tc(
        {"gpuDriverVersion": "470.82.01", "gpuCudaVersion": None, "gpuCudnnVersion": None}
    )
    gpu_args = pool(only_driver, "gpu").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"]["version"] == "470.82.01"
    assert "cuda" not in gpu_args and "cudnn" not in gpu_args
    default = build_tc({"gpuDriverVersion": None, "gpuCudaVersion": None, "gpuCudnnVersion": None})
    assert "gpuArgs" not in pool(default, "gpu").inputs["nodeConfig"]


def test_image_disk_is_encrypted_and_mounted_for_containerd(tc_plan: Plan) -> None:
    gpu = pool(tc_plan, "gpu").inputs
    [disk] = gpu["autoScalingConfig"]["dataDisks"]
    assert disk["encrypt"] is True and disk["diskSize"] == 200
    [mount] = gpu["nodeConfig"]["dataDisks"]
    assert mount["mountTarget"] == "/var/lib/containerd" and mount["autoFormatAndMount"] is True


def test_system_pool_on_demand_untainted(tc_plan: Plan) -> None:
    system = pool(tc_plan, "system").inputs
    assert system["autoScalingConfig"]["instanceType"] == "S5.LARGE8"
    assert system["autoScalingConfig"]["instanceChargeType"] == "POSTPAID_BY_HOUR"
    assert not system.get("taints")
    assert "gpuArgs" not in system["nodeConfig"]
    assert system["minSize"] >= 1


def test_gpu_args_names_match_tkes_own_acceptance_test() -> None:
    """The exact gpu_args of terraform-provider-tencentcloud's node-pool acceptance test."""
    plan = build_tc(
        {"gpuDriverVersion": "470.182.03", "gpuCudaVersion": "11.4.3", "gpuCudnnVersion": "8.2.4"}
    )
    gpu_args = pool(plan, "gpu").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"] == {
        "name": "NVIDIA-Linux-x86_64-470.182.03.run",
        "version": "470.182.03",
    }
    assert gpu_args["cuda"] == {"name": "cuda_11.4.3_470.82.01_linux.run", "version": "11.4.3"}
    assert gpu_args["cudnn"] == {"name": "cudnn-11.4-linux-x64-v8.2.4.15.tgz", "version": "8.2.4"}
