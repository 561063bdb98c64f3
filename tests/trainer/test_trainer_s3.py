"""``s3://`` checkpoints against a local moto server (fake credentials from the environment)."""

from __future__ import annotations

import hashlib
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_testlib import assert_same, load_final, run_inprocess, stop_at, tiny_args

from trainer import exit_codes, storage

BUCKET = "trainer-ckpt"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    import boto3
    from moto.server import ThreadedMotoServer

    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    try:
        yield endpoint, client
    finally:
        server.stop()


def _keys(client: Any, prefix: str) -> list[str]:
    out = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in out.get("Contents", []))


def test_s3_checkpoint_round_trip(
    s3: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, client = s3
    order: list[str] = []
    original = storage.FsspecStorage.write_file

    def recording(self: storage.FsspecStorage, rel: str, produce: storage.Producer) -> Any:
        info = original(self, rel, produce)
        if rel.startswith("checkpoints/"):  # not the start's writability probe
            order.append(rel)
        return info

    monkeypatch.setattr(storage.FsspecStorage, "write_file", recording)
    uri = f"s3://{BUCKET}/runs/a"
    extra = ("--checkpoint-every-steps=2", "--keep-last=1", f"--staging-dir={tmp_path / 'stage'}")
    args = tiny_args(uri, *extra, f"--s3-endpoint-url={endpoint}", steps=6)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED
    assert order == [
        "checkpoints/step_000000002/state.pt",
        "checkpoints/step_000000002/manifest.json",
        "checkpoints/step_000000003/state.pt",
        "checkpoints/step_000000003/manifest.json",
    ]
    ckpt = "runs/a/checkpoints/"
    assert _keys(client, ckpt) == [
        f"{ckpt}step_000000003/manifest.json",
        f"{ckpt}step_000000003/state.pt",
    ]  # step 2 pruned (keep-last 1)
    manifest = json.loads(
        client.get_object(Bucket=BUCKET, Key=f"{ckpt}step_000000003/manifest.json")["Body"].read()
    )
    blob = client.get_object(Bucket=BUCKET, Key=f"{ckpt}step_000000003/state.pt")["Body"].read()
    assert manifest["files"]["state.pt"] == {
        "size": len(blob),
        "sha256": hashlib.sha256(blob).hexdigest(),
    }

    # Resume with the endpoint from AWS_ENDPOINT_URL instead of the flag.
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    seen: list[int] = []
    args = tiny_args(uri, *extra, steps=6)
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [4, 5, 6]
    body = client.get_object(Bucket=BUCKET, Key="runs/a/final/model.pt")["Body"].read()
    final = torch.load(io.BytesIO(body), weights_only=True)
    assert any(k.startswith("runs/a/tb/events.out.tfevents") for k in _keys(client, "runs/a/tb/"))

    # Same weights as an uninterrupted local run.
    local = str(tmp_path / "local")
    assert run_inprocess(tiny_args(local, steps=6)) == exit_codes.OK
    assert_same(final, load_final(local))
