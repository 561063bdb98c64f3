"""SIGKILL at chosen steps, restart until done: the final weights equal an uninterrupted run's.

SIGKILL gives the trainer no chance to checkpoint, so each restart resumes from the newest
complete periodic checkpoint and repeats the steps after it. One process per seed is killed
from outside when it logs a step chosen from the seed; the next one is killed inside a
checkpoint write (``sigkill_in_write.py``), which must leave a partial checkpoint that the
last run skips. Then the same with two processes under ``trainer.launch`` (torchrun, gloo).
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from killing import kill_tree, running, sigkill_at_step
from trainer_testlib import (
    HERE,
    REPO,
    assert_same,
    load_final,
    load_state,
    run_inprocess,
    subprocess_env,
    tiny_args,
    trainer_cmd,
)

from trainer import exit_codes

TOTAL = 40  # steps: 10 epochs of 4 steps
KILLED = -signal.SIGKILL
#: seed -> (file the second kill interrupts, asynchronous checkpoints)
PLANS = {0: ("state.pt", False), 1: ("manifest.json", True), 2: ("state.pt", True)}
# The subprocesses run with OMP_NUM_THREADS=1 and CPU kernels round differently with another
# thread count, so the in-process runs they are compared with use one thread too.
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


@pytest.fixture
def one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _args(root: str, seed: int) -> list[str]:
    every = random.Random(seed).choice((2, 3))
    async_ = ["--async-checkpoint"] if PLANS[seed][1] else []
    return tiny_args(
        root,
        f"--seed={seed}",
        f"--checkpoint-every-steps={every}",
        "--keep-last=3",
        "--log-every-steps=1",
        "--no-tensorboard",
        *async_,
        steps=TOTAL,
    )


def _complete_steps(root: str) -> list[int]:
    folder = Path(root, "checkpoints")
    if not folder.is_dir():
        return []
    return sorted(int(d.name[5:]) for d in folder.glob("step_*") if (d / "manifest.json").is_file())


@dataclass
class Lives:
    """What the two killed processes of one seed did."""

    first_kill_at: int  # the step after which the first process was killed (at the earliest)
    second_kill_in: int  # the checkpoint step whose write the second process died in
    resume_from: int  # newest complete checkpoint the last run must resume from (0: none)


def _kill_twice(root: str, seed: int) -> Lives:
    """The two killed processes of one seed (runs in a thread: subprocesses and files only)."""
    rng = random.Random(seed)
    every = rng.choice((2, 3))
    name, _ = PLANS[seed]
    args = _args(root, seed)

    at = rng.randint(3, 9)
    first = sigkill_at_step(trainer_cmd(*args), at, env=ONE_THREAD, timeout=240)
    assert first.returncode == KILLED, first.log[-3000:]
    assert at <= first.last_logged_step < TOTAL, first.log[-3000:]
    assert not Path(root, "final").exists()
    done = _complete_steps(root)
    assert all(s % every == 0 and s <= first.last_logged_step for s in done), done
    newest = done[-1] if done else 0

    # The second process resumes from `newest` and dies inside the write of a later checkpoint.
    later = [s for s in range(every, TOTAL, every) if s > newest]
    assert later, f"the first kill landed too late: {first.last_logged_step}"
    in_write = rng.choice(later[:5])
    nbytes = 4096 if name == "state.pt" else 1
    cmd = [sys.executable, os.path.join(HERE, "sigkill_in_write.py")]
    second = subprocess.run(
        [*cmd, str(in_write), name, str(nbytes), "--", *args],
        cwd=REPO,
        env=subprocess_env(**ONE_THREAD),
        capture_output=True,
        text=True,
        timeout=240,  # generous: a shared 2-core machine under load took > 60 s
    )
    assert second.returncode == KILLED, second.stderr[-3000:]
    assert f"resumed from checkpoint step {newest} " in second.stderr or newest == 0
    folder = Path(root, "checkpoints", f"step_{in_write:09d}")
    files = {p.name: p.stat().st_size for p in folder.iterdir()}
    assert "manifest.json" not in files, files  # what a kill in the write leaves: partial
    partial = [n for n, size in files.items() if n.startswith(f"{name}.tmp.") and size >= nbytes]
    assert partial, files
    if name == "manifest.json":
        assert "state.pt" in files, files  # data complete, manifest not: still partial
    before = [s for s in _complete_steps(root) if s < in_write]
    return Lives(at, in_write, before[-1] if before else 0)


def test_sigkill_at_random_steps_then_resume_is_bit_identical(
    tmp_path: Path, one_thread: None, trainer_log: pytest.LogCaptureFixture
) -> None:
    roots = {seed: str(tmp_path / f"killed-{seed}") for seed in PLANS}
    # The seeds' killed processes run side by side. This thread waits meanwhile (and holds no
    # GIL), so each watcher sees its step line at once and the kill lands close to it.
    with ThreadPoolExecutor(len(PLANS)) as pool:
        futures = {seed: pool.submit(_kill_twice, roots[seed], seed) for seed in PLANS}
        lives = {seed: f.result(timeout=600) for seed, f in futures.items()}
    refs = {seed: str(tmp_path / f"ref-{seed}") for seed in PLANS}
    for seed, ref in refs.items():
        assert run_inprocess(_args(ref, seed)) == exit_codes.OK

    for seed, root in roots.items():
        life = lives[seed]
        trainer_log.clear()
        seen: list[int] = []
        code = run_inprocess(_args(root, seed), hook=lambda t, s, into=seen: into.append(s))
        assert code == exit_codes.OK
        assert seen == list(range(life.resume_from + 1, TOTAL + 1)), (seed, life, seen[:3])
        skipped = f"step_{life.second_kill_in:09d}: no manifest (partial write)"
        warnings = [r.getMessage() for r in trainer_log.records if r.levelno == logging.WARNING]
        assert any(skipped in w for w in warnings), (seed, life, warnings)
        assert_same(load_final(refs[seed]), load_final(root), f"seed {seed} final")
        # the whole state (optimizer, scheduler, RNG) too, not only the weights
        assert_same(load_state(refs[seed], TOTAL), load_state(root, TOTAL), f"seed {seed}")

    # Not vacuous: the seeds train to different weights.
    with pytest.raises(AssertionError):
        assert_same(load_final(refs[0]), load_final(refs[1]))


def _launch(root: str) -> list[str]:
    # 64 samples, a global batch of 16 from 2 ranks x 2 accumulation rounds of 4: 4 steps per
    # epoch; the first round of each step runs without DDP's gradient all-reduce (no_sync)
    args = tiny_args(
        root,
        "--synthetic-samples=64",
        "--global-batch-size=16",
        "--checkpoint-every-steps=2",
        "--log-every-steps=1",
        "--no-tensorboard",
        steps=16,
    )
    args = [a if a != "--batch-size=8" else "--batch-size=4" for a in args]
    launcher = [sys.executable, "-m", "trainer.launch", "--standalone", "--nproc-per-node=2"]
    return [*launcher, "-m", "trainer", *args]


def test_two_processes_killed_and_resumed_match_an_uninterrupted_run(tmp_path: Path) -> None:
    ref, root = str(tmp_path / "ref"), str(tmp_path / "killed")
    # TMPDIR: the exit-status folder a SIGKILLed launcher cannot remove stays in tmp_path.
    env = subprocess_env(TMPDIR=str(tmp_path), **ONE_THREAD)
    ref_log = tmp_path / "uninterrupted.log"
    with open(ref_log, "w") as err:  # runs alongside the killed and the resumed launch
        uninterrupted = subprocess.Popen(_launch(ref), cwd=REPO, env=env, stderr=err)
    try:
        # the whole tree at once (launcher, torchrun, both workers), as when a node dies
        killed = sigkill_at_step(_launch(root), 5, tree=True, env=env, timeout=90)
        assert killed.returncode == KILLED, killed.log[-3000:]
        assert len(killed.pids) >= 4, killed.pids  # launcher, torchrun, 2 workers
        deadline = time.monotonic() + 10
        while any(map(running, killed.pids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(running, killed.pids)), killed.pids
        assert not Path(root, "final").exists()
        done = _complete_steps(root)
        assert done and 4 <= done[-1] < 16, (done, killed.log[-3000:])

        resumed = subprocess.run(
            _launch(root), cwd=REPO, env=env, capture_output=True, text=True, timeout=90
        )
        uninterrupted.wait(timeout=90)
    finally:
        if uninterrupted.poll() is None:  # a failed assertion above: leave no workers behind
            kill_tree(uninterrupted.pid)
            uninterrupted.wait()
    assert uninterrupted.returncode == exit_codes.OK, ref_log.read_text()[-3000:]
    log = resumed.stderr
    assert resumed.returncode == exit_codes.OK, log[-3000:]
    assert "workers [0, 0] -> exit 0" in log, log[-3000:]
    for rank in (0, 1):  # every rank loaded the checkpoint rank 0 chose
        line = f"[trainer rank{rank}] INFO resumed from checkpoint step {done[-1]} "
        assert line in log, log[-3000:]
    assert_same(load_final(ref), load_final(root), "final")
    state = load_state(root, 16)
    assert state["meta"]["world_size"] == 2 and len(state["rng"]) == 2
    assert state["meta"]["accumulation"] == 2
    assert_same(load_state(ref, 16), state, "state")
