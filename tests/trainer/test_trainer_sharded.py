"""Sharded (DCP) checkpoints in one process (FSDP over a process group of one): what survives
torn and corrupt checkpoints, a SIGKILL inside a write, pruning, a failed background write;
the staging buffers reused; the final export; mixed precision; the file format's checkpoints
refused, not misread."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from trainer_testlib import (
    HERE,
    REPO,
    assert_same,
    checkpoint_steps,
    gpt_args,
    load_final,
    load_sharded,
    run_inprocess,
    stop_at,
    subprocess_env,
    tiny_args,
)

from trainer import exit_codes, storage
from trainer.checkpoint import CheckpointManager, step_dir
from trainer.cli import main
from trainer.distributed import DistContext
from trainer.sharded import ShardedCheckpointer, make_stager

TOTAL = 12
#: dropout makes every rank's RNG state part of what a resume must restore
COMMON = ("--gpt-dropout=0.1", "--checkpoint-every-steps=2", "--no-tensorboard")
KILLED = -9


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One uninterrupted run of :data:`TOTAL` steps with the arguments of this file."""
    root = str(tmp_path_factory.mktemp("sharded-reference") / "run")
    assert run_inprocess(gpt_args(root, *COMMON, "--keep-last=10", steps=TOTAL)) == 0
    return root


def _warnings(log: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in log.records if r.levelno == logging.WARNING]


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_torn_and_corrupt_sharded_checkpoints_are_skipped_and_resume_is_bit_identical(
    tmp_path: Path,
    reference: str,
    trainer_log: pytest.LogCaptureFixture,
    recwarn: pytest.WarningsRecorder,
) -> None:
    root = str(tmp_path / "run")
    args = gpt_args(root, *COMMON, "--keep-last=10", steps=TOTAL)
    assert run_inprocess(args, hook=stop_at(11)) == exit_codes.PREEMPTED
    assert checkpoint_steps(root) == [2, 4, 6, 8, 10, 11]
    folder = {s: Path(root, step_dir(s)) for s in (2, 4, 6, 8, 10, 11)}
    (folder[11] / "manifest.json").unlink()  # partial: DCP's .metadata alone is not enough
    assert (folder[11] / ".metadata").exists()
    shard = folder[10] / "__0_0.distcp"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])  # truncated shard
    _flip(folder[8] / ".metadata")  # DCP's index rots
    (folder[6] / "__0_0.distcp").unlink()  # a shard lost
    # trainer.pt replaced by garbage, manifest updated to match: verified, but unloadable
    (folder[4] / "trainer.pt").write_bytes(b"not a torch file")
    info = storage.file_info(str(folder[4] / "trainer.pt"))
    manifest = json.loads((folder[4] / "manifest.json").read_text())
    manifest["files"]["trainer.pt"] = {"size": info.size, "sha256": info.sha256}
    (folder[4] / "manifest.json").write_text(json.dumps(manifest))

    trainer_log.clear()
    seen: list[int] = []
    resume = gpt_args(root, *COMMON, "--keep-last=2", steps=TOTAL)
    assert run_inprocess(resume, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == list(range(3, TOTAL + 1))  # from step 2, the newest intact one
    warned = "\n".join(_warnings(trainer_log))
    for step, why in (
        (11, "no manifest (partial write)"),
        (10, "size mismatch: __0_0.distcp is"),
        (8, "sha256 mismatch in .metadata"),
        (6, "__0_0.distcp missing"),
        (4, "unloadable: "),
    ):
        assert f"{step_dir(step)}: {why}" in warned, (step, warned)
    assert_same(load_final(reference), load_final(root), "final weights")
    ref, got = (
        load_sharded(reference, TOTAL, str(tmp_path)),
        load_sharded(root, TOTAL, str(tmp_path)),
    )
    assert_same(ref["dcp"], got["dcp"], "shards")
    assert_same(ref["trainer"], got["trainer"], "trainer.pt")
    # the new run wrote over the broken folders; pruning kept the newest 2 loadable ones and
    # removed the partial 11 below them
    assert checkpoint_steps(root) == [10, 12]
    # on purpose, so without DCP's warning about it (see trainer.sharded.REWRITE_WARNING)
    rewrites = [w for w in recwarn if "Detected an existing checkpoint" in str(w.message)]
    assert not rewrites, rewrites[0].message


def _truncate_shards(root: str, step: int) -> None:
    for shard in Path(root, step_dir(step)).glob("*.distcp"):
        shard.write_bytes(shard.read_bytes()[:100])


def test_newer_corrupt_sharded_checkpoints_do_not_make_pruning_delete_new_work(
    tmp_path: Path,
) -> None:
    root = str(tmp_path / "run")
    args = gpt_args(root, *COMMON, "--keep-last=2", steps=8)
    assert run_inprocess(args) == exit_codes.OK
    assert checkpoint_steps(root) == [6, 8]
    for step in (6, 8):
        _truncate_shards(root, step)
    # nothing loadable: starts at 0, writes 2 (periodic) and 3 (emergency)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED
    found = CheckpointManager(storage.LocalStorage(root)).find_latest()
    assert found is not None and found[0] == 3  # the work "exit 75" promised is there
    assert checkpoint_steps(root) == [2, 3, 6, 8]  # newer unloadable ones left alone
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen[0] == 4


def test_sigkill_inside_sharded_writes_then_resume_is_bit_identical(
    tmp_path: Path, reference: str, trainer_log: pytest.LogCaptureFixture
) -> None:
    root = str(tmp_path / "run")
    args = gpt_args(root, *COMMON, "--keep-last=10", "--async-checkpoint", steps=TOTAL)
    env = subprocess_env(OMP_NUM_THREADS="1")
    script = [sys.executable, os.path.join(HERE, "sigkill_in_write.py")]
    # 1. killed while the background thread writes the shard of step 4
    first = subprocess.run(
        [*script, "4", "__0_0.distcp", "2048", "--", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert first.returncode == KILLED, first.stderr[-3000:]
    files = {p.name for p in Path(root, step_dir(4)).iterdir()}
    assert "manifest.json" not in files and ".metadata" not in files, files
    # 2. the retry resumes from 2, and is killed after DCP finished step 6 (its .metadata is
    #    written) but while rank 0 writes trainer.pt: DCP's own "complete" is not enough
    second = subprocess.run(
        [*script, "6", "trainer.pt", "1", "--", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert second.returncode == KILLED, second.stderr[-3000:]
    assert "resumed from checkpoint step 4 " in second.stderr or (
        "resumed from checkpoint step 2 " in second.stderr
    ), second.stderr[-3000:]
    files = {p.name for p in Path(root, step_dir(6)).iterdir()}
    assert ".metadata" in files and "manifest.json" not in files, files

    trainer_log.clear()
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert f"{step_dir(6)}: no manifest (partial write)" in "\n".join(_warnings(trainer_log))
    assert seen[0] == 5  # from step 4, which the second process wrote
    assert_same(load_final(reference), load_final(root), "final weights")
    ref, got = (
        load_sharded(reference, TOTAL, str(tmp_path)),
        load_sharded(root, TOTAL, str(tmp_path)),
    )
    assert_same(ref["dcp"], got["dcp"], "shards")
    assert_same(ref["trainer"], got["trainer"], "trainer.pt")


def test_staging_buffers_are_allocated_once_and_the_staged_copy_is_training_safe(
    tmp_path: Path,
) -> None:
    model = torch.nn.Linear(64, 32)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 64)).sum().backward()
    opt.step()
    stager = make_stager(torch.device("cpu"))
    state = {"model": model.state_dict(), "optim": opt.state_dict()["state"]}
    first = stager.stage(state)
    ptrs = {k: t.data_ptr() for k, t in first["model"].items()}
    with torch.no_grad():
        model.weight.add_(1.0)
    second = stager.stage({"model": model.state_dict(), "optim": opt.state_dict()["state"]})
    assert {k: t.data_ptr() for k, t in second["model"].items()} == ptrs  # reused
    assert all(second["model"][k].data_ptr() != v.data_ptr() for k, v in model.state_dict().items())
    assert torch.equal(second["model"]["weight"], model.weight.detach())
    stager.close()

    # the checkpointer: what is written is the state at submit time, whatever comes after
    mgr = CheckpointManager(storage.LocalStorage(str(tmp_path)), keep_last=5)
    writer = ShardedCheckpointer(mgr, DistContext())
    trainer_state = {"step": 1, "meta": {}}
    writer.submit({"model": model.state_dict()}, trainer_state, 1, "periodic")
    before = model.weight.detach().clone()
    with torch.no_grad():
        model.weight.add_(1.0)  # training goes on while the write is in flight
    assert writer.wait() is not None
    writer.close()
    assert mgr.find_latest() is not None
    merged = load_sharded(str(tmp_path), 1, str(tmp_path))["dcp"]
    assert torch.equal(merged["model"]["weight"], before)


def test_failed_background_sharded_write_stops_the_run_with_its_own_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trainer_log: pytest.LogCaptureFixture
) -> None:
    original = CheckpointManager.commit_sharded

    def failing(self: CheckpointManager, state: Any, step: int, *rest: Any) -> Any:
        if step == 2:
            raise OSError("bucket unreachable")
        return original(self, state, step, *rest)

    monkeypatch.setattr(CheckpointManager, "commit_sharded", failing)
    root = str(tmp_path / "run")
    seen: list[int] = []
    args = gpt_args(root, *COMMON, "--async-checkpoint", steps=8)
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.CHECKPOINT_FAILED
    assert max(seen) <= 4  # seen at the next checkpoint at the latest
    assert CheckpointManager(storage.LocalStorage(root)).find_latest() is None
    errors = [r.getMessage() for r in trainer_log.records if r.levelno >= logging.ERROR]
    assert any("checkpoint of step 2 failed: OSError: bucket unreachable" in m for m in errors)
    assert not os.path.exists(os.path.join(root, "final"))


def test_a_checkpoint_of_the_other_format_is_refused_not_misread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path / "run")
    assert run_inprocess(tiny_args(root, steps=6), hook=stop_at(2)) == exit_codes.PREEMPTED
    capsys.readouterr()
    assert main(tiny_args(root, "--sharding=fsdp", steps=6)) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    assert "checkpoint of step 2" in err and "is in the file format" in err, err
    assert "this run writes dcp (--sharding fsdp" in err
    assert checkpoint_steps(root) == [2]  # untouched

    other = str(tmp_path / "other")
    assert run_inprocess(tiny_args(other, "--checkpoint-format=dcp", steps=6), stop_at(2)) == 75
    capsys.readouterr()
    assert main(tiny_args(other, steps=6)) == exit_codes.USER_ERROR
    assert "is in the dcp format" in capsys.readouterr().err


def test_ddp_with_sharded_checkpoints_resumes_bit_identically(tmp_path: Path) -> None:
    full, parted = str(tmp_path / "full"), str(tmp_path / "parted")
    extra = ("--checkpoint-format=dcp", "--async-checkpoint", "--checkpoint-every-steps=3")
    assert run_inprocess(tiny_args(full, *extra, steps=10)) == exit_codes.OK
    assert run_inprocess(tiny_args(parted, *extra, steps=10), stop_at(5)) == 75
    seen: list[int] = []
    assert run_inprocess(tiny_args(parted, *extra, steps=10), lambda t, s: seen.append(s)) == 0
    assert seen == [6, 7, 8, 9, 10]
    assert_same(load_final(full), load_final(parted))
    a, b = load_sharded(full, 10, str(tmp_path)), load_sharded(parted, 10, str(tmp_path))
    assert_same(a["dcp"], b["dcp"])
    assert a["trainer"]["meta"]["sharding"] == "ddp"


def test_final_export_is_plain_weights_in_the_dtype_asked_for(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    args = gpt_args(root, "--export-dtype=bf16", "--no-tensorboard", steps=3)
    assert run_inprocess(args) == exit_codes.OK
    about = json.loads(Path(root, "final", "model.json").read_text())
    assert about["dtype"] == "bf16" and about["step"] == 3 and about["model"] == "gpt"
    assert about["arch"] == {
        "vocab_size": 64,
        "seq_len": 16,
        "layers": 2,
        "dim": 32,
        "heads": 2,
    }
    # A fresh interpreter, no process group: torch.load and load_state_dict, nothing else.
    code = (
        "import json, sys, torch\n"
        "from trainer.models import GPT, GPTShape\n"
        "root = sys.argv[1]\n"
        "about = json.load(open(root + '/final/model.json'))\n"
        "sd = torch.load(root + '/final/model.pt', weights_only=True)\n"
        "assert all(type(t) is torch.Tensor for t in sd.values()), 'not plain tensors'\n"
        "dtypes = {t.dtype for t in sd.values()}\n"
        "assert dtypes == {torch.bfloat16}, dtypes\n"
        "model = GPT(GPTShape(**about['arch'])).to(torch.bfloat16)\n"
        "model.load_state_dict(sd)\n"
        "assert not torch.distributed.is_initialized()\n"
        "logits = model(torch.zeros(1, 16, dtype=torch.long))\n"
        "print(tuple(logits.shape), sum(t.numel() for t in sd.values()))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, root],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[:3] == ["(1,", "16,", "64)"]
    assert int(proc.stdout.split()[-1]) == about["parameters"]
    # the same values as the last checkpoint's fp32 weights, rounded to bf16
    shards = load_sharded(root, 3, str(tmp_path))["dcp"]["model"]
    final = load_final(root)
    assert all(torch.equal(final[k], v.to(torch.bfloat16)) for k, v in shards.items())


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_fsdp_mixed_precision_trains_and_keeps_its_state(tmp_path: Path, precision: str) -> None:
    root = str(tmp_path / "run")
    args = gpt_args(root, f"--precision={precision}", "--no-tensorboard", steps=3)
    assert run_inprocess(args, hook=stop_at(2)) == exit_codes.PREEMPTED
    saved = load_sharded(root, 2, str(tmp_path))
    assert saved["trainer"]["meta"]["precision"] == precision
    if precision == "fp16":  # the GradScaler's state goes with trainer.pt
        assert saved["trainer"]["scaler"]["scale"] > 0, saved["trainer"]["scaler"]
    assert all(t.dtype == torch.float32 for t in saved["dcp"]["model"].values())  # fp32 master
    assert run_inprocess(args) == exit_codes.OK
    assert all(torch.isfinite(t).all() for t in load_final(root).values())
