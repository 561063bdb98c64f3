"""SIGTERM in a real process and 2-rank DDP with gloo under torchrun (via trainer.launch)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from killing import kill_tree
from trainer_testlib import (
    REPO,
    checkpoint_steps,
    load_state,
    run_inprocess,
    subprocess_env,
    tiny_args,
)

from trainer import exit_codes


def _start(cmd: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cmd, cwd=REPO, env=subprocess_env(), stderr=subprocess.PIPE, text=True, bufsize=1
    )


#: an upper bound only, for a run that hangs or dies: the wait ends at the line it waits for.
#: Starting torchrun and two workers that import torch took over 30 s at load average 16.
TIMEOUT_S = 240.0


def _wait_for(proc: subprocess.Popen[str], needle: str) -> list[str]:
    """``proc``'s stderr lines up to the first that contains ``needle``. At the deadline the
    process tree is killed, so a silent process ends the blocking read instead of hanging."""
    lines: list[str] = []
    assert proc.stderr is not None
    timer = threading.Timer(TIMEOUT_S, kill_tree, args=(proc.pid,))
    timer.start()
    try:
        for line in iter(proc.stderr.readline, ""):
            lines.append(line)
            if needle in line:
                return lines
    finally:
        timer.cancel()
    raise AssertionError(f"{needle!r} not seen within {TIMEOUT_S:g} s:\n{''.join(lines)}")


def test_sigterm_writes_checkpoint_exits_75_and_resume_continues(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    args = tiny_args(root, "--log-every-steps=5", steps=200)
    proc = _start([sys.executable, "-m", "trainer", *args])
    head = _wait_for(proc, "step 5/200")
    proc.send_signal(signal.SIGTERM)
    err = "".join(head) + proc.communicate(timeout=TIMEOUT_S)[1]
    assert proc.returncode == exit_codes.PREEMPTED == 75, err
    steps = checkpoint_steps(root)
    assert len(steps) == 1 and 5 <= steps[0] < 200, (steps, err)
    reached = steps[0]
    folder = Path(root, "checkpoints", f"step_{reached:09d}")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["reason"] == "preempted"
    assert f"emergency checkpoint of step {reached} took" in err
    assert load_state(root, reached)["step"] == reached

    seen: list[int] = []
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == list(range(reached + 1, 201))  # continues right after the step reached
    assert checkpoint_steps(root)[-1] == 200
    assert os.path.exists(os.path.join(root, "final", "model.pt"))


def test_ddp_gloo_two_ranks_rank0_writes_one_checkpoint(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    # 64 samples over 2 ranks of batch 8: 4 steps per epoch
    args = tiny_args(root, "--synthetic-samples=64", "--log-every-steps=20", steps=5000)
    launch = ["--standalone", "--nproc-per-node=2"]  # standalone: a free port, never 29500
    cmd = [sys.executable, "-m", "trainer.launch", *launch, "-m", "trainer", *args]
    proc = _start(cmd)
    head = _wait_for(proc, "step 20/5000")
    proc.send_signal(signal.SIGTERM)  # to the launcher, as the kubelet does to PID 1
    err = "".join(head) + proc.communicate(timeout=TIMEOUT_S)[1]
    assert proc.returncode == exit_codes.PREEMPTED, err
    assert "workers [75, 75] -> exit 75" in err
    steps = checkpoint_steps(root)
    assert len(steps) == 1 and steps[0] >= 20, err  # both ranks agreed on one step
    writes = [ln for ln in err.splitlines() if "checkpoint step" in ln and "written" in ln]
    assert len(writes) == 1 and "[trainer rank0]" in writes[0], writes
    state = load_state(root, steps[0])
    assert state["meta"]["world_size"] == 2
    assert len(state["rng"]) == 2  # every rank's RNG state, gathered by rank 0
    assert "joined process group: rank 1 of 2, backend gloo" in err
