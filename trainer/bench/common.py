"""Measurement helpers shared by ``benchmark.py`` and ``gpu_check.py`` (torch + stdlib only)."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from trainer.config import parse_args  # noqa: E402
from trainer.distributed import DistContext  # noqa: E402
from trainer.train import Trainer  # noqa: E402

#: every file the benchmarks write goes below this folder, removed at exit
SCRATCH = tempfile.mkdtemp(prefix="trainer-bench-")
atexit.register(shutil.rmtree, SCRATCH, True)


def scratch(prefix: str) -> str:
    """A new empty folder below :data:`SCRATCH`."""
    return tempfile.mkdtemp(prefix=prefix, dir=SCRATCH)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def make_trainer(args: list[str], device: str = "auto") -> Trainer:
    """A Trainer of this process (no process group), its checkpoints in a temporary folder."""
    cfg = parse_args([*args, f"--checkpoint-uri={scratch('trainer-')}", "--no-tensorboard"])
    dev = torch.device("cuda" if device != "cpu" and torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        torch.cuda.set_device(0)
        dev = torch.device("cuda", 0)
    return Trainer(cfg, DistContext(device=dev))


def throughput(trainer: Trainer, steps: int, warmup: int) -> tuple[float, float]:
    """(images/s, last loss) of the trainer's own train_step on its synthetic batches."""
    batches = []
    for x, y in trainer.data.batches(0, 0):
        if trainer.recipe.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        batches.append((x, y))
    loss = torch.zeros(())
    for i in range(warmup):
        loss = trainer.train_step(*batches[i % len(batches)])
    sync(trainer.device)
    t0 = time.perf_counter()
    for i in range(steps):
        loss = trainer.train_step(*batches[i % len(batches)])
    sync(trainer.device)
    dt = time.perf_counter() - t0
    return steps * batches[0][0].shape[0] / dt, float(loss)


def env_for_subprocess() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass
class SigtermResult:
    returncode: int
    step: int | None
    emergency_s: float | None
    since_signal_s: float | None
    checkpoint_steps: list[int] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def sigterm_run(args: list[str], uri: str, after_step: int, timeout: float) -> SigtermResult:
    """Start ``python -m trainer``, send SIGTERM once ``step <after_step>/`` is logged."""
    cmd = [sys.executable, "-m", "trainer", *args, f"--checkpoint-uri={uri}"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env_for_subprocess(), stderr=subprocess.PIPE, text=True, bufsize=1
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    pattern = re.compile(r"step (\d+)/")
    signalled = False
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = pattern.search(line)
        if m and int(m[1]) >= after_step and not signalled:
            proc.send_signal(signal.SIGTERM)
            signalled = True
            break
    try:
        rest = proc.communicate(timeout=max(5.0, deadline - time.monotonic()))[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        rest = proc.communicate()[1]
    log = "".join(lines) + (rest or "")
    m = re.search(r"emergency checkpoint of step (\d+) took ([\d.]+)s \(([\d.]+)s after", log)
    ck = os.path.join(uri, "checkpoints")
    steps = (
        sorted(int(n[5:]) for n in os.listdir(ck) if n.startswith("step_"))
        if os.path.isdir(ck)
        else []
    )
    manifest: dict[str, Any] = {}
    if m:
        mpath = os.path.join(ck, f"step_{int(m[1]):09d}", "manifest.json")
        if os.path.exists(mpath):
            with open(mpath) as f:
                manifest = json.load(f)
    return SigtermResult(
        returncode=proc.returncode,
        step=int(m[1]) if m else None,
        emergency_s=float(m[2]) if m else None,
        since_signal_s=float(m[3]) if m else None,
        checkpoint_steps=steps,
        manifest=manifest,
        log=log,
    )


def table(rows: list[tuple[str, str, str]], title: str) -> str:
    """A small fixed-width table: (what, figure, note)."""
    w0 = max(len(r[0]) for r in [*rows, ("what", "", "")])
    w1 = max(len(r[1]) for r in [*rows, ("", "figure", "")])
    out = [title, f"{'what':<{w0}}  {'figure':>{w1}}  note", "-" * (w0 + w1 + 10)]
    out += [f"{a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
    return "\n".join(out)
