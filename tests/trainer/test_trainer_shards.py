"""Tar shards (trainer/shards.py): the data order, exact resume, and streaming from s3://."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
import torch
from object_stores import BUCKET, RecordingMoto
from trainer_testlib import (
    assert_same,
    checkpoint_steps,
    folder_args,
    load_final,
    load_state,
    make_image_folder,
    run_cli,
    run_inprocess,
    stop_at,
)

from trainer import exit_codes, shards
from trainer.config import parse_args
from trainer.remote import RemoteOptions
from trainer.shards import BLOCK, INDEX, EpochOrder, ShardIndex, load_index, write_shards

LOCAL = RemoteOptions()


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_image_folder(str(tmp_path_factory.mktemp("images")))  # 4 classes x 8


@pytest.fixture(scope="module")
def shard_dir(images: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = str(tmp_path_factory.mktemp("shards"))
    write_shards(images, folder, samples_per_shard=10, seed=3)  # 10 + 10 + 10 + 2
    return folder


def _index(n_per_shard: list[int]) -> ShardIndex:
    return ShardIndex(
        tuple(shards.Shard(f"s{i}", n, tuple(range(n + 1))) for i, n in enumerate(n_per_shard)),
        None,
    )


def test_an_epoch_reads_every_sample_once_in_block_runs() -> None:
    index = _index([100, 37, 64, 5])
    order = EpochOrder(index, seed=1, epoch=0)
    runs = order.runs(0, index.size)
    seen = [(r.shard, i) for r in runs for i in range(r.start, r.end)]
    assert len(seen) == len(set(seen)) == index.size
    assert all(r.end - r.start <= BLOCK for r in runs)
    other = EpochOrder(index, seed=1, epoch=1).runs(0, index.size)
    assert [(r.shard, r.start) for r in runs] != [(r.shard, r.start) for r in other]
    # any window is the same samples whether asked at once or in pieces
    whole = [(r.shard, i) for r in order.runs(50, 130) for i in range(r.start, r.end)]
    parts = [
        (r.shard, i)
        for lo in range(50, 130, 16)
        for r in order.runs(lo, lo + 16)
        for i in range(r.start, r.end)
    ]
    assert whole == parts == seen[50:130]


def test_a_step_trains_on_the_same_samples_however_the_global_batch_is_split(
    shard_dir: str,
) -> None:
    index, files = load_index(shard_dir, LOCAL)

    def step_labels(world: int, batch: int, accum: int, step: int) -> list[int]:
        """The labels of a step's samples, over all ranks and accumulation rounds, in the
        order of the epoch's sample sequence."""
        labels: list[int] = []
        for micro in range(accum):
            for rank in range(world):
                ds = shards._ShardDataset(index, files, 0, rank, world, batch, 1, 12, 4, accum)
                labels += ds[(0, step, micro)][1].tolist()
        return labels

    # (processes, batch per process, accumulation rounds): 8 samples a step each
    splits = [(1, 8, 1), (2, 4, 1), (4, 2, 1), (1, 4, 2), (2, 2, 2), (1, 2, 4), (4, 1, 2)]
    for step in range(4):  # 32 samples, global batch 8
        first, *others = [step_labels(*split, step) for split in splits]
        assert all(other == first for other in others), (step, first, others)
    every = [y for s in range(4) for y in step_labels(1, 8, 1, s)]
    assert sorted(every) == sorted([c for c in range(4) for _ in range(8)])


def test_written_offsets_match_a_scan_and_each_sample_decodes(shard_dir: str) -> None:
    raw = json.loads(Path(shard_dir, INDEX).read_text())
    assert raw["__kind__"] == "wids-shard-index-v1" and raw["gpuinfra_classes"] == [
        "class0",
        "class1",
        "class2",
        "class3",
    ]
    assert [s["nsamples"] for s in raw["shardlist"]] == [10, 10, 10, 2]
    for entry in raw["shardlist"]:
        with open(os.path.join(shard_dir, entry["url"]), "rb") as f:
            n, offsets = shards.scan_offsets(f)
        assert (n, offsets) == (entry["nsamples"], entry["gpuinfra_offsets"])
    rescanned = shards.index_shards(shard_dir, raw["gpuinfra_classes"])
    assert rescanned["shardlist"] == raw["shardlist"]


def test_resume_from_local_shards_is_bit_identical(tmp_path: Path, shard_dir: str) -> None:
    full, parted = str(tmp_path / "full"), str(tmp_path / "parted")
    assert run_inprocess(folder_args(full, shard_dir, steps=10)) == exit_codes.OK
    args = folder_args(parted, shard_dir, steps=10)
    assert run_inprocess(args, hook=stop_at(6)) == exit_codes.PREEMPTED  # mid-epoch 2
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [7, 8, 9, 10]
    assert_same(load_final(full), load_final(parted))


def test_resume_from_local_shards_with_gradient_accumulation_is_bit_identical(
    tmp_path: Path, shard_dir: str
) -> None:
    """Micro-batches of 2, a global batch of 8: 4 accumulation rounds a step, each a ranged
    read of its own samples; a stop mid-epoch resumes at samples seen = step x 8."""
    accum = ("--batch-size=2", "--global-batch-size=8")
    full, parted = str(tmp_path / "full"), str(tmp_path / "parted")
    assert run_inprocess(folder_args(full, shard_dir, *accum, steps=10)) == exit_codes.OK
    args = folder_args(parted, shard_dir, *accum, steps=10)
    assert run_inprocess(args, hook=stop_at(6)) == exit_codes.PREEMPTED  # mid-epoch 2
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [7, 8, 9, 10]
    assert_same(load_final(full), load_final(parted))
    # not a run without accumulation in disguise: 8 samples a step in rounds of 2
    meta = load_state(parted, checkpoint_steps(parted)[-1])["meta"]
    assert (meta["accumulation"], meta["global_batch"], meta["batch_size"]) == (4, 8, 2), meta


def test_gpt_refuses_a_dataset_of_images(
    tmp_path: Path, shard_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpt = ["--model=gpt", "--device=cpu", "--max-steps=1", f"--checkpoint-uri={tmp_path}/ck"]
    for where in ([f"--data-dir={shard_dir}"], []):
        if not where:  # what a Job's dataset sets
            monkeypatch.setenv("DATASET_DIR", shard_dir)
        with pytest.raises(shards.UserError) as caught:
            parse_args([*gpt, *where])
        message = str(caught.value)
        assert shard_dir in message and "tar shards hold images" in message, message
        assert "--model gpt trains on synthetic tokens only" in message, message


def test_streamed_from_s3_with_irsa_trains_as_the_local_shards(
    tmp_path: Path,
    shard_dir: str,
    moto_s3: RecordingMoto,
    clean_cloud_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    admin: Any = moto_s3.admin  # type: ignore[attr-defined]
    for name in os.listdir(shard_dir):
        admin.upload_file(os.path.join(shard_dir, name), BUCKET, f"shards/{name}")
    token = tmp_path / "irsa-token"
    token.write_text("eyJhbGciOi.irsa-token.sig")
    for name, value in {
        "DATASET_DIR": f"s3://{BUCKET}/shards",  # what the Job hands the trainer
        "STORAGE_ENDPOINT_URL": moto_s3.ip_url,
        "STORAGE_REGION": "us-east-1",
        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/trainer",
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
        "AWS_STS_REGIONAL_ENDPOINTS": "regional",
        "AWS_ENDPOINT_URL_STS": moto_s3.ip_url,
    }.items():
        monkeypatch.setenv(name, value)
    streamed = str(tmp_path / "streamed")
    args = [a for a in folder_args(streamed, "unused", steps=10) if "--data-dir" not in a]
    assert run_inprocess(args, hook=stop_at(5)) == exit_codes.PREEMPTED
    gets = [r for r in moto_s3.storage_requests() if r.method == "GET" and ".tar" in r.path]
    # 8 samples a step, in runs of consecutive samples: at most 2 ranged GETs per batch, for
    # the 5 steps trained and the batches the 2 workers had prefetched (2 each) by the stop
    assert 5 <= len(gets) <= 2 * (5 + 2 * 2), len(gets)
    assert run_inprocess(args) == exit_codes.OK
    local = str(tmp_path / "local")
    assert run_inprocess(folder_args(local, shard_dir, steps=10)) == exit_codes.OK
    assert_same(load_final(streamed), load_final(local))
    issued = {c["AccessKeyId"] for c in moto_s3.sts_credentials}
    assert issued and all(k.startswith("ASIA") for k in issued)


def test_bad_shard_datasets_are_user_errors(tmp_path: Path, shard_dir: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / INDEX).write_text(json.dumps({"__kind__": "other"}))
    r = run_cli(*folder_args(str(tmp_path / "a"), str(empty)))
    assert r.returncode == 64 and "not a wids-shard-index-v1" in r.stderr
    raw = json.loads(Path(shard_dir, INDEX).read_text())
    for entry in raw["shardlist"]:
        del entry["gpuinfra_offsets"]
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / INDEX).write_text(json.dumps(raw))
    r = run_cli(*folder_args(str(tmp_path / "b"), str(bare)))
    assert r.returncode == 64 and "python -m trainer.shards index" in r.stderr

    changed = tmp_path / "changed"
    changed.mkdir()
    write_shards(make_image_folder(str(tmp_path / "img"), classes=2, per_class=4), str(changed))
    with tarfile.open(changed / "shard-000000.tar", "w") as tar:  # rewritten, fewer samples
        data = b"x"
        info = tarfile.TarInfo("000000000.cls")
        info.size = len(data)
        import io

        tar.addfile(info, io.BytesIO(data))
    index, files = load_index(str(changed), LOCAL)
    ds = shards._ShardDataset(index, files, 0, 0, 1, 8, 1, 12, 2)
    with pytest.raises(shards.UserError, match="changed since it was indexed"):
        ds[(0, 0)]


def test_the_writer_command_makes_shards_the_trainer_reads(tmp_path: Path, images: str) -> None:
    out = tmp_path / "out"
    assert shards.main(["write", "--from", images, "--to", str(out), "--samples-per-shard=16"]) == 0
    assert sorted(os.listdir(out)) == sorted([INDEX, "shard-000000.tar", "shard-000001.tar"])
    assert run_inprocess(folder_args(str(tmp_path / "ck"), str(out), steps=4)) == exit_codes.OK
    assert torch.load(Path(tmp_path, "ck", "final", "model.pt"), weights_only=True)
