"""Checkpoints on every cloud's object storage with that cloud's pod identity, no static keys.

Each test sets the env a training Job gets (``CHECKPOINT_URI``, ``STORAGE_ENDPOINT_URL``,
``STORAGE_REGION`` and the identity env the platform's webhook injects), runs the trainer
until a preemption, resumes it to the end, and checks on the server side that the temporary
credentials of the STS exchange signed every storage request: moto's own STS for EKS IRSA
(botocore's chain), a fake Alibaba STS (AssumeRoleWithOIDC) for ACK RRSA through
alibabacloud-credentials, a fake Tencent STS (AssumeRoleWithWebIdentity) for TKE through
tencentcloud-sdk-python-common. Each runs twice: with the single-file format, and with sharded
(DCP) checkpoints of a GPT under FSDP, whose reader and writer must use the same identity.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import torch
from object_stores import BUCKET, FakeSts, RecordingMoto, body_json, query_of
from trainer_testlib import assert_same, gpt_args, load_final, run_inprocess, stop_at, tiny_args

from trainer import exit_codes
from trainer.cli import main

JOB = "job-7"
#: the same test with each checkpoint format
FORMATS = pytest.mark.parametrize("sharded", [False, True], ids=["file", "dcp"])


def _model_args(uri: str, *extra: str, steps: int, sharded: bool) -> list[str]:
    if sharded:
        return gpt_args(uri, *extra, "--no-tensorboard", steps=steps)
    return tiny_args(uri, *extra, steps=steps)


def _job_args(tmp_path: Path, *extra: str, steps: int = 6, sharded: bool = False) -> list[str]:
    """The trainer's arguments with the URI left to CHECKPOINT_URI, as in the Job."""
    args = _model_args("unused", *extra, steps=steps, sharded=sharded)
    args = [a for a in args if "--checkpoint-uri" not in a]
    return [*args, "--checkpoint-every-steps=2", f"--staging-dir={tmp_path / 'stage'}"]


def _token_file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _train_preempt_resume(
    tmp_path: Path, moto: RecordingMoto, sharded: bool = False
) -> dict[str, torch.Tensor]:
    """Stopped after step 3 (exit 75), resumed to step 6; returns the final weights."""
    args = _job_args(tmp_path, sharded=sharded)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [4, 5, 6]  # resumed from the emergency checkpoint in the bucket
    keys = moto.admin.list_objects_v2(Bucket=BUCKET, Prefix=f"{JOB}/")  # type: ignore[attr-defined]
    names = {o["Key"] for o in keys["Contents"]}
    assert f"{JOB}/checkpoints/step_000000006/manifest.json" in names
    if sharded:  # DCP's files went through the same storage layer
        for name in (".metadata", "__0_0.distcp", "trainer.pt"):
            assert f"{JOB}/checkpoints/step_000000006/{name}" in names, names
    body = moto.admin.get_object(Bucket=BUCKET, Key=f"{JOB}/final/model.pt")["Body"].read()  # type: ignore[attr-defined]
    final = torch.load(io.BytesIO(body), weights_only=True)
    local = str(tmp_path / "local")
    local_args = _model_args(local, steps=6, sharded=sharded)
    assert run_inprocess(local_args) == exit_codes.OK
    assert_same(final, load_final(local))
    return final


def _signed_with(moto: RecordingMoto, access_keys: set[str], tokens: set[str]) -> None:
    """Every storage request carried one of these keys and its session token, nothing else."""
    reqs = moto.storage_requests()
    assert len(reqs) > 10, reqs
    for r in reqs:
        key = re.search(r"Credential=([^/]+)/|^AWS ([^:]+):", r.authorization)
        assert key, r
        assert (key[1] or key[2]) in access_keys, r
        assert r.token in tokens, r
        assert "decoy" not in r.authorization


@FORMATS
def test_s3_with_eks_irsa_web_identity(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    clean_cloud_env: None,
    monkeypatch: pytest.MonkeyPatch,
    sharded: bool,
) -> None:
    token = "eyJhbGciOi.irsa-token.sig"
    for name, value in {
        "CHECKPOINT_URI": f"s3://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.ip_url,
        "STORAGE_REGION": "us-east-1",
        # what the EKS pod identity webhook injects
        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/trainer",
        "AWS_WEB_IDENTITY_TOKEN_FILE": _token_file(tmp_path, "irsa-token", token),
        "AWS_STS_REGIONAL_ENDPOINTS": "regional",
        # the STS endpoint, in botocore's own setting (here: moto's STS)
        "AWS_ENDPOINT_URL_STS": moto_s3.ip_url,
    }.items():
        monkeypatch.setenv(name, value)
    _train_preempt_resume(tmp_path, moto_s3, sharded)

    exchanges = [r for r in moto_s3.requests if "AssumeRoleWithWebIdentity" in r.path]
    assert exchanges and moto_s3.sts_credentials
    issued = {c["AccessKeyId"] for c in moto_s3.sts_credentials}
    tokens = {c["SessionToken"] for c in moto_s3.sts_credentials}
    assert all(k.startswith("ASIA") for k in issued), issued  # temporary keys
    _signed_with(moto_s3, issued, tokens)


@FORMATS
def test_oss_with_ack_rrsa(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
    sharded: bool,
) -> None:
    token = "eyJhbGciOi.rrsa-token.sig"
    for name, value in {
        "CHECKPOINT_URI": f"oss://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        "STORAGE_REGION": "cn-hangzhou",
        # what ack-pod-identity-webhook injects for RRSA
        "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1234567890123456:role/trainer",
        "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1234567890123456:oidc-provider/ack-rrsa-c1",
        "ALIBABA_CLOUD_OIDC_TOKEN_FILE": _token_file(tmp_path, "rrsa-token", token),
        "STORAGE_STS_ENDPOINT_URL": fake_sts.url,
        "AWS_ACCESS_KEY_ID": "decoy",  # must never reach an OSS request
        "AWS_SECRET_ACCESS_KEY": "decoy",
    }.items():
        monkeypatch.setenv(name, value)
    _train_preempt_resume(tmp_path, moto_s3, sharded)

    calls = fake_sts.calls("AssumeRoleWithOIDC")
    assert calls, fake_sts.server.seen
    q = query_of(calls[0][1])
    assert q["OIDCToken"] == token
    assert q["RoleArn"] == "acs:ram::1234567890123456:role/trainer"
    assert q["OIDCProviderArn"].endswith("oidc-provider/ack-rrsa-c1")
    reqs = moto_s3.storage_requests()
    assert all(r.host == f"{BUCKET}.localhost:{moto_s3.port}" for r in reqs)  # virtual-hosted
    assert all(r.authorization.startswith("AWS STS.rrsa") for r in reqs)  # OSS: signature V2
    _signed_with(moto_s3, {k["id"] for k in fake_sts.issued}, {k["token"] for k in fake_sts.issued})


@FORMATS
def test_cosn_with_tke_pod_identity(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
    sharded: bool,
) -> None:
    token = "eyJhbGciOi.tke-token.sig"
    for name, value in {
        "CHECKPOINT_URI": f"cosn://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        "STORAGE_REGION": "ap-guangzhou",
        # what TKE's pod identity webhook injects
        "TKE_ROLE_ARN": "qcs::cam::uin/100000000001:roleName/trainer",
        "TKE_WEB_IDENTITY_TOKEN_FILE": _token_file(tmp_path, "tke-token", token),
        "TKE_PROVIDER_ID": "cls-abc123",
        "TKE_REGION": "ap-guangzhou",
        "STORAGE_STS_ENDPOINT_URL": fake_sts.url,
        "AWS_ACCESS_KEY_ID": "decoy",
        "AWS_SECRET_ACCESS_KEY": "decoy",
    }.items():
        monkeypatch.setenv(name, value)
    _train_preempt_resume(tmp_path, moto_s3, sharded)

    calls = fake_sts.calls("AssumeRoleWithWebIdentity")
    assert calls, fake_sts.server.seen
    _, _, headers, body = calls[0]
    assert headers["x-tc-region"] == "ap-guangzhou"
    sent = body_json(body)
    assert sent["WebIdentityToken"] == token and sent["ProviderId"] == "cls-abc123"
    assert sent["RoleArn"] == "qcs::cam::uin/100000000001:roleName/trainer"
    reqs = moto_s3.storage_requests()
    assert all(r.host == f"{BUCKET}.localhost:{moto_s3.port}" for r in reqs)
    assert all("/ap-guangzhou/s3/aws4_request" in r.authorization for r in reqs)  # SigV4
    _signed_with(moto_s3, {k["id"] for k in fake_sts.issued}, {k["token"] for k in fake_sts.issued})


def test_expiring_credentials_are_exchanged_again(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Keys that expire within botocore's refresh window are replaced before use."""
    fake_sts.lifetime_s = 300  # inside botocore's 10-minute mandatory refresh window
    for name, value in {
        "CHECKPOINT_URI": f"oss://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1:role/trainer",
        "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1:oidc-provider/p",
        "ALIBABA_CLOUD_OIDC_TOKEN_FILE": _token_file(tmp_path, "t", "token"),
        "STORAGE_STS_ENDPOINT_URL": fake_sts.url,
    }.items():
        monkeypatch.setenv(name, value)
    assert run_inprocess(_job_args(tmp_path, steps=4)) == exit_codes.OK
    used = {re.match(r"AWS ([^:]+):", r.authorization)[1] for r in moto_s3.storage_requests()}  # type: ignore[index]
    assert len(fake_sts.issued) > 2 and len(used) > 2, (fake_sts.issued, used)


@pytest.mark.parametrize(
    ("uri", "needle"),
    [
        (
            "oss://b/run",
            "ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN, "
            "ALIBABA_CLOUD_OIDC_TOKEN_FILE are not set",
        ),
        (
            "cosn://b-1250000000/run",
            "TKE_ROLE_ARN, TKE_WEB_IDENTITY_TOKEN_FILE, TKE_PROVIDER_ID, TKE_REGION are not set",
        ),
    ],
)
def test_missing_pod_identity_is_a_user_error(
    clean_cloud_env: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    uri: str,
    needle: str,
) -> None:
    monkeypatch.setenv("STORAGE_ENDPOINT_URL", "https://storage.example")
    assert main([*tiny_args(uri, steps=2)]) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err


def test_missing_bucket_is_a_user_error(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    clean_cloud_env: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("STORAGE_REGION", "us-east-1")
    monkeypatch.setenv("STORAGE_ENDPOINT_URL", moto_s3.ip_url)
    args = tiny_args(f"s3://no-such-bucket/{JOB}", steps=2)
    assert main(args) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    line = [ln for ln in err.splitlines() if ln.startswith("trainer: error:")]
    assert len(line) == 1 and "s3://no-such-bucket/job-7 is not writable" in line[0], err
