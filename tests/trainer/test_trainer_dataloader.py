"""Image-folder data with loader worker processes: SIGTERM to the whole process group (as
Kubernetes and a plain ``torchrun`` deliver it) and bit-identical resume mid-epoch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from killing import kill_tree
from trainer_testlib import (
    REPO,
    assert_same,
    checkpoint_steps,
    folder_args,
    load_final,
    load_state,
    make_image_folder,
    run_inprocess,
    stop_at,
    subprocess_env,
    trainer_cmd,
)

from trainer import exit_codes


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_image_folder(str(tmp_path_factory.mktemp("images")))


def _sigterm_group(root: str, images: str, after_step: int) -> tuple[int, str]:
    """Start the trainer in a process group of its own; SIGTERM the group at a logged step."""
    args = folder_args(root, images, "--log-every-steps=1", "--no-tensorboard", steps=100_000)
    proc = subprocess.Popen(
        trainer_cmd(*args),
        cwd=REPO,
        env=subprocess_env(),
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        start_new_session=True,  # the trainer and its loader workers: one process group
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if f"step {after_step}/" in line:
                os.killpg(proc.pid, signal.SIGTERM)  # every process of the group, workers too
                break
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:  # deadlocked: leave nothing behind
            kill_tree(proc.pid)
            proc.wait()
    return proc.returncode, "".join(lines) + (rest or "")


def test_sigterm_to_the_process_group_reaches_the_emergency_checkpoint(
    tmp_path: Path, images: str
) -> None:
    """The loader workers get the signal too; they ignore it and the trainer checkpoints."""
    roots = [str(tmp_path / f"run{i}") for i in range(3)]
    with ThreadPoolExecutor(len(roots)) as pool:
        outcomes = list(pool.map(lambda r: _sigterm_group(r, images, 3), roots))
    for root, (code, log) in zip(roots, outcomes, strict=True):
        assert code == exit_codes.PREEMPTED, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
        steps = checkpoint_steps(root)
        assert len(steps) == 1 and steps[0] >= 3, (steps, log[-3000:])
        folder = Path(root, "checkpoints", f"step_{steps[0]:09d}")
        assert json.loads((folder / "manifest.json").read_text())["reason"] == "preempted"
        assert load_state(root, steps[0])["step"] == steps[0]


def test_image_folder_resume_mid_epoch_is_bit_identical(tmp_path: Path, images: str) -> None:
    full, parted = str(tmp_path / "full"), str(tmp_path / "parted")
    # 10 steps = 2.5 epochs of 4 steps; stopped after step 6, in the middle of epoch 1
    assert run_inprocess(folder_args(full, images, steps=10)) == exit_codes.OK
    args = folder_args(parted, images, steps=10)
    assert run_inprocess(args, hook=stop_at(6)) == exit_codes.PREEMPTED
    assert checkpoint_steps(parted) == [6]
    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == [7, 8, 9, 10]
    assert_same(load_final(full), load_final(parted))
    assert_same(load_state(full, 10), load_state(parted, 10))


def test_loader_workers_persist_across_epochs(
    tmp_path: Path, images: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One set of worker processes for the whole run, not a new one every epoch."""
    from torch.utils.data import dataloader

    started: list[int] = []
    original = dataloader._MultiProcessingDataLoaderIter.__init__

    def counting_init(self: object, loader: object) -> None:
        started.append(1)
        original(self, loader)  # type: ignore[arg-type]

    monkeypatch.setattr(dataloader._MultiProcessingDataLoaderIter, "__init__", counting_init)
    root = str(tmp_path / "run")
    assert run_inprocess(folder_args(root, images, steps=12)) == exit_codes.OK  # 3 epochs
    assert len(started) == 1, f"{len(started)} sets of loader workers started"


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="process groups and /proc: Linux only")
