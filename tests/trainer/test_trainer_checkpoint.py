"""Checkpoint format: atomic writes, manifest last, pruning, skipping bad checkpoints,
asynchronous writes, GradScaler state, final weights and event files."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest
import torch
from trainer_testlib import (
    assert_same,
    checkpoint_steps,
    load_final,
    load_state,
    run_inprocess,
    stop_at,
    tiny_args,
)

from trainer import exit_codes, storage
from trainer.checkpoint import AsyncCheckpointer, CheckpointManager
from trainer.config import parse_args
from trainer.distributed import DistContext
from trainer.models import build_model
from trainer.train import Trainer


@pytest.fixture
def write_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records, in order, every file the trainer's storage completes."""
    order: list[str] = []
    original = storage.LocalStorage.write_file

    def recording(self: storage.LocalStorage, rel: str, produce: storage.Producer) -> object:
        info = original(self, rel, produce)
        order.append(rel)
        return info

    monkeypatch.setattr(storage.LocalStorage, "write_file", recording)
    return order


def test_manifest_written_last_atomically_and_keep_last(
    tmp_path: Path, write_log: list[str]
) -> None:
    root = str(tmp_path / "run")
    args = tiny_args(root, "--checkpoint-every-steps=2", "--keep-last=2", steps=9)
    assert run_inprocess(args) == exit_codes.OK
    ckpt_writes = [w for w in write_log if w.startswith("checkpoints/")]
    # every checkpoint: state first, manifest last (steps 2, 4, 6, 8 and the final 9)
    expected = []
    for s in (2, 4, 6, 8, 9):
        expected += [
            f"checkpoints/step_{s:09d}/state.pt",
            f"checkpoints/step_{s:09d}/manifest.json",
        ]
    assert ckpt_writes == expected
    assert checkpoint_steps(root) == [8, 9]  # keep-last 2
    leftovers = [f for _, _, fs in os.walk(root) for f in fs if ".tmp" in f]
    assert leftovers == []
    folder = os.path.join(root, "checkpoints", "step_000000009")
    manifest = json.loads(Path(folder, "manifest.json").read_text())
    assert manifest["step"] == 9 and manifest["reason"] == "final"
    info = storage.file_info(os.path.join(folder, "state.pt"))
    assert manifest["files"]["state.pt"] == {"size": info.size, "sha256": info.sha256}


def test_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    st = storage.LocalStorage(str(tmp_path))

    def boom(w: storage.HashingWriter) -> None:
        w.write(b"half a checkpoint")
        raise OSError("disk full")

    with pytest.raises(OSError):
        st.write_file("checkpoints/step_000000001/state.pt", boom)
    assert os.listdir(tmp_path / "checkpoints" / "step_000000001") == []
    st.write_bytes("a/b.bin", b"xyz")
    assert (tmp_path / "a" / "b.bin").read_bytes() == b"xyz"


def test_partial_and_corrupt_checkpoints_are_skipped(
    tmp_path: Path, trainer_log: pytest.LogCaptureFixture
) -> None:
    root = str(tmp_path / "run")
    args = tiny_args(root, "--checkpoint-every-steps=2", "--keep-last=10", steps=8)
    assert run_inprocess(args) == 0
    assert checkpoint_steps(root) == [2, 4, 6, 8]
    ck = os.path.join(root, "checkpoints")
    # step 8: partial (no manifest)
    os.remove(os.path.join(ck, "step_000000008", "manifest.json"))
    # step 6: one byte flipped -> checksum mismatch
    p6 = os.path.join(ck, "step_000000006", "state.pt")
    data = bytearray(Path(p6).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(p6).write_bytes(bytes(data))
    # step 4: content replaced by garbage with a matching manifest -> unloadable
    p4 = os.path.join(ck, "step_000000004", "state.pt")
    Path(p4).write_bytes(b"not a torch file")
    info = storage.file_info(p4)
    m4 = os.path.join(ck, "step_000000004", "manifest.json")
    manifest = json.loads(Path(m4).read_text())
    manifest["files"]["state.pt"] = {"size": info.size, "sha256": info.sha256}
    Path(m4).write_text(json.dumps(manifest))

    seen: list[int] = []
    assert run_inprocess(tiny_args(root, steps=10), hook=lambda t, s: seen.append(s)) == 0
    assert seen[0] == 3  # resumed from step 2, the newest good one
    warnings = [r.getMessage() for r in trainer_log.records if r.levelno == logging.WARNING]
    assert any("step_000000008" in w and "no manifest" in w for w in warnings), warnings
    assert any("step_000000006" in w and "sha256 mismatch" in w for w in warnings), warnings
    assert any("step_000000004" in w and "unloadable" in w for w in warnings), warnings


def test_async_checkpoint_has_same_content_as_sync(tmp_path: Path) -> None:
    sync_root, async_root = str(tmp_path / "sync"), str(tmp_path / "async")
    common = ("--checkpoint-every-steps=3", "--keep-last=10")
    assert run_inprocess(tiny_args(sync_root, *common, steps=7)) == 0
    assert run_inprocess(tiny_args(async_root, *common, "--async-checkpoint", steps=7)) == 0
    assert checkpoint_steps(sync_root) == checkpoint_steps(async_root) == [3, 6, 7]
    for s in (3, 6, 7):
        assert_same(load_state(sync_root, s), load_state(async_root, s))


def test_async_checkpointer_reuses_buffers(tmp_path: Path) -> None:
    mgr = CheckpointManager(storage.LocalStorage(str(tmp_path)), keep_last=5)
    ac = AsyncCheckpointer(mgr)
    model = build_model("simplecnn", 1, 12, 10)
    ac.submit({"step": 1, "model": model.state_dict()}, step=1)
    first_bytes = ac.allocated_bytes
    assert first_bytes == sum(t.numel() * 4 for t in model.state_dict().values())
    ptrs = {k: v.data_ptr() for k, v in ac._buffers.items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)  # training goes on while the write is in flight: staged copy is safe
    ac.submit({"step": 2, "model": model.state_dict()}, step=2)
    assert ac.allocated_bytes == first_bytes  # no new allocation the second time
    assert {k: v.data_ptr() for k, v in ac._buffers.items()} == ptrs
    assert ac.wait() is not None
    s1, _ = mgr.load(1)
    s2, _ = mgr.load(2)
    assert not torch.equal(s1["model"]["fc2.bias"], s2["model"]["fc2.bias"])
    assert torch.equal(s2["model"]["fc2.bias"], model.state_dict()["fc2.bias"])


def test_fp16_grad_scaler_state_saved_and_restored(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    args = tiny_args(root, "--precision=fp16", steps=6)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED
    saved = load_state(root, 3)["scaler"]
    assert saved["scale"] > 0 and "_growth_tracker" in saved
    assert saved["_growth_tracker"] == 3  # three finite steps since the start
    trainer = Trainer(parse_args(args), DistContext())
    assert trainer.scaler.is_enabled() and trainer.recipe.precision == "fp16"
    trainer.resume()
    assert trainer.step == 3
    assert trainer.scaler.state_dict() == saved
    assert run_inprocess(args) == 0
    assert load_state(root, 6)["meta"]["precision"] == "fp16"


def test_bf16_path_runs(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    assert run_inprocess(tiny_args(root, "--precision=bf16", "--channels-last", steps=4)) == 0
    state = load_state(root, 4)
    assert state["meta"]["precision"] == "bf16" and state["scaler"] == {}
    assert all(torch.isfinite(t).all() for t in load_final(root).values())


def test_final_model_is_a_loadable_state_dict_and_tb_files_exist(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    assert run_inprocess(tiny_args(root, steps=4)) == 0
    sd = load_final(root)
    assert all(isinstance(v, torch.Tensor) for v in sd.values())
    model = build_model("simplecnn", 1, 12, 10)
    model.load_state_dict(sd)  # strict: every key matches
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tb = os.path.join(root, "tb")
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(tb))
    acc = EventAccumulator(tb)
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"train/loss", "perf/images_per_s", "perf/step_time_s"} <= tags
    assert [e.step for e in acc.Scalars("train/loss")] == [2, 4]


def test_missing_tensorboard_warns_once_and_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trainer_log: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import fails
    root = str(tmp_path / "run")
    assert run_inprocess(tiny_args(root, steps=4)) == exit_codes.OK
    msgs = [r.getMessage() for r in trainer_log.records]
    assert sum("TensorBoard logging disabled" in m for m in msgs) == 1
    assert not os.path.exists(os.path.join(root, "tb"))
    assert os.path.exists(os.path.join(root, "final", "model.pt"))
