"""The pair together: each cloud's rendered training Job, run as the trainer would be run.

The Job side (components/kubernetes/training_job.py) and the trainer side (trainer/) were
each tested against the env contract on its own; this runs what a stack really renders. For
every cloud it builds the stack (or its separate GPU-layer stack), takes the Job's container
args and env, expands `$(VAR)` as the kubelet does, checks the trainer accepts the Job's
arguments, then trains, stops as on a SIGTERM and resumes with the Job's checkpoint URI and
storage env against a local S3-compatible server, the webhook's identity env added. Only the
endpoint is swapped for the local server's, after checking the trainer would have used the
one the Job names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from object_stores import FakeSts, RecordingMoto
from trainer_testlib import run_inprocess, stop_at, tiny_args

from trainer import exit_codes
from trainer.config import parse_args

JOB = "contract-job"
JOBS = [{"name": JOB, "gpusPerNode": 1, "nodes": 1}]
SCHEMES = {"dev": "s3", "alicloud-dev": "oss", "tencentcloud-dev": "cosn", "volcengine-dev": "tos"}


def _job_container(stack: str) -> dict[str, Any]:
    from tests.conftest import gpu_layer_plan

    plan = gpu_layer_plan(stack, layer={"trainingJobs": JOBS})
    [job] = [
        r for r in plan.of_type("kubernetes:batch/v1:Job") if r.inputs["metadata"]["name"] == JOB
    ]
    [container] = job.inputs["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def _expand(value: str, env: dict[str, str]) -> str:
    """`$(NAME)` as the kubelet expands it in args (unknown names stay as they are)."""
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m[1], m[0]), value)


def _trainer_args(container: dict[str, Any], env: dict[str, str]) -> list[str]:
    """The arguments after `-m trainer` in the Job's torchrun command line."""
    args = [_expand(a, env) for a in [*container.get("command", []), *container["args"]]]
    return args[args.index("trainer", args.index("-m")) + 1 :]


def _token(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(f"eyJhbGciOi.{name}.sig")
    return str(path)


def _identity(stack: str, tmp_path: Path, sts: FakeSts, moto: RecordingMoto) -> dict[str, str]:
    """What each platform's webhook injects (see the README's Job table), pointed at the
    local STS."""
    if stack == "dev":
        return {
            "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/trainer",
            "AWS_WEB_IDENTITY_TOKEN_FILE": _token(tmp_path, "irsa"),
            "AWS_ENDPOINT_URL_STS": moto.ip_url,
        }
    local_sts = {"STORAGE_STS_ENDPOINT_URL": sts.url}
    if stack == "alicloud-dev":
        return {
            **local_sts,
            "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1234567890123456:role/trainer",
            "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1234567890123456:oidc-provider/ack",
            "ALIBABA_CLOUD_OIDC_TOKEN_FILE": _token(tmp_path, "rrsa"),
        }
    if stack == "tencentcloud-dev":
        return {
            **local_sts,
            "TKE_ROLE_ARN": "qcs::cam::uin/100000000001:roleName/trainer",
            "TKE_WEB_IDENTITY_TOKEN_FILE": _token(tmp_path, "tke"),
            "TKE_PROVIDER_ID": "cls-abc123",
            "TKE_REGION": "ap-guangzhou",
        }
    return {
        "VOLCENGINE_OIDC_ROLE_TRN": "trn:iam::2100000000:role/trainer",
        "VOLCENGINE_OIDC_TOKEN_FILE": _token(tmp_path, "vke"),
        "VOLCENGINE_OIDC_STS_ENDPOINT": sts.url,
    }


@pytest.mark.parametrize("stack", list(SCHEMES))
def test_each_clouds_job_env_runs_the_trainer_against_its_bucket(
    stack: str,
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    container = _job_container(stack)
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    uri = env["CHECKPOINT_URI"]
    scheme, bucket, path = uri.split("://")[0], urlsplit(uri).netloc, urlsplit(uri).path
    assert scheme == SCHEMES[stack] and path == f"/{JOB}", uri

    # The Job's own arguments are ones the trainer takes, and name the Job's URI and endpoint.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    job_args = _trainer_args(container, env)
    config = parse_args(job_args)
    assert config.checkpoint_uri == uri
    assert config.storage_endpoint_url == env["STORAGE_ENDPOINT_URL"]
    assert urlsplit(env["STORAGE_ENDPOINT_URL"]).scheme == "https"

    # Then train with them against the local server standing in for the cloud's endpoint.
    moto_s3.admin.create_bucket(Bucket=bucket)  # type: ignore[attr-defined]
    local = moto_s3.ip_url if scheme == "s3" else moto_s3.host_url
    monkeypatch.setenv("STORAGE_ENDPOINT_URL", local)
    for name, value in _identity(stack, tmp_path, fake_sts, moto_s3).items():
        monkeypatch.setenv(name, value)
    run: Callable[..., int] = run_inprocess
    args = [
        *[a for a in tiny_args("unused", steps=4) if not a.startswith("--checkpoint-uri")],
        f"--checkpoint-uri={config.checkpoint_uri}",
        "--checkpoint-every-steps=2",
        f"--staging-dir={tmp_path / 'stage'}",
    ]
    assert run(args, hook=stop_at(2)) == exit_codes.PREEMPTED
    seen: list[int] = []
    assert run(args, hook=lambda trainer, step: seen.append(step)) == exit_codes.OK
    assert seen == [3, 4]  # resumed from the checkpoint in the Job's bucket
    listed = moto_s3.admin.list_objects_v2(Bucket=bucket, Prefix=f"{JOB}/")  # type: ignore[attr-defined]
    assert f"{JOB}/final/model.pt" in {o["Key"] for o in listed["Contents"]}
    assert moto_s3.storage_requests(), "nothing reached the bucket"
