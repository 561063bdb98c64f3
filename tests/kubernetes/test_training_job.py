"""Training Jobs survive spot preemption: restart semantics, multi-node rendezvous, settings."""

from __future__ import annotations

import pytest

from components.settings import SettingsError
from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import BuildStack, build, flat_pool, gpu_layer_plan

JOB = "kubernetes:batch/v1:Job"


def _job(plan: Plan, name: str) -> RecordedResource:
    [job] = [r for r in plan.of_type(JOB) if r.inputs["metadata"]["name"] == name]
    return job


def test_restart_semantics(k8s_plan: Plan) -> None:
    for name in ("resnet50-single", "resnet50-two-nodes"):
        spec = _job(k8s_plan, name).inputs["spec"]
        pod = spec["template"]["spec"]
        assert pod["restartPolicy"] == "Never"
        assert spec["podReplacementPolicy"] == "Failed"
        rules = spec["podFailurePolicy"]["rules"]
        assert {
            "action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
        } in rules
        fail = [r for r in rules if r["action"] == "FailJob"]
        assert fail[0]["onExitCodes"]["values"] == [64]
        ignored_codes = [
            r["onExitCodes"]["values"]
            for r in rules
            if r["action"] == "Ignore" and "onExitCodes" in r
        ]
        assert ignored_codes == [[75]]
        [container] = pod["containers"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
        [shm] = [v for v in pod["volumes"] if v["name"] == "dshm"]
        assert shm["emptyDir"]["medium"] == "Memory"
        assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
        assert pod["priorityClassName"] == "gpuinfra-training"
        assert pod["serviceAccountName"] == "trainer"
        annotations = spec["template"]["metadata"]["annotations"]
        assert annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"


def test_single_node_is_a_plain_job(k8s_plan: Plan) -> None:
    spec = _job(k8s_plan, "resnet50-single").inputs["spec"]
    assert spec["completionMode"] == "NonIndexed"
    assert spec["completions"] == spec["parallelism"] == 1
    assert spec["backoffLimit"] == 3
    assert "subdomain" not in spec["template"]["spec"]
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 120
    args = spec["template"]["spec"]["containers"][0]["args"]
    assert "--standalone" in args and "--checkpoint-uri=$(CHECKPOINT_URI)" in args


def test_multi_node_is_indexed_with_a_headless_service(k8s_plan: Plan) -> None:
    job = _job(k8s_plan, "resnet50-two-nodes")
    spec = job.inputs["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 2
    assert spec["backoffLimitPerIndex"] == 2 and "backoffLimit" not in spec
    pod = spec["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 180
    [service] = [
        r for r in k8s_plan.of_type("kubernetes:core/v1:Service")
        if r.inputs["metadata"]["name"] == pod["subdomain"]
    ]  # fmt: skip
    assert service.inputs["spec"]["clusterIP"] == "None"
    assert service.inputs["spec"]["selector"] == {"gpuinfra.io/training-job": "resnet50-two-nodes"}
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["MASTER_ADDR"]["value"] == f"resnet50-two-nodes-0.{pod['subdomain']}"
    assert env["NNODES"]["value"] == "2"
    assert "job-completion-index" in env["NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert env["CHECKPOINT_URI"]["value"] == "s3://my-training-bucket/runs/resnet50-two-nodes"
    assert env["NCCL_DEBUG"]["value"] == "WARN"


def test_aws_job_checkpoints_into_the_stack_bucket(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev", {"trainingJobs": [{"name": "smoke", "activeDeadlineSeconds": 3600}]}
    )
    job = _job(plan, "smoke")
    env = {
        e["name"]: e["value"]
        for e in job.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
        if "value" in e
    }
    assert env["CHECKPOINT_URI"] == f"{plan.outputs['bucketUri']}/smoke"
    assert job.inputs["spec"]["activeDeadlineSeconds"] == 3600


def _problems(stack: str, overrides: dict) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        build(stack, overrides)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("job", "key", "fragment"),
    [
        ({"name": "a", "nodes": 0}, "trainingJobs[0].nodes", "between 1 and 512"),
        # dev's pools: small (1 x A10G per node), large (4 x A10G per node)
        (
            {"name": "a", "gpusPerNode": 8},
            "trainingJobs[0].gpusPerNode",
            "job 'a' fits no GPU pool: it asks 8 GPUs per node",
        ),
        (
            {"name": "a", "pool": "small", "gpusPerNode": 2},
            "trainingJobs[0].gpusPerNode",
            "a node of pool small has 1",
        ),
        ({"name": "a", "pool": "huge"}, "trainingJobs[0].pool", "names no GPU pool"),
        ({"name": "a", "gpuModel": "H100"}, "trainingJobs[0].gpuModel", "which no GPU pool has"),
        (
            {"name": "a", "pool": "large", "gpuModel": "L4"},
            "trainingJobs[0].gpuModel",
            "pool large has A10G GPUs",
        ),
        (
            {"name": "a", "terminationGracePeriodSeconds": 10},
            "trainingJobs[0].terminationGracePeriodSeconds",
            "emergency checkpoint",
        ),
        ({"name": "a", "gpus": 1}, "trainingJobs[0].gpus", "unknown field"),
        ({"name": "Bad_Name"}, "trainingJobs[0].name", "lowercase"),
        ({"name": "a", "image": "pytorch/pytorch:latest"}, "trainingJobs[0].image", ":latest"),
        ({"name": "a", "image": "myrepo/trainer"}, "trainingJobs[0].image", "no tag"),
        (
            {"name": "a", "nonRetryableExitCodes": [75]},
            "trainingJobs[0].nonRetryableExitCodes",
            "must be retried",
        ),
        ({"name": "a", "env": {"MASTER_ADDR": "x"}}, "trainingJobs[0].env", "set by gpuinfra"),
        (
            {"name": "a", "env": {"STORAGE_ENDPOINT_URL": "x"}},
            "trainingJobs[0].env",
            "set by gpuinfra",
        ),
        ({"name": "a", "memory": "lots"}, "trainingJobs[0].memory", "quantity"),
        ({"name": "a", "sharding": "zero3"}, "trainingJobs[0].sharding", "ddp or fsdp"),
        (
            {"name": "a", "globalBatchSize": 100},
            "trainingJobs[0].globalBatchSize",
            "multiple of microBatchSize 64 x 1 GPU(s) = 64",
        ),
        ({"name": "a", "microBatchSize": 0}, "trainingJobs[0].microBatchSize", "between 1"),
        (
            {"name": "a", "args": ["-m", "trainer"], "sharding": "fsdp"},
            "trainingJobs[0].sharding",
            "with `args` set",
        ),
        # the default fsdp command trains GPT on synthetic tokens; a dataset holds images
        (
            {"name": "a", "sharding": "fsdp", "dataset": {"source": "datasets/imagenet"}},
            "trainingJobs[0].sharding",
            "only the image models read",
        ),
        # /dev/shm counts against the memory limit: sized like the limit, it leaves nothing.
        (
            {"name": "a", "shmSizeGi": 16, "memory": "16Gi"},
            "trainingJobs[0].shmSizeGi",
            "at most half of it (8 GiB)",
        ),
        (
            {"name": "a", "shmSizeGi": 9, "memory": "16000Mi"},
            "trainingJobs[0].shmSizeGi",
            "memory-backed",
        ),
    ],
)
def test_bad_job_settings_name_the_key(job: dict, key: str, fragment: str) -> None:
    [problem] = _problems("dev", {"trainingJobs": [job]})
    assert problem.startswith(f"gpuinfra:{key} =") and fragment in problem


def test_duplicate_job_names(build_stack_plan: BuildStack) -> None:
    [problem] = _problems("dev", {"trainingJobs": [{"name": "a"}, {"name": "a"}]})
    assert "unique" in problem


def _pod(plan: Plan, name: str) -> dict:
    pod: dict = _job(plan, name).inputs["spec"]["template"]["spec"]
    return pod


def test_jobs_choose_their_pool(build_stack_plan: BuildStack) -> None:
    """dev has `small` (1 x A10G, spot) then `large` (4 x A10G, on-demand): a Job that names
    nothing runs on the first pool; 4 GPUs per node, on the first pool with 4; `pool:` or
    `gpuModel:` choose. Each Job's selector and tolerations are its pool's."""
    jobs = [
        {"name": "plain"},
        {"name": "four", "gpusPerNode": 4},
        {"name": "named", "pool": "large"},
        {"name": "model", "gpuModel": "A10G"},
    ]
    plan = build_stack_plan("dev", {"trainingJobs": jobs})
    expected = {"plain": "small", "four": "large", "named": "large", "model": "small"}
    for job, pool in expected.items():
        pod = _pod(plan, job)
        assert pod["nodeSelector"] == {"gpuinfra.io/accelerator": "A10G", "gpuinfra.io/pool": pool}
        assert pod["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "gpuinfra.io/pool", "operator": "Exists", "effect": "NoSchedule"},
        ]
    [container] = _pod(plan, "four")["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert "--nproc-per-node=4" in container["args"]
    # A Job that names its pool takes the whole node by default.
    [container] = _pod(plan, "named")["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"


def test_gpus_per_node_follows_a_single_pool(build_stack_plan: BuildStack) -> None:
    """A single-pool stack file (flat gpuPool* keys): Jobs go where they always went."""
    plan = build_stack_plan(
        "dev",
        flat_pool(
            "dev",
            {
                "gpuPoolInstanceType": "g5.12xlarge",
                "trainingJobs": [{"name": "four", "gpusPerNode": 4}],
            },
        ),
    )
    pod = _pod(plan, "four")
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert pod["nodeSelector"] == {"gpuinfra.io/accelerator": "A10G", "gpuinfra.io/pool": "gpu"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    [problem] = _problems(
        "dev", flat_pool("dev", {"trainingJobs": [{"name": "a", "gpusPerNode": 4}]})
    )
    assert problem.startswith("gpuinfra:trainingJobs[0].gpusPerNode =") and "fits no" in problem


@pytest.mark.parametrize(
    ("stack", "pools"),
    [
        ("dev", "small (1 x A10G per node), large (4 x A10G per node)"),
        ("alicloud-dev", "small (1 x A10 per node), large (4 x A10 per node)"),
        ("tencentcloud-dev", "small (1 x T4 per node), large (4 x T4 per node)"),
        ("volcengine-dev", "spot (1 x A10 per node), ondemand (1 x A10 per node)"),
    ],
)
def test_every_cloud_refuses_a_job_no_pool_fits(stack: str, pools: str) -> None:
    """Inline (dev, tencentcloud-dev) in the stack's settings; separate (alicloud-dev,
    volcengine-dev) in the GPU-layer stack, against the pools its cluster stack's handle lists."""
    with pytest.raises(SettingsError) as caught:
        gpu_layer_plan(stack, layer={"trainingJobs": [{"name": "big", "gpusPerNode": 8}]})
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuinfra:trainingJobs[0].gpusPerNode = 8")
    assert "job 'big' fits no GPU pool" in problem and pools in problem


def test_sharding_and_global_batch_become_trainer_arguments(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev",
        flat_pool(
            "dev",
            {
                "gpuPoolInstanceType": "g5.12xlarge",
                "trainingJobs": [
                    {
                        "name": "llm",
                        "nodes": 2,
                        "gpusPerNode": 4,
                        "sharding": "fsdp",
                        "microBatchSize": 8,
                        "globalBatchSize": 512,  # 8 per GPU x 8 GPUs x 8 accumulation rounds
                    },
                    {"name": "cnn", "sharding": "ddp", "globalBatchSize": 256},
                ],
            },
        ),
    )
    llm = _job(plan, "llm").inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    trainer = llm[llm.index("trainer") + 1 :]
    assert trainer[:4] == [
        "--model=gpt",
        "--sharding=fsdp",
        "--batch-size=8",
        "--global-batch-size=512",
    ]
    cnn = _job(plan, "cnn").inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--model=resnet50" in cnn and "--global-batch-size=256" in cnn
    assert not any(a.startswith(("--sharding", "--batch-size")) for a in cnn)


def test_a_dataset_and_a_global_batch_both_reach_the_trainer(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev",
        {
            "trainingJobs": [
                {
                    "name": "imagenet",
                    "sharding": "ddp",
                    "microBatchSize": 32,
                    "globalBatchSize": 256,  # 32 x 1 GPU x 8 accumulation rounds
                    "dataset": {"source": "datasets/imagenet", "access": "stream"},
                }
            ],
        },
    )
    args = _job(plan, "imagenet").inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    trainer = args[args.index("trainer") + 1 :]
    assert trainer[:3] == ["--model=resnet50", "--batch-size=32", "--global-batch-size=256"]
    assert trainer[-1] == "--data-dir=$(DATASET_DIR)"


def test_existing_cluster_refuses_cloud_keys_and_needs_a_bucket_for_jobs() -> None:
    problems = _problems("k8s-dev", {"gpuPoolInstanceType": "g5.xlarge", "existingBucketUri": None})
    assert any(
        p.startswith('gpuinfra:gpuPoolInstanceType = "g5.xlarge": does not apply') for p in problems
    )
    assert any(p.startswith("gpuinfra:existingBucketUri = (not set): required") for p in problems)
    [problem] = _problems("k8s-dev", {"existingBucketUri": "ftp://x"})
    assert "bucket URI" in problem


def test_bad_job_settings_exit_2_in_the_preview(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(root / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    config = yaml.safe_load((root / "Pulumi.k8s-dev.yaml").read_text())["config"]
    config["gpuinfra:trainingJobs"] = [
        {
            "name": "x",
            "nodes": 0,
            "gpusPerNode": 2,
            "terminationGracePeriodSeconds": 5,
            "colour": "red",
        }
    ]
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": config}))
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", "bad", "--cwd", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    for field in ("nodes", "gpusPerNode", "terminationGracePeriodSeconds", "colour"):
        assert f"gpuinfra:trainingJobs[0].{field}" in result.stderr
    assert "Traceback" not in result.stderr


def _env(job: RecordedResource) -> dict[str, str]:
    [container] = job.inputs["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def test_shm_up_to_half_the_memory_limit_is_accepted(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("dev", {"trainingJobs": [{"name": "a", "shmSizeGi": 8}]})
    [shm] = [
        v for v in _job(plan, "a").inputs["spec"]["template"]["spec"]["volumes"]
        if v["name"] == "dshm"
    ]  # fmt: skip
    assert shm["emptyDir"]["sizeLimit"] == "8Gi"


def test_jobs_do_not_block_pulumi_up(k8s_plan: Plan) -> None:
    """pulumi-kubernetes would await each Job's completion (hours of training) and fail the
    update after 10 minutes; the annotation turns that wait off."""
    jobs = k8s_plan.of_type(JOB)
    assert len(jobs) == 4  # k8s-dev's two Jobs and its staged and streamed dataset Jobs
    for job in jobs:
        assert job.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


def test_a_changed_job_spec_replaces_the_job(k8s_plan: Plan) -> None:
    """A Job's pod template is immutable: Pulumi replaces it (delete first)."""
    for job in k8s_plan.of_type(JOB):
        assert job.replace_on_changes == ["spec"]


def test_training_pods_mount_no_api_token(k8s_plan: Plan, dev_plan: Plan) -> None:
    """The identity webhooks project their own token; the trainer never calls the API."""
    for job in k8s_plan.of_type(JOB):
        assert job.inputs["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


ONE_JOB = {"trainingJobs": [{"name": "smoke"}]}


@pytest.mark.parametrize(
    ("stack", "scheme", "endpoint", "region"),
    [
        ("dev", "s3", "https://s3.us-east-1.amazonaws.com", "us-east-1"),
        ("alicloud-dev", "oss", "https://oss-cn-hangzhou-internal.aliyuncs.com", "cn-hangzhou"),
        ("tencentcloud-dev", "cosn", "https://cos.ap-guangzhou.myqcloud.com", "ap-guangzhou"),
    ],
)
def test_every_clouds_job_carries_the_trainer_contract(
    stack: str, scheme: str, endpoint: str, region: str
) -> None:
    """The Job -> trainer contract (CHECKPOINT_URI with the cloud's scheme, the bucket's
    S3-compatible endpoint and region); the identity env is the platform webhook's."""
    plan = gpu_layer_plan(stack, layer=ONE_JOB)
    env = _env(_job(plan, "smoke"))
    bucket = plan.outputs["bucketUri"].split("://", 1)[1]
    assert env["CHECKPOINT_URI"] == f"{scheme}://{bucket}/smoke"
    assert env["STORAGE_ENDPOINT_URL"] == endpoint
    assert env["STORAGE_REGION"] == region
    assert not {k for k in env if "SECRET" in k or "ACCESS_KEY" in k}


def test_an_existing_clusters_job_keeps_its_configured_bucket(k8s_plan: Plan) -> None:
    env = _env(_job(k8s_plan, "resnet50-single"))
    assert env["CHECKPOINT_URI"] == "s3://my-training-bucket/runs/resnet50-single"
    assert env["STORAGE_REGION"] == "us-east-1"
    assert "STORAGE_ENDPOINT_URL" not in env  # AWS S3: botocore's own endpoint
    plan = build(
        "k8s-dev",
        {
            "existingBucketUri": "oss://team-bucket/runs",
            "existingBucketEndpoint": "https://oss-cn-beijing-internal.aliyuncs.com",
            "existingBucketRegion": "cn-beijing",
        },
    )
    env = _env(_job(plan, "resnet50-single"))
    assert env["CHECKPOINT_URI"] == "oss://team-bucket/runs/resnet50-single"
    assert env["STORAGE_ENDPOINT_URL"] == "https://oss-cn-beijing-internal.aliyuncs.com"


def test_the_preview_says_a_changed_job_restarts_training(k8s_plan: Plan) -> None:
    """The PR diff marks a changed Job as a replacement (training restarts from its last
    checkpoint), not as an in-place update; other changes stay updates."""
    import datetime as dt

    from gpuinfra import report
    from gpuinfra.diff import diff_plans
    from gpuinfra.render import plan_json

    base = plan_json(k8s_plan, "kubernetes")
    jobs = [
        {"name": "resnet50-single", "gpusPerNode": 1, "nodes": 1, "backoffLimit": 5},
        {"name": "resnet50-two-nodes", "nodes": 2, "shmSizeGi": 16, "memory": "32Gi",
         "terminationGracePeriodSeconds": 180, "backoffLimit": 2, "env": {"NCCL_DEBUG": "WARN"}},
    ]  # fmt: skip
    head = plan_json(build("k8s-dev", {"trainingJobs": jobs, "dcgmProfilingMetrics": False}), "k")
    d = diff_plans(base, head, dt.date(2026, 11, 30))
    changed = {c["name"]: c for c in d["changed"]}
    job = changed["gpuinfra-k8s-dev-resnet50-single-job"]
    assert job["action"] == "replace"
    assert {"path": "spec.backoffLimit", "old": 3, "new": 5} in job["changes"]
    assert "gpuinfra-k8s-dev-resnet50-two-nodes-job" not in changed
    # pulumi-kubernetes replaces a ConfigMap whose data changes (force_new.py), but that is
    # no training restart.
    counters = changed["gpuinfra-k8s-dev-dcgm-counters"]
    assert (
        counters["action"] == "replace"
        and "training" not in report.text_diff(d).split("dcgm-counters")[1].splitlines()[0]
    )
    text = report.text_diff(d)
    assert "resnet50-single-job (replace: training restarts from its last checkpoint" in text
    assert "training restarts from its last checkpoint" in report.markdown(
        head, _costs(head), [], d
    )


def _costs(doc: dict):  # type: ignore[no-untyped-def]
    from gpuinfra.cost import estimate
    from gpuinfra.planview import from_json

    return estimate(from_json(doc))


@pytest.mark.parametrize("stack", ["dev", "alicloud-dev-gpu"])
def test_a_job_no_pool_fits_exits_2_in_the_preview(tmp_path, stack: str) -> None:  # type: ignore[no-untyped-def]
    """`gpuinfra preview` exits 2 with one problem naming the Job and every pool: a cloud
    stack's own Jobs (dev), and a GPU-layer stack's against its cluster stack's pools."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    for name in ("Pulumi.yaml", "__main__.py", *(p.name for p in root.glob("Pulumi.*.yaml"))):
        shutil.copy(root / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    path = tmp_path / f"Pulumi.{stack}.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["config"]["gpuinfra:trainingJobs"] = [{"name": "llm", "gpusPerNode": 8}]
    path.write_text(yaml.safe_dump(doc))
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", stack, "--cwd", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "gpuinfra:trainingJobs[0].gpusPerNode = 8: job 'llm' fits no GPU pool" in result.stderr
    assert "small (1 x " in result.stderr and "large (4 x " in result.stderr
    assert "Traceback" not in result.stderr


def test_an_existing_cluster_refuses_a_jobs_pool_and_model() -> None:
    """k8s-dev's GPU nodes are what existingGpuNodeLabels selects: no pools to choose from."""
    problems = _problems(
        "k8s-dev", {"trainingJobs": [{"name": "a", "pool": "x", "gpuModel": "T4"}]}
    )
    assert [p.split(" =")[0] for p in problems] == [
        "gpuinfra:trainingJobs[0].pool",
        "gpuinfra:trainingJobs[0].gpuModel",
    ]
    assert all("existingGpuNodeLabels" in p for p in problems)
