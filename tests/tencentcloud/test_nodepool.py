"""Node pools: GPU pool tainted, spot, scales to zero, gpu_args as configured; system pool."""

from __future__ import annotations

import pytest

from components.settings import SettingsError
from gpuinfra.engine import Plan
from gpuinfra.provider_rules import check_resources
from tests.tencentcloud.conftest import SECURITY_GROUP, T, build_tc, pool

KEY_PAIR = T + "Key/pair:Pair"


def test_pools_list_security_groups_in_order(tc_plan: Plan) -> None:
    """Finding 1: Create refuses `security_group_ids`; the ordered field is sent instead,
    the node group first."""
    groups = {g.name: g.id for g in tc_plan.of_type(SECURITY_GROUP)}
    for role in ("system", "small", "large"):
        launch = pool(tc_plan, role).inputs["autoScalingConfig"]
        assert "securityGroupIds" not in launch
        assert launch["orderlySecurityGroupIds"] == [
            groups["gpuinfra-tencentcloud-dev-nodes-sg"],
            groups["gpuinfra-tencentcloud-dev-admin-sg"],
        ]


def test_pools_log_in_with_a_generated_key_pair(tc_plan: Plan) -> None:
    """Finding 2: Create needs key_ids or a password; nodes get a CVM-generated key pair, no
    password anywhere."""
    key = tc_plan.one(KEY_PAIR, "gpuinfra-tencentcloud-dev-nodes-key")
    assert "publicKey" not in key.inputs and key.outputs["privateKey"]  # CVM generates it
    assert len(key.inputs["keyName"]) <= 25
    for role in ("system", "small", "large"):
        launch = pool(tc_plan, role).inputs["autoScalingConfig"]
        assert launch["keyIds"] == [key.id]
        assert "password" not in launch


def test_pool_names_fit_tke(tc_plan: Plan) -> None:
    """Finding 4: TKE pool names have at most 25 characters; names are per cluster. A GPU pool's
    TKE name is its own (at most 16 characters, settings check); the single pool of the flat
    keys keeps the name `gpu` it always had."""
    assert pool(tc_plan, "system").inputs["name"] == "system"
    assert pool(tc_plan, "small").inputs["name"] == "small"
    assert pool(tc_plan, "large").inputs["name"] == "large"
    assert pool(build_tc({"gpuPoolMaxNodes": 2}), "gpu").inputs["name"] == "gpu"


def test_every_name_fits_for_the_longest_prefix() -> None:
    """Finding 4: a 32-character namePrefix (the most settings allow) still gives names the
    provider accepts, the workstation's key pair included (the rules ran on this plan)."""
    prefix = "p" * 20 + "-" + "q" * 11
    assert len(prefix) == 32
    plan = build_tc(
        {
            "namePrefix": prefix,
            "workstationEnabled": True,
            "workstationSshPublicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0"
            "v8kqfZr3X0yq7xWQy1u3z u@h",
        }
    )
    assert check_resources(plan.resources, plan.config) == []
    names = sorted(k.inputs["keyName"] for k in plan.of_type(KEY_PAIR))
    assert len(names) == 2 and len(set(names)) == 2
    assert all(len(n) <= 25 for n in names)
    again = build_tc({"namePrefix": prefix})
    assert again.one(KEY_PAIR).inputs["keyName"] in names  # the same name every run


def test_spot_pool_without_a_price_is_refused_in_settings() -> None:
    """Finding 5: the provider always sends SpotOptions with the price: settings refuse an
    empty one (exit 2), before any resource."""
    with pytest.raises(SettingsError) as error:
        build_tc({"gpuPoolSpotMaxPrice": None})
    assert [p.key for p in error.value.problems] == ["gpuinfra:gpuPoolSpotMaxPrice"]
    assert "required for a spot GPU pool" in str(error.value)
    pools = [{"name": "spot", "instanceType": "GN7.2XLARGE32"}]
    with pytest.raises(SettingsError) as error:
        build_tc({"gpuPools": pools})
    assert [p.key for p in error.value.problems] == ["gpuinfra:gpuPools[0].spotMaxPrice"]


def test_containerd_root_is_the_encrypted_data_disk(tc_plan: Plan) -> None:
    """Finding 9: the provider sends docker_graph_path (default /var/lib/docker, on the system
    disk); it is set to the encrypted data disk's mount point."""
    for role in ("system", "small", "large"):
        node_config = pool(tc_plan, role).inputs["nodeConfig"]
        [mount] = node_config["dataDisks"]
        assert node_config["dockerGraphPath"] == mount["mountTarget"] == "/var/lib/containerd"


def test_gpu_pools_tainted_and_labelled(tc_plan: Plan) -> None:
    for name, instance_type, capacity in (
        ("small", "GN7.2XLARGE32", "spot"),
        ("large", "GN7.20XLARGE320", "onDemand"),
    ):
        gpu = pool(tc_plan, name).inputs
        assert gpu["taints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
            {"key": "gpuinfra.io/pool", "value": name, "effect": "NoSchedule"},
        ]
        assert gpu["labels"] == {
            "gpuinfra.io/accelerator": "T4",
            "gpuinfra.io/pool": name,
            "gpuinfra.io/gpu": "true",
            "gpuinfra.io/capacity-type": capacity,
        }
        assert gpu["autoScalingConfig"]["instanceType"] == instance_type


def test_single_pool_keeps_its_labels_and_taint() -> None:
    """A stack file of the flat keys: the one pool `gpu`, labelled and tainted as before."""
    gpu = pool(build_tc({"gpuPoolMaxNodes": 2}), "gpu").inputs
    assert gpu["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert gpu["labels"] == {"gpuinfra.io/accelerator": "T4", "gpuinfra.io/pool": "gpu"}


def test_gpu_pool_scales_to_zero_with_autoscaling(tc_plan: Plan) -> None:
    large = pool(tc_plan, "large")
    assert (large.inputs["minSize"], large.inputs["maxSize"]) == (0, 1)
    assert large.inputs["enableAutoScale"] is True
    gpu = pool(tc_plan, "small")
    assert (gpu.inputs["minSize"], gpu.inputs["desiredCapacity"], gpu.inputs["maxSize"]) == (
        0,
        0,
        2,
    )
    assert gpu.inputs["enableAutoScale"] is True
    assert gpu.inputs["deleteKeepInstance"] is False
    assert gpu.ignore_changes == ["desiredCapacity"]


def test_gpu_pool_is_one_time_spot_with_a_price_cap(tc_plan: Plan) -> None:
    launch = pool(tc_plan, "small").inputs["autoScalingConfig"]
    assert launch["instanceChargeType"] == "SPOTPAID"
    assert launch["spotInstanceType"] == "one-time"
    assert launch["spotMaxPrice"] == "3.00"


def test_on_demand_gpu_pool_has_no_spot_settings(tc_plan: Plan) -> None:
    plan = build_tc({"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": None})
    for launch in (
        pool(plan, "gpu").inputs["autoScalingConfig"],
        pool(tc_plan, "large").inputs["autoScalingConfig"],
    ):
        assert launch["instanceChargeType"] == "POSTPAID_BY_HOUR"
        assert "spotInstanceType" not in launch and "spotMaxPrice" not in launch


def test_gpu_args_as_configured(tc_plan: Plan) -> None:
    assert pool(tc_plan, "large").inputs["nodeConfig"]["gpuArgs"]["driver"]["version"] == (
        "535.54.03"
    )
    gpu_args = pool(tc_plan, "small").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"]["version"] == "535.54.03"
    assert gpu_args["cuda"]["version"] == "12.2.0"
    assert gpu_args["cudnn"]["version"] == "8.9.4"
    assert gpu_args["migEnable"] is False


def test_driver_only_and_platform_default() -> None:
    only_driver = build_tc(
        {"gpuDriverVersion": "470.82.01", "gpuCudaVersion": None, "gpuCudnnVersion": None}
    )
    gpu_args = pool(only_driver, "small").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"]["version"] == "470.82.01"
    assert "cuda" not in gpu_args and "cudnn" not in gpu_args
    default = build_tc({"gpuDriverVersion": None, "gpuCudaVersion": None, "gpuCudnnVersion": None})
    assert "gpuArgs" not in pool(default, "small").inputs["nodeConfig"]


def test_image_disk_is_encrypted_and_mounted_for_containerd(tc_plan: Plan) -> None:
    gpu = pool(tc_plan, "small").inputs
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
    gpu_args = pool(plan, "small").inputs["nodeConfig"]["gpuArgs"]
    assert gpu_args["driver"] == {
        "name": "NVIDIA-Linux-x86_64-470.182.03.run",
        "version": "470.182.03",
    }
    assert gpu_args["cuda"] == {"name": "cuda_11.4.3_470.82.01_linux.run", "version": "11.4.3"}
    assert gpu_args["cudnn"] == {"name": "cudnn-11.4-linux-x64-v8.2.4.15.tgz", "version": "8.2.4"}
