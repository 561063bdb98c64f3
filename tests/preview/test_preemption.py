"""Preemption exposure: the work a spot preemption makes each training Job redo, priced."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuinfra import cost, planview
from gpuinfra.preemption import DRAINER_DAEMONSET, exposures
from gpuinfra.trainer_args import checkpoint_interval
from tests.conftest import ROOT, build, gpu_layer_plan

JOBS = [
    {"name": "one-gpu"},
    {"name": "two-nodes", "nodes": 2, "terminationGracePeriodSeconds": 300},
    {"name": "custom", "command": ["python", "train.py"], "args": ["--epochs", "3"]},
]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-m", "trainer", "--checkpoint-every-seconds=600"], 600.0),
        (["--checkpoint-every-seconds", "90.5", "--async-checkpoint"], 90.5),
        (["--checkpoint-every-seconds=600", "--checkpoint-every-seconds=300"], 300.0),
        (["--checkpoint-every-steps=100"], None),
        (["--checkpoint-every-seconds=0"], None),
        (["--checkpoint-every-seconds=soon"], None),
        (["--checkpoint-every-seconds"], None),
        (None, None),
    ],
)
def test_checkpoint_interval(args: list[str] | None, expected: float | None) -> None:
    assert checkpoint_interval(args) == expected


@pytest.fixture(scope="module")
def aws_jobs() -> tuple[planview.StackView, dict]:
    view = planview.from_plan(build("dev", {"trainingJobs": JOBS}), "aws")
    a = cost.assumptions(view)
    return view, {
        e.job.removeprefix("gpuinfra-dev-").removesuffix("-job"): e for e in exposures(view, a)
    }


def test_work_redone_on_a_hard_kill(aws_jobs: tuple) -> None:
    _, jobs = aws_jobs
    assert set(jobs) == {"one-gpu", "two-nodes", "custom"}
    one, two = jobs["one-gpu"], jobs["two-nodes"]
    # The default trainer arguments checkpoint every 600 s: up to 10 minutes on each GPU.
    assert (one.gpus, one.checkpoint_every_seconds, one.grace_seconds) == (1, 600.0, 120)
    assert one.lost_gpu_hours_worst == pytest.approx(600 / 3600)
    assert one.lost_gpu_hours_mean == pytest.approx(300 / 3600)
    # One lost node restarts the gang: both nodes' GPUs redo the interval.
    assert (two.gpus, two.grace_seconds) == (2, 300)
    assert two.lost_gpu_hours_worst == pytest.approx(2 * 600 / 3600)
    assert "async checkpoint" in one.note


def test_priced_at_the_gpu_pools_rate(aws_jobs: tuple) -> None:
    """The same $/GPU-hour the cost table charges for the Job's GPU pool (dev's first,
    `small`) at its maximum size."""
    view, jobs = aws_jobs
    report = cost.estimate(view)
    [pool] = [line for line in report.lines if line.what.startswith("GPU pool small")]
    max_nodes = int(pool.what.split()[3].split("/")[2])  # "GPU pool small 0/0/2 ..."
    per_gpu = pool.hourly_max / max_nodes  # g5.xlarge: 1 GPU per node
    for job in ("one-gpu", "two-nodes"):
        e = jobs[job]
        assert e.usd_per_gpu_hour == pytest.approx(per_gpu)
        assert e.lost_usd_worst == pytest.approx(e.lost_gpu_hours_worst * per_gpu)
        assert e.lost_usd_worst > 0
        assert (e.pool, e.spot) == ("small", True)


def test_each_job_is_priced_on_its_own_pool() -> None:
    """A Job on dev's on-demand `large` pool (4 x A10G per node) pays that pool's rate per GPU,
    and is said to face no spot reclaim; one on `small` pays the spot rate."""
    jobs = [{"name": "cheap"}, {"name": "big", "pool": "large"}]
    view = planview.from_plan(build("dev", {"trainingJobs": jobs}), "aws")
    a = cost.assumptions(view)
    found = {
        e.job.removeprefix("gpuinfra-dev-").removesuffix("-job"): e for e in exposures(view, a)
    }
    lines = {
        x.what.split()[2]: x for x in cost.estimate(view).lines if x.what.startswith("GPU pool ")
    }
    assert (found["big"].pool, found["big"].spot) == ("large", False)
    assert found["big"].gpus == 4  # the whole node of the pool it named
    assert found["big"].usd_per_gpu_hour == pytest.approx(lines["large"].hourly_max / 4)
    assert found["cheap"].usd_per_gpu_hour == pytest.approx(lines["small"].hourly_max / 2)
    assert found["big"].usd_per_gpu_hour > found["cheap"].usd_per_gpu_hour
    assert "on-demand: no spot reclaim" in found["big"].note


def test_custom_arguments_without_the_flag_are_unknown_not_zero(aws_jobs: tuple) -> None:
    _, jobs = aws_jobs
    custom = jobs["custom"]
    assert custom.checkpoint_every_seconds is None
    assert custom.lost_gpu_hours_worst is None and custom.lost_usd_worst is None
    assert "--checkpoint-every-seconds" in custom.note


def test_existing_cluster_counts_gpu_hours_without_a_price() -> None:
    view = planview.from_plan(build("k8s-dev"), "kubernetes")
    found = exposures(view, cost.assumptions(view))
    # by name: resnet50-single, -staged, -streamed (the dataset Jobs), -two-nodes
    assert [e.gpus for e in found] == [1, 1, 1, 2]
    assert all(e.lost_usd_worst is None and "no GPU pool" in e.note for e in found)
    assert [e.lost_gpu_hours_worst for e in found] == pytest.approx([1 / 6, 1 / 6, 1 / 6, 2 / 6])


def test_preview_reports_it_in_json_and_markdown() -> None:
    command = [
        sys.executable,
        "-m",
        "gpuinfra",
        "preview",
        "--stack",
        "k8s-dev",
        "--cwd",
        str(ROOT),
    ]
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, check=True)
    preemption = json.loads(as_json.stdout)["preemption"]
    assert [p["gpus"] for p in preemption] == [1, 1, 1, 2]
    md = subprocess.run([*command, "--format", "markdown"], capture_output=True, text=True)
    assert "#### Preemption exposure" in md.stdout
    # An existing cluster's Jobs run on GPU nodes of no pool gpuinfra knows: "-".
    assert "| gpuinfra-k8s-dev-resnet50-two-nodes-job | - | 2 | 600 s | 0.33 (0.17) |" in md.stdout


def test_who_drains_a_reclaimed_spot_node() -> None:
    from components.kubernetes.spot_reclaim_drainer import NAME

    assert DRAINER_DAEMONSET == NAME
    jobs = {"trainingJobs": [{"name": "one"}]}
    expected = {
        "dev": "EKS managed node group",
        "alicloud-dev": "gpuinfra spot-reclaim-drainer",
        "tencentcloud-dev": "gpuinfra spot-reclaim-drainer",
        "k8s-dev": None,
    }
    for stack, drainer in expected.items():
        plan = (
            build(stack)
            if stack == "k8s-dev"
            else gpu_layer_plan(stack, layer=jobs)
            if stack != "dev"
            else build(stack, jobs)
        )
        view = planview.from_plan(plan, plan.outputs["cloud"])
        found = exposures(view, cost.assumptions(view))
        assert found and {e.drained_by for e in found} == {drainer}, stack
