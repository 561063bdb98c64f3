"""Checkpoints on every cloud's object storage with that cloud's pod identity, no static keys.

Each test sets the env a training Job gets (``CHECKPOINT_URI``, ``STORAGE_ENDPOINT_URL``,
``STORAGE_REGION`` and the identity env the platform's webhook injects), runs the trainer
until a preemption, resumes it to the end, and checks on the server side that the temporary
credentials of the STS exchange signed every storage request: moto's own STS for EKS IRSA
(botocore's chain), a fake Alibaba STS (AssumeRoleWithOIDC) for ACK RRSA through
alibabacloud-credentials, a fake Tencent STS (AssumeRoleWithWebIdentity) for TKE through
tencentcloud-sdk-python-common, a fake Volcano Engine STS (AssumeRoleWithOIDC) for VKE IRSA
through volcenginesdk-core. Each runs twice: with the single-file format, and with sharded
(DCP) checkpoints of a GPT under FSDP, whose reader and writer must use the same identity.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from object_stores import BUCKET, FakeSts, RecordingMoto, body_json, query_of
from trainer_testlib import (
    REPO,
    assert_same,
    gpt_args,
    load_final,
    run_inprocess,
    stop_at,
    subprocess_env,
    tiny_args,
)

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


def _vke_irsa_env(tmp_path: Path, token: str) -> dict[str, str]:
    """What VKE's pod-identity-webhook injects (README: not confirmed from a Volcano Engine
    page; the names volcengine-go-sdk and volcenginesdk-core read)."""
    return {
        "VOLCENGINE_OIDC_ROLE_TRN": "trn:iam::2100000000:role/trainer",
        "VOLCENGINE_OIDC_TOKEN_FILE": _token_file(tmp_path, "vke-token", token),
    }


@FORMATS
def test_tos_with_vke_irsa(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
    sharded: bool,
) -> None:
    token = "eyJhbGciOi.vke-token.sig"
    for name, value in {
        "CHECKPOINT_URI": f"tos://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        "STORAGE_REGION": "cn-beijing",
        **_vke_irsa_env(tmp_path, token),
        # the library's own STS setting (a URL with its scheme is taken as it is)
        "VOLCENGINE_OIDC_STS_ENDPOINT": fake_sts.url,
        "AWS_ACCESS_KEY_ID": "decoy",  # must never reach a TOS request
        "AWS_SECRET_ACCESS_KEY": "decoy",
    }.items():
        monkeypatch.setenv(name, value)
    _train_preempt_resume(tmp_path, moto_s3, sharded)

    calls = fake_sts.calls("AssumeRoleWithOIDC")
    assert calls, fake_sts.server.seen
    for method, path, headers, body in calls:
        assert method == "POST" and query_of(path) == {
            "Action": "AssumeRoleWithOIDC",
            "Version": "2018-01-01",
        }
        assert headers["content-type"] == "application/x-www-form-urlencoded"
        assert "authorization" not in headers  # the token is the only proof
        form = query_of(f"?{body}")
        assert form["OIDCToken"] == token
        assert form["RoleTrn"] == "trn:iam::2100000000:role/trainer"
        assert form["RoleSessionName"] == "gpuinfra-trainer"
    reqs = moto_s3.storage_requests()
    assert all(r.host == f"{BUCKET}.localhost:{moto_s3.port}" for r in reqs)  # virtual-hosted
    assert all(r.authorization.startswith("AWS4-HMAC-SHA256 ") for r in reqs)  # TOS: SigV4 only
    assert all("/cn-beijing/s3/aws4_request" in r.authorization for r in reqs)
    assert not [r for r in reqs if r.checksum_headers], "TOS gets no flexible checksums"
    # DeleteObjects (pruning old checkpoints) with the Content-MD5 of its body
    deletes = [r for r in reqs if r.method == "POST" and r.path.endswith("?delete")]
    assert deletes and all(r.content_md5 == r.body_md5 for r in deletes), deletes
    _signed_with(moto_s3, {k["id"] for k in fake_sts.issued}, {k["token"] for k in fake_sts.issued})


@pytest.mark.parametrize("scheme", ["oss", "tos"])
def test_expiring_credentials_are_exchanged_again(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    monkeypatch: pytest.MonkeyPatch,
    scheme: str,
) -> None:
    """Keys that expire within botocore's refresh window are replaced before use."""
    fake_sts.lifetime_s = 300  # inside botocore's 10-minute mandatory refresh window
    identity = {
        "oss": {
            "ALIBABA_CLOUD_ROLE_ARN": "acs:ram::1:role/trainer",
            "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": "acs:ram::1:oidc-provider/p",
            "ALIBABA_CLOUD_OIDC_TOKEN_FILE": _token_file(tmp_path, "t", "token"),
        },
        "tos": {**_vke_irsa_env(tmp_path, "token"), "STORAGE_REGION": "cn-beijing"},
    }[scheme]
    for name, value in {
        "CHECKPOINT_URI": f"{scheme}://{BUCKET}/{JOB}",
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        **identity,
        "STORAGE_STS_ENDPOINT_URL": fake_sts.url,
    }.items():
        monkeypatch.setenv(name, value)
    assert run_inprocess(_job_args(tmp_path, steps=4)) == exit_codes.OK
    key_id = re.compile(r"Credential=([^/]+)/|^AWS ([^:]+):")
    used = set()
    for r in moto_s3.storage_requests():
        m = key_id.search(r.authorization)
        assert m, r
        used.add(m[1] or m[2])
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
        (
            "tos://b/run",
            "tos:// checkpoints authenticate with VKE IRSA (no static keys), but "
            "VOLCENGINE_OIDC_ROLE_TRN, VOLCENGINE_OIDC_TOKEN_FILE are not set",
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


def test_missing_tos_bucket_is_a_user_error(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    fake_sts: FakeSts,
    clean_cloud_env: None,
    resolve_localhost_subdomains: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exchange works, the bucket is not there: exit 64 before training, one line."""
    for name, value in {
        "STORAGE_ENDPOINT_URL": moto_s3.host_url,
        "STORAGE_REGION": "cn-beijing",
        **_vke_irsa_env(tmp_path, "token"),
        "STORAGE_STS_ENDPOINT_URL": fake_sts.url,
    }.items():
        monkeypatch.setenv(name, value)
    assert main(tiny_args(f"tos://no-such-bucket/{JOB}", steps=2)) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    line = [ln for ln in err.splitlines() if ln.startswith("trainer: error:")]
    assert len(line) == 1 and "tos://no-such-bucket/job-7 is not writable" in line[0], err
    assert "Traceback" not in err and fake_sts.issued


def test_missing_tos_token_file_is_a_user_error(
    tmp_path: Path,
    clean_cloud_env: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STORAGE_ENDPOINT_URL", "https://tos-s3-cn-beijing.ivolces.com")
    monkeypatch.setenv("VOLCENGINE_OIDC_ROLE_TRN", "trn:iam::2100000000:role/trainer")
    monkeypatch.setenv("VOLCENGINE_OIDC_TOKEN_FILE", str(tmp_path / "no-token"))
    assert main(tiny_args("tos://b/run", steps=2)) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    assert "tos:// identity token file" in err and "no-token" in err, err
    assert "Traceback" not in err


def test_cloud_libraries_are_imported_only_for_their_scheme(
    tmp_path: Path, clean_cloud_env: None
) -> None:
    """A local run, and a tos:// run refused for its missing identity, import no cloud
    library (volcenginesdk-core alone costs about 0.25 s of imports)."""
    probe = (
        "import sys\n"
        "from trainer.errors import UserError\n"
        "from trainer.storage import open_storage\n"
        f"open_storage({str(tmp_path / 'run')!r})\n"
        "try:\n"
        "    open_storage('tos://b/run', endpoint_url='https://tos-s3-cn-beijing.ivolces.com')\n"
        "    raise SystemExit('tos:// without VOLCENGINE_OIDC_* was accepted')\n"
        "except UserError:\n"
        "    pass\n"
        "libs = ('volcenginesdkcore', 'alibabacloud_credentials', 'tencentcloud', 's3fs')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in libs))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=subprocess_env(),
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.strip() == "[]", out
