"""The preview's cost estimate: idle with GPU pools at zero, worst case at maxGpus."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuinfra.cost import CostLine, estimate
from gpuinfra.planview import from_plan
from tests.conftest import build, flat_pool

TODAY = dt.date(2026, 11, 30)
GPU_POOLS = {
    "dev": ("aws", "NodeGroup", "-gpu-nodes"),
    "alicloud-dev": ("alicloud", "NodePool", "-gpu-pool"),
    "tencentcloud-dev": ("tencentcloud", "NodePool", "-gpu-pool"),
}


def _gpu_line(stack: str, overrides: dict[str, object]) -> CostLine:
    cloud, type_suffix, name_part = GPU_POOLS[stack]
    report = estimate(from_plan(build(stack, flat_pool(stack, overrides)), cloud), TODAY)
    [gpu] = [x for x in report.lines if x.type.endswith(type_suffix) and name_part in x.resource]
    return gpu


@pytest.mark.parametrize("stack", sorted(GPU_POOLS))
def test_every_cloud_states_idle_and_worst_case(stack: str) -> None:
    gpu = _gpu_line(stack, {"gpuPoolMaxNodes": 6, "maxGpus": 3})
    assert "0 nodes (autoscaled down)" in gpu.note
    assert "3 nodes x 1 = 3 GPUs" in gpu.note


def test_aws_idle_is_zero_and_max_gpus_caps_the_worst_case() -> None:
    # AWS's catalog has list prices; Alibaba's and Tencent's GPU prices are "unknown" there.
    capped = _gpu_line("dev", {"gpuPoolMaxNodes": 6, "maxGpus": 3})
    full = _gpu_line("dev", {"gpuPoolMaxNodes": 6})
    assert capped.hourly_idle == 0
    assert capped.hourly_max is not None and capped.hourly_max > 0
    assert full.hourly_max == pytest.approx(capped.hourly_max * 2)  # 6 nodes without the cap


@pytest.mark.parametrize("stack", sorted(GPU_POOLS))
def test_each_pool_states_its_own_worst_case(stack: str) -> None:
    """Two pools, two lines: each at its own maximum (dev stacks: 2 x 1 GPU, 1 x 4 GPUs), and
    the GPU-hours budget priced once, on the first pool."""
    cloud, _, _ = GPU_POOLS[stack]
    report = estimate(from_plan(build(stack), cloud), TODAY)
    lines = {x.what.split()[2]: x for x in report.lines if x.what.startswith("GPU pool ")}
    assert set(lines) == {"small", "large"}
    assert "2 nodes x 1 = 2 GPUs" in lines["small"].note
    assert "1 nodes x 4 = 4 GPUs" in lines["large"].note
    assert "+ 100 GPU hours" in lines["small"].note
    assert "+ 0 GPU hours" in lines["large"].note
    assert "priced on the first GPU pool" in lines["large"].note
    assert "(spot)" in lines["small"].what and "(on-demand)" in lines["large"].what
