"""Fault injection: each way the trainer once lost work, or reported the wrong thing, while
saying that it did not (issue #17, findings 1, 3, 5, 6, 7, 8)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from trainer_testlib import (
    REPO,
    assert_same,
    checkpoint_steps,
    load_state,
    run_inprocess,
    stop_at,
    subprocess_env,
    tiny_args,
)

from trainer import exit_codes, storage
from trainer.checkpoint import CheckpointManager, step_dir
from trainer.cli import main
from trainer.data import epoch_permutation, shard_batches, step_samples


def _truncate(root: str, step: int) -> None:
    path = Path(root, step_dir(step), "state.pt")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _latest(root: str) -> int | None:
    found = CheckpointManager(storage.LocalStorage(root)).find_latest()
    return None if found is None else found[0]


# ----------------------------------------------------------------------------- finding 1


def test_corrupt_newer_checkpoints_do_not_make_pruning_delete_new_work(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    every = ("--checkpoint-every-steps=2", "--keep-last=2")
    assert run_inprocess(tiny_args(root, *every, steps=8)) == exit_codes.OK
    assert checkpoint_steps(root) == [6, 8]
    for step in (6, 8):  # keep-last newer checkpoints, both truncated
        _truncate(root, step)

    # Nothing loadable: starts at 0, writes step 2 (periodic) and 3 (emergency).
    assert run_inprocess(tiny_args(root, *every, steps=8), hook=stop_at(3)) == 75
    assert _latest(root) == 3  # the work that "exit 75" promised is there
    assert checkpoint_steps(root) == [2, 3, 6, 8]  # newer unloadable ones are left alone
    seen: list[int] = []
    assert run_inprocess(tiny_args(root, *every, steps=8), hook=lambda t, s: seen.append(s)) == 0
    assert seen[0] == 4


def test_a_fresh_run_under_a_used_uri_outranks_the_old_runs_checkpoints(tmp_path: Path) -> None:
    root, ref = str(tmp_path / "run"), str(tmp_path / "ref")
    every = ("--checkpoint-every-steps=2", "--keep-last=2")
    assert run_inprocess(tiny_args(root, *every, steps=10)) == exit_codes.OK  # run A: 8, 10

    fresh = tiny_args(root, *every, "--seed=1", "--no-resume", steps=10)
    assert run_inprocess(fresh, hook=stop_at(3)) == exit_codes.PREEMPTED  # run B: 2, 3
    assert _latest(root) == 3
    assert set(checkpoint_steps(root)) >= {3}

    # The restart (the Job's retry, without --no-resume) goes on with run B, not run A.
    again = tiny_args(root, *every, "--seed=1", steps=10)
    seen: list[int] = []
    assert run_inprocess(again, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [4, 5, 6, 7, 8, 9, 10]
    assert run_inprocess(tiny_args(ref, *every, "--seed=1", steps=10)) == exit_codes.OK
    assert_same(load_state(ref, 10), load_state(root, 10))
    assert checkpoint_steps(root) == [8, 10]  # run A's are pruned once B has keep-last


def test_pruning_never_removes_the_checkpoint_just_written(tmp_path: Path) -> None:
    st = storage.LocalStorage(str(tmp_path))
    old = CheckpointManager(st, keep_last=1)
    old.generation = 5
    for step in (10, 20):
        old.save({"step": step}, step)
    new = CheckpointManager(st, keep_last=1)
    new.generation = 6
    new.save({"step": 1}, 1)
    assert checkpoint_steps(str(tmp_path)) == [1]
    assert _latest(str(tmp_path)) == 1


# ----------------------------------------------------------------------------- finding 3


def test_failed_background_write_stops_the_run_with_its_own_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trainer_log: pytest.LogCaptureFixture
) -> None:
    original = CheckpointManager.save

    def failing(self: CheckpointManager, state: dict[str, Any], step: int, reason: str) -> Any:
        if step == 2:
            raise OSError("bucket unreachable")
        return original(self, state, step, reason)

    monkeypatch.setattr(CheckpointManager, "save", failing)
    root = str(tmp_path / "run")
    args = tiny_args(root, "--async-checkpoint", "--checkpoint-every-steps=2", steps=8)
    seen: list[int] = []
    code = run_inprocess(args, hook=lambda t, s: seen.append(s))
    assert code == exit_codes.CHECKPOINT_FAILED == 74
    assert max(seen) <= 4  # surfaced at the next save at the latest, not at the end
    assert checkpoint_steps(root) == []  # nothing pretends to be saved
    errors = [r.getMessage() for r in trainer_log.records if r.levelno >= logging.ERROR]
    assert any("checkpoint of step 2 failed: OSError: bucket unreachable" in m for m in errors)
    assert not os.path.exists(os.path.join(root, "final"))


def test_failed_emergency_checkpoint_is_not_reported_as_preempted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(CheckpointManager, "save", failing)
    root = str(tmp_path / "run")
    assert run_inprocess(tiny_args(root, steps=8), hook=stop_at(3)) == 74


# ----------------------------------------------------------------------------- finding 5


def _stopped_at_2(root: str, *extra: str) -> None:
    """A checkpoint in the middle of epoch 0 (4 steps of 8 samples)."""
    args = tiny_args(root, *extra, steps=8)
    assert run_inprocess(args, hook=stop_at(2)) == exit_codes.PREEMPTED


def test_changed_batch_size_on_resume_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path / "run")
    _stopped_at_2(root)
    capsys.readouterr()
    args = [a for a in tiny_args(root, steps=8) if not a.startswith("--batch-size")]
    assert main([*args, "--batch-size=4"]) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("trainer: error:")]
    assert len(lines) == 1 and "global batch of 8 samples" in lines[0], err
    assert "--batch-size 4 x 1" in lines[0] and "Keep --batch-size x processes = 8" in lines[0]
    assert checkpoint_steps(root) == [2]  # nothing trained, nothing written


def _as_if_written_by(root: str, step: int, world: int, batch: int) -> None:
    """Rewrite a checkpoint as if ``world`` processes of ``batch`` samples had written it."""
    mgr = CheckpointManager(storage.LocalStorage(root), keep_last=10)
    state, manifest = mgr.load(step)
    state["meta"].update(world_size=world, batch_size=batch, global_batch=world * batch)
    state["rng"] = state["rng"] * world
    mgr.generation = manifest["generation"]
    mgr.save(state, step)


def test_changed_world_size_resumes_exactly_with_the_same_global_batch(
    tmp_path: Path, trainer_log: pytest.LogCaptureFixture
) -> None:
    root = str(tmp_path / "run")
    _stopped_at_2(root)
    _as_if_written_by(root, 2, world=2, batch=4)  # 2 x 4 = this run's 1 x 8
    seen: list[int] = []
    assert run_inprocess(tiny_args(root, steps=8), hook=lambda t, s: seen.append(s)) == 0
    assert seen == [3, 4, 5, 6, 7, 8]
    infos = [r.getMessage() for r in trainer_log.records]
    assert any(
        "maps exactly (step 2, 16 samples seen)" in m and "2 process(es) of batch 4 x 1" in m
        for m in infos
    ), infos


def test_changed_world_size_with_another_global_batch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path / "run")
    _stopped_at_2(root)
    _as_if_written_by(root, 2, world=2, batch=8)  # 16 samples a step; this run has 8
    capsys.readouterr()
    assert main(tiny_args(root, steps=8)) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    assert "global batch of 16 samples (--batch-size 8 x 2 process(es))" in err, err


def test_a_global_batch_is_the_same_samples_however_it_is_split() -> None:
    """Why the same global batch remaps exactly: step k uses the permutation's k-th slice of
    G samples whatever the split of G over processes and accumulation rounds."""
    n, seed, epoch, g = 100, 3, 2, 16
    # (processes, batch per process, accumulation rounds), each 16 samples a step
    splits = [(1, 16, 1), (2, 8, 1), (4, 4, 1), (8, 2, 1), (1, 8, 2), (1, 4, 4), (2, 4, 2)]
    per_split = []
    for world, batch, accum in splits:
        ranks = [shard_batches(n, seed, epoch, r, world, batch, accum) for r in range(world)]
        steps = len(ranks[0])
        assert all(len(micro) == accum for r in ranks for micro in r)
        per_split.append(
            [sorted(int(i) for r in ranks for mb in r[k] for i in mb) for k in range(steps)]
        )
    assert all(len(s) == n // g for s in per_split)
    assert all(s == per_split[0] for s in per_split)
    assert per_split[0][3] == sorted(step_samples(n, seed, epoch, g, 3))
    other = [shard_batches(n, seed, epoch, 0, 1, 8)[k][0].tolist() for k in range(2)]
    assert sorted(other[0] + other[1]) == per_split[0][0]  # G=8 is a different stepping
    # without accumulation, rank r takes perm[r::world] in batches (DistributedSampler's
    # order), so checkpoints of #17 resume onto the same samples
    perm = epoch_permutation(n, seed, epoch)
    assert shard_batches(n, seed, epoch, 1, 4, 4)[2][0].tolist() == perm[1::4][8:12].tolist()


def test_changed_data_set_size_is_refused(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    _stopped_at_2(root)
    args = [a for a in tiny_args(root, steps=8) if not a.startswith("--synthetic")]
    assert main([*args, "--synthetic-samples=48"]) == exit_codes.USER_ERROR


# ----------------------------------------------------------------------------- finding 6


def test_unwritable_checkpoint_uri_exits_64_with_one_line_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(tiny_args(str(blocker / "run"), steps=4)) == exit_codes.USER_ERROR
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("trainer: error:")]
    assert len(lines) == 1 and "is not writable: NotADirectoryError" in lines[0], err
    assert "Traceback" not in err


# ----------------------------------------------------------------------------- finding 7


@pytest.mark.parametrize(
    "manifest",
    [
        {"step": 4, "files": {"state.pt": 7}},
        {"step": 4, "files": ["state.pt"]},
        {"step": 4, "files": {"state.pt": {"size": "12", "sha256": None}}},
        {"step": "4", "files": {"state.pt": {"size": 1, "sha256": "x"}}},
        {"step": 4, "generation": "two", "files": {"state.pt": {"size": 1, "sha256": "x"}}},
        [4, "state.pt"],
        "state.pt",
        None,
    ],
)
def test_manifest_of_valid_json_with_wrong_types_is_skipped(
    tmp_path: Path, trainer_log: pytest.LogCaptureFixture, manifest: Any
) -> None:
    root = str(tmp_path)
    mgr = CheckpointManager(storage.LocalStorage(root), keep_last=10)
    for step in (2, 4):
        mgr.save({"step": step}, step)
    Path(root, step_dir(4), "manifest.json").write_text(json.dumps(manifest))
    found = CheckpointManager(storage.LocalStorage(root)).find_latest()
    assert found is not None and found[0] == 2
    warned = [r.getMessage() for r in trainer_log.records if r.levelno == logging.WARNING]
    assert any("step_000000004: invalid manifest" in m for m in warned), warned


# ----------------------------------------------------------------------------- finding 8


def test_importing_the_trainer_leaves_the_warning_filters_alone() -> None:
    code = (
        "import warnings, torch, numpy; before = list(warnings.filters); "
        "import trainer.train, trainer.cli, trainer.checkpoint, trainer.data; "
        "assert warnings.filters == before, 'trainer changed the global warning filters'"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_fp16_skipped_first_step_does_not_warn(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run_inprocess(tiny_args(str(tmp_path / "run"), "--precision=fp16", steps=3)) == 0
    assert not [w for w in caught if "lr_scheduler.step()" in str(w.message)]


def test_no_dead_code() -> None:
    """vulture finds nothing unused in the trainer (its tests and benchmarks count as users)."""
    vulture = os.path.join(os.path.dirname(sys.executable), "vulture")
    assert os.path.exists(vulture), "pip install -r trainer/requirements-test.txt"
    whitelist = os.path.join(REPO, "tests", "trainer", "vulture_whitelist.py")
    paths = ["trainer", "tests/trainer", whitelist]
    proc = subprocess.run(
        [vulture, *paths, "--min-confidence=60"], cwd=REPO, capture_output=True, text=True
    )
    unused = [ln for ln in proc.stdout.splitlines() if ln.startswith("trainer/")]
    assert not unused and not proc.stderr, proc.stdout + proc.stderr
