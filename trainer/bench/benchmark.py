"""CPU-runnable benchmark of the reference trainer; prints a small table.

    python -m trainer.bench.benchmark            # or: python trainer/bench/benchmark.py
    python -m trainer.bench.benchmark --device cuda --json out.json

Measures: training images/s of simplecnn and resnet18 at small sizes (the trainer's own
train_step and recipe), synchronous checkpoint save/load of resnet18 + AdamW state, the blocking
time of an asynchronous checkpoint (first call allocates the staging buffers, later calls reuse
them) against a synchronous save, and the emergency checkpoint on SIGTERM of a real
``python -m trainer`` process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

if __package__ in (None, ""):  # run as a script: make ``trainer`` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch

from trainer import exit_codes
from trainer.bench.common import (
    make_trainer,
    scratch,
    sigterm_run,
    sync,
    table,
    throughput,
)
from trainer.checkpoint import AsyncCheckpointer, CheckpointManager, capture_rng_state
from trainer.storage import LocalStorage


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    p.add_argument("--steps", type=int, default=10, help="timed steps per throughput figure")
    p.add_argument("--json", help="also write the figures to this JSON file")
    a = p.parse_args(argv)
    dev = ["--device", "cuda" if a.device == "cuda" else a.device]
    figures: dict[str, float] = {}
    rows: list[tuple[str, str, str]] = []

    # 1. throughput
    for model, extra, note in (
        ("simplecnn", ["--batch-size=64"], "batch 64, 1x28x28"),
        (
            "resnet18",
            ["--batch-size=16", "--image-size=64", "--num-classes=100"],
            "batch 16, 3x64x64",
        ),
    ):
        tr = make_trainer([f"--model={model}", "--synthetic-samples=256", *extra, *dev], a.device)
        ips, _ = throughput(tr, steps=a.steps, warmup=2)
        figures[f"{model}_images_per_s"] = ips
        rows.append((f"{model} train images/s", f"{ips:,.0f}", f"{note}, {tr.recipe.precision}"))

    # 2. sync save / load of resnet18 + AdamW (one step taken so the optimizer has state)
    tr = make_trainer(
        ["--model=resnet18", "--batch-size=4", "--image-size=64", "--synthetic-samples=8", *dev],
        a.device,
    )
    throughput(tr, steps=1, warmup=0)
    tr.step = 1
    state = tr.state_dict([capture_rng_state()])
    mgr = CheckpointManager(LocalStorage(scratch("bench-ckpt-")), keep_last=10)
    res = mgr.save(state, step=1)
    t0 = time.perf_counter()
    mgr.load(1)
    load_s = time.perf_counter() - t0
    figures.update(ckpt_mb=res.bytes / 1e6, sync_save_s=res.seconds, load_s=load_s)
    rows.append(("checkpoint size (resnet18 + AdamW)", f"{res.bytes / 1e6:.1f} MB", ""))
    rows.append(("sync save (write+fsync+sha256+manifest)", f"{res.seconds:.3f} s", ""))
    rows.append(("load (sha256 verify + torch.load)", f"{load_s:.3f} s", ""))

    # 3. async blocking time, first call (allocates) vs later calls (reuse buffers)
    ac = AsyncCheckpointer(mgr)
    blocking = []
    for step in (2, 3, 4):
        tr.step = step
        sync(tr.device)
        blocking.append(ac.submit(tr.state_dict([capture_rng_state()]), step=step))
        ac.wait()
    figures.update(async_block_first_s=blocking[0], async_block_reuse_s=min(blocking[1:]))
    rows.append(("async blocking, first (allocates buffers)", f"{blocking[0]:.3f} s", ""))
    rows.append(
        (
            "async blocking, reused buffers",
            f"{min(blocking[1:]):.3f} s",
            f"{res.seconds / max(min(blocking[1:]), 1e-9):.0f}x less than sync save",
        )
    )

    # 4. emergency checkpoint on SIGTERM of a real run
    uri = scratch("bench-sigterm-")
    r = sigterm_run(
        [
            "--model=resnet18",
            "--batch-size=8",
            "--image-size=64",
            "--synthetic-samples=64",
            "--max-steps=100000",
            "--log-every-steps=2",
            "--no-tensorboard",
            *dev,
        ],
        uri,
        after_step=4,
        timeout=300,
    )
    ok = r.returncode == exit_codes.PREEMPTED and r.emergency_s is not None
    figures.update(sigterm_exit_code=r.returncode, emergency_checkpoint_s=r.emergency_s or -1)
    rows.append(
        (
            "SIGTERM: emergency checkpoint",
            f"{r.emergency_s:.3f} s" if r.emergency_s is not None else "n/a",
            f"exit {r.returncode}, step {r.step}, {r.since_signal_s}s after signal",
        )
    )

    print(
        table(
            rows,
            f"trainer benchmark - torch {torch.__version__}, device {tr.device}, "
            f"{torch.get_num_threads()} threads",
        )
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)
    if not ok:
        print("SIGTERM run failed:\n" + r.log[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
