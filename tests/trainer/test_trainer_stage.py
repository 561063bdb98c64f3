"""``python -m trainer.stage`` end to end against a local S3 server (moto), with EKS IRSA.

What a training Job with ``dataset.access: stage`` does: the init container copies the
dataset into the node's cache, the trainer trains on the copy; a pod that is preempted and
resumed on the same node copies nothing again and ends with the same weights as an
uninterrupted run on the original folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from object_stores import BUCKET, RecordingMoto
from trainer_testlib import (
    assert_same,
    folder_args,
    load_final,
    make_image_folder,
    run_inprocess,
    stop_at,
)

from trainer import exit_codes
from trainer import stage as stage_mod
from trainer.remote import RemoteOptions
from trainer.stage import RECORD, main, stage

PREFIX = "datasets/images"
SOURCE = f"s3://{BUCKET}/{PREFIX}"


def _upload(moto: RecordingMoto, folder: str) -> dict[str, bytes]:
    """Every file of ``folder`` as an object under PREFIX; returns key -> bytes."""
    put: dict[str, bytes] = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            key = f"{PREFIX}/{os.path.relpath(path, folder)}"
            data = Path(path).read_bytes()
            moto.admin.put_object(Bucket=BUCKET, Key=key, Body=data)  # type: ignore[attr-defined]
            put[key] = data
    return put


def _object_gets(moto: RecordingMoto) -> list[str]:
    """GetObject requests of the stager (listings carry a query, objects do not)."""
    return [
        r.path
        for r in moto.storage_requests()
        if r.method == "GET" and r.path.startswith(f"/{BUCKET}/{PREFIX}/") and "?" not in r.path
    ]


@pytest.fixture
def irsa(tmp_path: Path, moto_s3: RecordingMoto, clean_cloud_env: None, monkeypatch: Any) -> None:
    """The env the stage init container gets: the Job's storage env and EKS IRSA's."""
    token = tmp_path / "irsa-token"
    token.write_text("eyJhbGciOi.irsa-token.sig")
    for name, value in {
        "STORAGE_ENDPOINT_URL": moto_s3.ip_url,
        "STORAGE_REGION": "us-east-1",
        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/trainer",
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
        "AWS_STS_REGIONAL_ENDPOINTS": "regional",
        "AWS_ENDPOINT_URL_STS": moto_s3.ip_url,
    }.items():
        monkeypatch.setenv(name, value)


def _tree(folder: str) -> dict[str, str]:
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if not rel.startswith(".gpuinfra"):
                out[rel] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return out


def test_stage_then_train_then_resume_on_the_same_node_copies_nothing(
    tmp_path: Path, moto_s3: RecordingMoto, irsa: None
) -> None:
    original = make_image_folder(str(tmp_path / "original"))
    put = _upload(moto_s3, original)
    node_cache = str(tmp_path / "node" / "images-0123")
    ckpt = str(tmp_path / "ckpt")

    # pod 1: the init container stages, the trainer is preempted after step 3
    assert main(["--source", SOURCE, "--dest", node_cache]) == exit_codes.OK
    assert _tree(node_cache) == _tree(original)
    assert len(_object_gets(moto_s3)) == len(put) == 32
    record = json.loads(Path(node_cache, RECORD).read_text())
    assert record["complete"] is True and len(record["objects"]) == 32
    args = folder_args(ckpt, node_cache, steps=10)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED

    # pod 2 on the same node: nothing is downloaded again, training resumes and finishes
    moto_s3.requests.clear()
    assert main(["--source", SOURCE, "--dest", node_cache]) == exit_codes.OK
    assert _object_gets(moto_s3) == []
    assert moto_s3.storage_requests(), "it still lists the prefix to compare"
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == list(range(4, 11))

    # the same weights as one uninterrupted run on the original folder
    straight = str(tmp_path / "straight")
    assert run_inprocess(folder_args(straight, original, steps=10)) == exit_codes.OK
    assert_same(load_final(ckpt), load_final(straight))

    # every request was signed with the temporary keys of the IRSA exchange
    issued = {c["AccessKeyId"] for c in moto_s3.sts_credentials}
    assert issued and all(k.startswith("ASIA") for k in issued)


def test_changed_and_removed_objects_are_synced_and_a_damaged_copy_is_replaced(
    tmp_path: Path, moto_s3: RecordingMoto, irsa: None
) -> None:
    original = make_image_folder(str(tmp_path / "original"), classes=2, per_class=3)
    _upload(moto_s3, original)
    cache = str(tmp_path / "cache")
    first = stage(SOURCE, cache)
    assert (first.objects, first.copied, first.deleted) == (6, 6, 0)

    admin: Any = moto_s3.admin  # type: ignore[attr-defined]
    admin.put_object(Bucket=BUCKET, Key=f"{PREFIX}/class0/0.png", Body=b"new bytes")
    admin.delete_object(Bucket=BUCKET, Key=f"{PREFIX}/class1/2.png")
    Path(cache, "class1", "1.png").write_bytes(b"truncated")  # damaged on the node
    moto_s3.requests.clear()
    second = stage(SOURCE, cache)
    assert (second.objects, second.copied, second.deleted) == (5, 2, 1)
    assert sorted(_object_gets(moto_s3)) == [
        f"/{BUCKET}/{PREFIX}/class0/0.png",
        f"/{BUCKET}/{PREFIX}/class1/1.png",
    ]
    assert Path(cache, "class0", "0.png").read_bytes() == b"new bytes"
    assert not Path(cache, "class1", "2.png").exists()
    assert (
        Path(cache, "class1", "1.png").read_bytes()
        == Path(original, "class1", "1.png").read_bytes()
    )


def test_a_download_that_differs_from_its_etag_is_fetched_again_then_fails(
    tmp_path: Path, moto_s3: RecordingMoto, irsa: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = make_image_folder(str(tmp_path / "original"), classes=1, per_class=2)
    _upload(moto_s3, original)
    damage = {"left": 1}
    real_open = stage_mod.open_remote

    def open_damaging(uri: str, flag: str, options: RemoteOptions) -> tuple[Any, str]:
        fs, base = real_open(uri, flag, options)
        real_get = fs.get_file

        def get_file(rpath: str, lpath: str, **kw: Any) -> None:
            real_get(rpath, lpath, **kw)
            if damage["left"] > 0:  # same size, other bytes: only the MD5 can tell
                damage["left"] -= 1
                data = bytearray(Path(lpath).read_bytes())
                data[-1] ^= 0xFF
                Path(lpath).write_bytes(bytes(data))

        fs.get_file = get_file
        return fs, base

    monkeypatch.setattr(stage_mod, "open_remote", open_damaging)
    result = stage(SOURCE, str(tmp_path / "once"), workers=1)
    assert result.copied == 2 and damage["left"] == 0
    assert _tree(str(tmp_path / "once")) == _tree(original)

    damage["left"] = 10**6  # every download is damaged: the pod fails and the Job retries
    assert main(["--source", SOURCE, "--dest", str(tmp_path / "never"), "--workers=1"]) == 1
    record = json.loads(Path(tmp_path, "never", RECORD).read_text())
    assert record["complete"] is False and record["objects"] == {}
    # --verify size trusts the size alone (for buckets whose ETags are not MD5s)
    assert main(["--source", SOURCE, "--dest", str(tmp_path / "sized"), "--verify=size"]) == 0


def test_two_pods_on_one_node_copy_once(tmp_path: Path, moto_s3: RecordingMoto, irsa: None) -> None:
    _upload(moto_s3, make_image_folder(str(tmp_path / "original"), classes=2, per_class=4))
    cache = str(tmp_path / "cache")
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(stage(SOURCE, cache))) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(r.copied for r in results) == [0, 8]
    assert len(_object_gets(moto_s3)) == 8


def test_user_errors_exit_64_with_one_line(
    tmp_path: Path,
    moto_s3: RecordingMoto,
    irsa: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dest = str(tmp_path / "d")
    assert main(["--source", f"s3://{BUCKET}/nothing-here", "--dest", dest]) == 64
    assert "holds no objects" in capsys.readouterr().err
    assert main(["--source", "s3://no-such-bucket/x", "--dest", dest]) == 64
    err = capsys.readouterr().err
    assert err.startswith("trainer.stage: error: --source s3://no-such-bucket/x cannot be read")
    assert main(["--source", "/local/folder", "--dest", dest]) == 64
    assert "not in object storage" in capsys.readouterr().err
    assert main(["--source", "oss://b/x", "--dest", dest]) == 64  # no RRSA env in this pod
    assert "ALIBABA_CLOUD_ROLE_ARN" in capsys.readouterr().err

    _upload(moto_s3, make_image_folder(str(tmp_path / "original"), classes=1, per_class=2))

    class Full:
        free = 10

    monkeypatch.setattr(stage_mod.shutil, "disk_usage", lambda p: Full())
    assert main(["--source", SOURCE, "--dest", dest]) == 64
    assert "GiB free" in capsys.readouterr().err


def test_options_come_from_the_job_env(irsa: None) -> None:
    options = RemoteOptions.from_env()
    assert options.region == "us-east-1" and options.endpoint_url
