"""Autoscaling settings: defaults, the maxGpus cap, and bad values refused naming their key."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.autoscaling.conftest import parse, problems
from tests.conftest import ROOT, flat_pool

CLOUD_STACKS = ("dev", "alicloud-dev", "tencentcloud-dev")


@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_defaults(stack: str) -> None:
    settings = parse(stack)
    autoscaling = settings.require_autoscaling()
    assert autoscaling.scale_down_delay_minutes == 10
    # maxGpus 0: the pools' maxima together (2 one-GPU nodes + 1 four-GPU node in every dev
    # stack), each pool's own maximum untouched.
    assert autoscaling.max_gpus == 6
    assert [p.size.max_nodes for p in settings.require_gpu_pools()] == [2, 1]


@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_max_gpus_lowers_the_single_pool_maximum(stack: str) -> None:
    settings = parse(stack, flat_pool(stack, {"gpuPoolMaxNodes": 6, "maxGpus": 3}))
    assert settings.require_gpu_pools()[0].size.max_nodes == 3
    assert settings.require_autoscaling().pool("gpu").max_nodes == 3


def test_max_gpus_counts_whole_nodes() -> None:
    # g5.12xlarge has 4 GPUs: a budget of 10 GPUs holds 2 nodes.
    settings = parse(
        "dev",
        flat_pool(
            "dev", {"gpuPoolInstanceType": "g5.12xlarge", "gpuPoolMaxNodes": 4, "maxGpus": 10}
        ),
    )
    assert settings.require_gpu_pools()[0].size.max_nodes == 2


@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_max_gpus_caps_the_sum_of_the_pools(stack: str) -> None:
    """Every autoscaler stops at each pool's maximum, never at a sum: so the pools' maxima
    must add up to the budget (2 x 1 + 1 x 4 = 6 GPUs in the dev stacks)."""
    assert parse(stack, {"maxGpus": 6}).require_autoscaling().max_gpus == 6
    found = problems(stack, {"maxGpus": 5})
    message = found["gpuinfra:maxGpus"]
    assert "could hold 6 GPUs together" in message
    assert "small 2 x 1" in message and "large 1 x 4" in message
    assert "lower the pools' maxNodes" in message


def test_max_gpus_is_checked_against_all_pools() -> None:
    # 7 GPUs: more than the dev pools can ever hold (2 x 1 + 1 x 4).
    message = problems("dev", {"maxGpus": 7})["gpuinfra:maxGpus"]
    assert "gpuPools[0].maxNodes 2 x 1" in message and "gpuPools[1].maxNodes 1 x 4" in message
    assert "= 6" in message


def test_pool_minimum_over_the_budget_names_the_pool_entry() -> None:
    pools = [
        {"name": "small", "instanceType": "g5.xlarge", "minNodes": 1, "maxNodes": 2},
        {"name": "large", "instanceType": "g5.12xlarge", "minNodes": 1, "maxNodes": 1},
    ]
    found = problems("dev", {"gpuPools": pools, "maxGpus": 3})
    assert "exceed maxGpus 3" in found["gpuinfra:gpuPools[1].minNodes"]


@pytest.mark.parametrize(
    ("overrides", "key", "words"),
    [
        ({"maxGpus": 2, "gpuPoolInstanceType": "g5.12xlarge"}, "maxGpus", "at least 4"),
        ({"maxGpus": -1}, "maxGpus", "at least 1"),
        ({"maxGpus": 5}, "maxGpus", "gpuPoolMaxNodes 2 x 1 GPUs per node = 2"),
        ({"gpuPoolScaleDownDelayMinutes": 0}, "gpuPoolScaleDownDelayMinutes", "between 1"),
        ({"gpuPoolScaleDownDelayMinutes": 2000}, "gpuPoolScaleDownDelayMinutes", "1440"),
        (
            {"maxGpus": 1, "gpuPoolMinNodes": 2, "gpuPoolDesiredNodes": 2},
            "gpuPoolMinNodes",
            "exceed maxGpus 1",
        ),
    ],
)
def test_bad_values_name_their_key(overrides: dict[str, object], key: str, words: str) -> None:
    found = problems("dev", flat_pool("dev", overrides))
    assert f"gpuinfra:{key}" in found, found
    assert words in found[f"gpuinfra:{key}"]


def test_aws_needs_a_pinned_autoscaler_for_the_minor() -> None:
    found = problems("dev", {"kubernetesVersion": "1.40"})
    assert "pinned minors: 1.31" in found["gpuinfra:kubernetesVersion"]


def test_existing_cluster_refuses_the_keys() -> None:
    found = problems("k8s-dev", {"maxGpus": 4, "gpuPoolScaleDownDelayMinutes": 5})
    assert "does not apply to cloud kubernetes" in found["gpuinfra:maxGpus"]
    assert "gpuinfra:gpuPoolScaleDownDelayMinutes" in found


@pytest.mark.parametrize(("key", "value"), [("maxGpus", 2), ("gpuPoolScaleDownDelayMinutes", 0)])
def test_preview_exits_2_naming_the_key(tmp_path: Path, key: str, value: int) -> None:
    """As a user runs it: `gpuinfra preview` of a stack with the bad value."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    config = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]
    del config["gpuinfra:gpuPools"]  # a single-pool stack file of the flat keys
    config["gpuinfra:gpuPoolInstanceType"] = "g5.12xlarge"  # 4 GPUs per node
    config[f"gpuinfra:{key}"] = value
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": config}))
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", "bad", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert f"gpuinfra:{key}" in result.stderr
    assert "Traceback" not in result.stderr
