"""CPU-runnable benchmark of the reference trainer; prints a small table.

    python -m trainer.bench.benchmark            # or: python trainer/bench/benchmark.py
    python -m trainer.bench.benchmark --device cuda --json out.json

Measures, in one run: the images/s of the trainer's own loop (``Trainer.fit`` with the
TrainingJob's default checkpointing, async every 600 s) next to a bare PyTorch loop of the same
model, batch and precision, as a ratio (target >= 0.95); the step-time overhead of checkpoints
every N steps, asynchronous and synchronous, and what it comes to at the default interval;
synchronous save/load of resnet18 + AdamW state; the blocking time of an asynchronous
checkpoint (first call allocates the staging buffers, later calls reuse them); the
emergency checkpoint on SIGTERM of a real ``python -m trainer`` process; and, for a GPT of
``--gpt-size``, asynchronous checkpoints in the sharded format (DCP ``async_save`` with reused
staging buffers) against the single-file format: the time the loop is blocked, the background
write, the step time while it runs, and a synchronous checkpoint of the same state
(``--formats-only`` runs just that part).
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
    AsyncCost,
    async_checkpoint_cost,
    compare_loops,
    make_trainer,
    save_overhead,
    scratch,
    sigterm_run,
    sync,
    table,
    throughput,
)
from trainer.checkpoint import AsyncCheckpointer, CheckpointManager, capture_rng_state
from trainer.storage import LocalStorage

#: the TrainingJob's and the image's default: --checkpoint-every-seconds=600 --async-checkpoint
DEFAULT_INTERVAL_S = 600.0
#: GPT sizes for the format comparison: (layers, width, heads, vocabulary, sequence, batch)
GPT_SIZES = {
    "tiny": (2, 64, 2, 512, 32, 2),  # 0.17 M parameters: rehearsals of the code path
    "cpu": (4, 256, 4, 8192, 64, 4),  # 7.4 M parameters, 89 MB with AdamW
    "1b": (20, 2048, 16, 32000, 1024, 4),  # 1.14 B parameters, 13.7 GB with AdamW
}
#: shared/reference/gpu-anchor-h200.md: DCP async_save of a 1.0 B model + AdamW, one H200
REFERENCE_DCP_BLOCKING_S = 8.4
REFERENCE_DCP_STEP_OVERHEAD = 0.0026


def gpt_size_args(size: str) -> list[str]:
    layers, dim, heads, vocab, seq, batch = GPT_SIZES[size]
    return [
        "--model=gpt",
        f"--gpt-layers={layers}",
        f"--gpt-dim={dim}",
        f"--gpt-heads={heads}",
        f"--vocab-size={vocab}",
        f"--seq-len={seq}",
        f"--batch-size={batch}",
        f"--synthetic-samples={4 * batch}",
    ]


def format_rows(costs: list[AsyncCost], interval_s: float) -> list[tuple[str, str, str]]:
    """Table rows comparing asynchronous checkpoints of each format."""
    rows: list[tuple[str, str, str]] = []
    c0 = costs[0]
    rows.append(
        (
            f"GPT {c0.params / 1e6:,.1f} M params + AdamW checkpoint",
            f"{c0.checkpoint_mb:,.0f} MB",
            f"step time {c0.base_step_s:.3f} s with no write in flight",
        )
    )
    for c in costs:
        name = {"file": "file format (torch.save)", "dcp": "DCP async_save"}[c.fmt]
        rows.append((f"{name}: blocking, first call", f"{c.blocking_s[0]:.3f} s", "allocates"))
        rows.append(
            (f"{name}: blocking, reused buffers", f"{c.reused_blocking_s:.3f} s", "the loop waits")
        )
        rows.append((f"{name}: background write", f"{max(c.write_s):.2f} s", "+ sha256, manifest"))
        if c.sync_s:
            rows.append(
                (
                    f"{name}: synchronous checkpoint",
                    f"{min(c.sync_s):.3f} s",
                    f"the loop waits for the whole write ({c.reused_blocking_s / min(c.sync_s):.0%}"
                    " of it when asynchronous)",
                )
            )
        rows.append(
            (
                f"{name}: step time during the write",
                f"{c.overhead_during:+.1%}",
                f"{c.during_step_s:.3f} s over {c.steps_during} steps",
            )
        )
        rows.append(
            (
                f"{name}: one checkpoint every {interval_s:g} s",
                f"{c.share_at(interval_s):.3%}",
                "of the training time",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    p.add_argument("--rounds", type=int, default=3, help="bare/trainer loop pairs per model")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads for torch (default 1: on a shared VM, OpenMP threads that wait for "
        "a busy core make every figure noisy; 0 keeps torch's default)",
    )
    p.add_argument("--json", help="also write the figures to this JSON file")
    p.add_argument(
        "--gpt-size",
        choices=sorted(GPT_SIZES),
        default="cpu",
        help="GPT of the format comparison (1b: 1.14 B parameters, for a GPU)",
    )
    p.add_argument("--formats-only", action="store_true", help="only the file-vs-DCP comparison")
    a = p.parse_args(argv)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    dev = ["--device", "cuda" if a.device == "cuda" else a.device]
    figures: dict[str, float] = {}
    rows: list[tuple[str, str, str]] = []
    if a.formats_only:
        rows += compare_formats(a.gpt_size, dev, a.device, figures)
        print(table(rows, f"trainer benchmark (formats) - torch {torch.__version__}"))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(figures, f, indent=1)
        return 0

    # 1. the trainer's loop next to a bare loop, with the TrainingJob's default checkpointing
    default_ckpt = [f"--checkpoint-every-seconds={DEFAULT_INTERVAL_S:g}", "--async-checkpoint"]
    loop_ratio: dict[str, float] = {}
    for model, extra, note, steps in (
        ("simplecnn", ["--batch-size=64", "--synthetic-samples=512"], "b64, 1x28x28", 40),
        (
            "resnet18",
            ["--batch-size=16", "--image-size=64", "--synthetic-samples=256"],
            "b16, 3x64x64",
            10,
        ),
    ):
        args = [f"--model={model}", *extra, *dev]
        c = compare_loops([*args, *default_ckpt], a.device, steps, warmup=3, rounds=a.rounds)
        loop_ratio[model] = c.ratio
        figures.update(
            {
                f"{model}_bare_images_per_s": c.bare_images_per_s,
                f"{model}_trainer_images_per_s": c.trainer_images_per_s,
                f"{model}_trainer_to_bare": c.ratio,
            }
        )
        each = ", ".join(f"{r:.2f}" for r in c.ratios)
        rows.append((f"{model} bare loop images/s", f"{c.bare_images_per_s:,.0f}", note))
        rows.append((f"{model} trainer loop images/s", f"{c.trainer_images_per_s:,.0f}", note))
        rows.append((f"{model} trainer / bare", f"{c.ratio:.3f}", f"median of {each}"))

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

    # 4. step-time overhead of checkpoints every N steps (resnet18, 140 MB with AdamW)
    steps, every = 15, 5
    args = ["--model=resnet18", "--batch-size=16", "--image-size=64", "--synthetic-samples=256"]
    o = save_overhead([*args, *dev], a.device, steps, warmup=2, every=every, rounds=2)
    per_async = o.per_checkpoint_s("async", steps)
    at_default = loop_ratio["resnet18"] / (1 + max(per_async, 0.0) / DEFAULT_INTERVAL_S)
    figures.update(
        step_s_no_checkpoint=o.step_s["none"],
        step_s_async_every_n=o.step_s["async"],
        step_s_sync_every_n=o.step_s["sync"],
        async_overhead_per_checkpoint_s=per_async,
        sync_overhead_per_checkpoint_s=o.per_checkpoint_s("sync", steps),
        resnet18_trainer_to_bare_at_default_interval=at_default,
    )
    rows.append(("resnet18 step time, no checkpoints", f"{o.step_s['none']:.3f} s", "b16"))
    for mode in ("async", "sync"):
        rows.append(
            (
                f"  with {mode} checkpoints every {every} steps",
                f"{o.step_s[mode]:.3f} s",
                f"{o.overhead(mode):+.0%} step time, "
                f"{o.per_checkpoint_s(mode, steps):.3f} s per checkpoint ({o.checkpoints} timed)",
            )
        )
    rows.append(
        (
            f"resnet18 trainer / bare, async every {DEFAULT_INTERVAL_S:g} s",
            f"{at_default:.3f}",
            f"loop ratio with {per_async:.3f} s per checkpoint spread over the interval",
        )
    )

    # 5. emergency checkpoint on SIGTERM of a real run
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

    # 6. asynchronous checkpoints of a GPT: DCP (sharded format) against the file format
    rows += compare_formats(a.gpt_size, dev, a.device, figures)

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


def compare_formats(
    size: str, dev: list[str], device: str, figures: dict[str, float]
) -> list[tuple[str, str, str]]:
    """Asynchronous checkpoints of the same GPT (one process, no FSDP) in each format."""
    args = [*gpt_size_args(size), *dev]
    costs = []
    for fmt in ("file", "dcp"):
        c = async_checkpoint_cost(args, device, fmt, warmup=2, base_steps=5, sync_saves=1)
        costs.append(c)
        figures.update(
            {
                f"{fmt}_sync_save_s": min(c.sync_s),
                f"{fmt}_blocking_first_s": c.blocking_s[0],
                f"{fmt}_blocking_reused_s": c.reused_blocking_s,
                f"{fmt}_write_s": max(c.write_s),
                f"{fmt}_step_overhead_during_write": c.overhead_during,
                f"{fmt}_share_at_default_interval": c.share_at(DEFAULT_INTERVAL_S),
            }
        )
    figures.update(gpt_params=costs[0].params, gpt_checkpoint_mb=costs[0].checkpoint_mb)
    return format_rows(costs, DEFAULT_INTERVAL_S)


if __name__ == "__main__":
    sys.exit(main())
