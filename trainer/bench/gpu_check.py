"""One-shot check of the trainer on a GPU machine (torch + stdlib only; no network needed).

Run through ``bash trainer/bench/gpu_check.sh`` from the repository root. ``GPU_CHECK_CPU=1``
rehearses every step on the CPU with tiny sizes. ``GPU_CHECK_ONLY=fsdp,formats`` runs only the
named steps (names in :data:`STEPS`). Exits 1 if any check fails.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch

from trainer import exit_codes
from trainer.bench.benchmark import (
    REFERENCE_DCP_BLOCKING_S,
    REFERENCE_DCP_STEP_OVERHEAD,
    format_rows,
    gpt_size_args,
)
from trainer.bench.common import (
    REPO,
    async_checkpoint_cost,
    compare_loops,
    env_for_subprocess,
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

CPU = os.environ.get("GPU_CHECK_CPU", "") not in ("", "0")
# Reference: one H200, PyTorch 2.11, ResNet-50 batch 256 (shared/reference/gpu-anchor-h200.md)
REFERENCE = {"fp32": 1064, "tf32": 2215, "fp16": 2973, "bf16": 2447, "bf16+channels_last": 4702}
GRACE_PERIOD_S = 120.0
#: the TrainingJob's and the image's default: --checkpoint-every-seconds=600 --async-checkpoint
DEFAULT_INTERVAL_S = 600.0

ONLY = {name for name in os.environ.get("GPU_CHECK_ONLY", "").split(",") if name}

if CPU:
    DEV = "cpu"
    # one thread: on a shared machine, OpenMP threads spinning for a busy core slow it many-fold
    torch.set_num_threads(1)
    # resnet18 keeps the rehearsal within the time limit on a 2-core machine
    R50 = ["--model=resnet18", "--image-size=32", "--num-classes=10"]
    BENCH = dict(batch=8, samples=16, warmup=1, steps=2)
    LOOP = dict(steps=4, warmup=1, rounds=2, every=2)
    SIG = dict(batch=4, samples=8, every=2, after=3)
    GPT_SIZE = "tiny"
else:
    DEV = "cuda"
    R50 = ["--model=resnet50"]
    BENCH = dict(batch=256, samples=512, warmup=5, steps=15)
    LOOP = dict(steps=30, warmup=5, rounds=2, every=10)
    SIG = dict(batch=128, samples=256, every=10, after=15)
    GPT_SIZE = "1b"
#: a small GPT for the FSDP runs (the 1B one is for the checkpoint costs)
SMALL_GPT = [
    "--model=gpt",
    "--gpt-layers=2",
    "--gpt-dim=128",
    "--gpt-heads=2",
    "--vocab-size=1024",
    "--seq-len=64",
    "--synthetic-samples=64",
    "--batch-size=4",
    "--global-batch-size=8",
]

results: dict[str, Any] = {"mode": "cpu-rehearsal" if CPU else "gpu", "checks": []}
rows: list[tuple[str, str, str]] = []
problems: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    results["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
    print(f"[{'PASS' if ok else 'FAIL'}] {name}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        problems.append(name)
    return ok


def step(title: str, fn: Callable[[], None]) -> None:
    print(f"\n== {title}", flush=True)
    t0 = time.perf_counter()
    try:
        fn()
    except Exception:
        traceback.print_exc()
        check(title, False, "raised (traceback above)")
    print(f"   ({time.perf_counter() - t0:.1f}s)", flush=True)


def free() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def environment() -> None:
    results["torch"] = torch.__version__
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, CPU mode {CPU}")
    if CPU:
        check("CPU rehearsal mode", True, "GPU_CHECK_CPU set: tiny sizes, no CUDA checks")
        return
    if not check("CUDA available", torch.cuda.is_available()):
        raise SystemExit(1)
    name = torch.cuda.get_device_name(0)
    cc = torch.cuda.get_device_capability(0)
    results.update(gpu=name, capability=f"{cc[0]}.{cc[1]}", gpus=torch.cuda.device_count())
    print(f"GPU {name}, compute capability {cc[0]}.{cc[1]}, {torch.cuda.device_count()} GPU(s)")


def default_recipe() -> None:
    tr = make_trainer([*R50, "--batch-size=2", "--synthetic-samples=2", f"--device={DEV}"], DEV)
    got = (tr.recipe.precision, tr.recipe.channels_last)
    if CPU:
        want = ("fp32", False)
    else:
        want = ("bf16", True) if torch.cuda.get_device_capability(0)[0] >= 8 else ("fp16", True)
    results["default_recipe"] = f"{got[0]}{' + channels_last' if got[1] else ''}"
    check("default recipe", got == want, f"{results['default_recipe']} (expected {want})")
    del tr
    free()


def throughputs() -> None:
    figures: dict[str, float] = {}
    for label, precision, cl in (
        ("fp32", "fp32", False),
        ("tf32", "tf32", False),
        ("fp16", "fp16", False),
        ("bf16", "bf16", False),
        ("bf16+channels_last", "bf16", True),
    ):
        args = [
            *R50,
            f"--batch-size={BENCH['batch']}",
            f"--synthetic-samples={BENCH['samples']}",
            f"--precision={precision}",
            "--channels-last" if cl else "--no-channels-last",
            f"--device={DEV}",
        ]
        tr = make_trainer(args, DEV)
        ips, loss = throughput(tr, steps=BENCH["steps"], warmup=BENCH["warmup"])
        figures[label] = ips
        ref = REFERENCE[label]
        note = f"ref {ref:,} ({ips / ref:.0%})" if not CPU else "CPU rehearsal"
        rows.append((f"{R50[0][8:]} b{BENCH['batch']} {label} images/s", f"{ips:,.0f}", note))
        print(f"{label:>20}: {ips:,.0f} images/s, loss {loss:.3f}", flush=True)
        check(f"{label} loss finite", math.isfinite(loss), f"{loss:.4f}")
        del tr
        free()
    results["images_per_s"] = figures
    if not CPU:
        speedup = figures["bf16+channels_last"] / figures["fp32"]
        check("bf16+channels_last >= 2x fp32", speedup >= 2.0, f"{speedup:.2f}x (ref 4.4x)")
        check(
            "bf16+channels_last fastest",
            figures["bf16+channels_last"] >= max(figures.values()) * 0.98,
            json.dumps({k: round(v) for k, v in figures.items()}),
        )


def trainer_vs_bare_loop() -> None:
    """The trainer's own loop (default recipe, default checkpointing) against a bare loop."""
    args = [
        *R50,
        f"--batch-size={BENCH['batch']}",
        f"--synthetic-samples={BENCH['samples']}",
        f"--device={DEV}",
    ]
    default_ckpt = [f"--checkpoint-every-seconds={DEFAULT_INTERVAL_S:g}", "--async-checkpoint"]
    steps, warmup = LOOP["steps"], LOOP["warmup"]
    c = compare_loops([*args, *default_ckpt], DEV, steps, warmup, LOOP["rounds"])
    free()
    o = save_overhead(args, DEV, steps, warmup, every=LOOP["every"], rounds=1)
    free()
    per_async = o.per_checkpoint_s("async", steps)
    at_default = max(per_async, 0.0) / DEFAULT_INTERVAL_S  # share of the time at 600 s
    results["loop"] = dict(
        bare_images_per_s=c.bare_images_per_s,
        trainer_images_per_s=c.trainer_images_per_s,
        ratio=c.ratio,
        ratios=c.ratios,
        step_s=o.step_s,
        every=o.every,
        checkpoints=o.checkpoints,
        async_per_checkpoint_s=per_async,
        sync_per_checkpoint_s=o.per_checkpoint_s("sync", steps),
        async_share_at_default_interval=at_default,
    )
    name = f"{R50[0][8:]} b{BENCH['batch']} default recipe"
    rows.append((f"{name}: bare loop images/s", f"{c.bare_images_per_s:,.0f}", ""))
    rows.append((f"{name}: trainer loop images/s", f"{c.trainer_images_per_s:,.0f}", ""))
    rows.append(("trainer / bare loop", f"{c.ratio:.3f}", "target >= 0.95"))
    for mode in ("async", "sync"):
        rows.append(
            (
                f"{mode} checkpoint every {o.every} steps",
                f"{o.overhead(mode):+.1%}",
                f"step time; {o.per_checkpoint_s(mode, steps):.3f} s per checkpoint",
            )
        )
    rows.append(
        (
            f"async checkpoint every {DEFAULT_INTERVAL_S:g} s",
            f"{at_default:.3%}",
            "of the time (target < 2%)",
        )
    )
    detail = f"{c.ratio:.3f} (rounds {', '.join(f'{r:.3f}' for r in c.ratios)})"
    if CPU:  # a shared CPU is too noisy for a threshold; the rehearsal only runs the code
        check("trainer/bare loop ratio measured", c.ratio > 0, detail)
        return
    check("trainer loop >= 95% of the bare loop", c.ratio >= 0.95, detail)
    check(
        "async checkpoint at the default interval < 2% of the time",
        at_default < 0.02,
        f"{per_async:.3f} s per checkpoint every {DEFAULT_INTERVAL_S:g} s",
    )


def checkpoint_costs() -> None:
    tr = make_trainer([*R50, "--batch-size=8", "--synthetic-samples=8", f"--device={DEV}"], DEV)
    throughput(tr, steps=1, warmup=0)  # optimizer state exists
    tr.step = 1
    mgr = CheckpointManager(LocalStorage(scratch("gpucheck-ckpt-")), 10)
    sync(tr.device)
    res = mgr.save(tr.state_dict([capture_rng_state()]), step=1)
    t0 = time.perf_counter()
    state, _ = mgr.load(1)
    tr.load_state(state)
    sync(tr.device)
    load_s = time.perf_counter() - t0
    ac = AsyncCheckpointer(mgr)
    blocking = []
    for s in (2, 3, 4):
        tr.step = s
        sync(tr.device)
        blocking.append(ac.submit(tr.state_dict([capture_rng_state()]), step=s))
        ac.wait()
    a_state, _ = mgr.load(4)
    same = all(torch.equal(a_state["model"][k], v.cpu()) for k, v in tr.model.state_dict().items())
    results["checkpoint"] = dict(
        mb=res.bytes / 1e6,
        save_s=res.seconds,
        load_s=load_s,
        async_block_first_s=blocking[0],
        async_block_reuse_s=min(blocking[1:]),
    )
    rows.append((f"{R50[0][8:]}+AdamW checkpoint", f"{res.bytes / 1e6:.0f} MB", "ref 307 MB"))
    rows.append(("sync save (+fsync, sha256)", f"{res.seconds:.2f} s", "ref torch.save 0.41 s"))
    rows.append(("load (sha256 verify + apply)", f"{load_s:.2f} s", "ref torch.load 0.26 s"))
    rows.append(("async blocking, first call", f"{blocking[0]:.3f} s", "allocates pinned buffers"))
    rows.append(("async blocking, reused buffers", f"{min(blocking[1:]):.3f} s", ""))
    check("async checkpoint content equals the model", same)
    check(
        "async blocking (reused buffers) < sync save",
        min(blocking[1:]) < res.seconds,
        f"{min(blocking[1:]):.3f}s vs {res.seconds:.3f}s",
    )
    del tr, state, a_state
    free()


def sigterm_and_resume() -> None:
    uri = scratch("gpucheck-run-")
    args = [
        *R50,
        f"--batch-size={SIG['batch']}",
        f"--synthetic-samples={SIG['samples']}",
        "--max-steps=100000",
        "--log-every-steps=1",
        f"--checkpoint-every-steps={SIG['every']}",
        "--async-checkpoint",
        f"--device={DEV}",
    ]
    r = sigterm_run(args, uri, after_step=SIG["after"], timeout=150)
    results["sigterm"] = dict(
        exit_code=r.returncode, step=r.step, emergency_s=r.emergency_s, since_s=r.since_signal_s
    )
    rows.append(
        (
            "SIGTERM emergency checkpoint",
            f"{r.emergency_s:.2f} s" if r.emergency_s is not None else "n/a",
            f"step {r.step}, {r.since_signal_s}s after signal, exit {r.returncode}",
        )
    )
    ok = check("SIGTERM exit code 75", r.returncode == exit_codes.PREEMPTED, str(r.returncode))
    ok &= check(
        "emergency checkpoint written and fits the grace period",
        r.emergency_s is not None and (r.since_signal_s or 1e9) < GRACE_PERIOD_S,
        f"{r.emergency_s}s (signal to done {r.since_signal_s}s, grace {GRACE_PERIOD_S:.0f}s)",
    )
    ok &= check(
        "checkpoint at the step reached",
        r.step is not None
        and r.step in r.checkpoint_steps
        and r.manifest.get("reason") == "preempted"
        and r.step >= SIG["after"],
        f"steps on disk {r.checkpoint_steps}",
    )
    if not ok or r.step is None:
        print(r.log[-4000:])
        return
    target = r.step + 3
    cmd = [sys.executable, "-m", "trainer", *args[:-1], f"--device={DEV}"]
    cmd = [c for c in cmd if not c.startswith("--max-steps")] + [
        f"--max-steps={target}",
        f"--checkpoint-uri={uri}",
    ]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env_for_subprocess(), capture_output=True, text=True, timeout=150
    )
    log = proc.stderr
    first = re.search(r"step (\d+)/", log)
    resumed = f"resumed from checkpoint step {r.step} " in log
    check("resume exit 0", proc.returncode == 0, str(proc.returncode))
    check(
        "resume continues from the step reached",
        resumed and first is not None and int(first[1]) == r.step + 1,
        f"first logged step {first[1] if first else None}, expected {r.step + 1}",
    )
    final = os.path.join(uri, "final", "model.pt")
    loads = os.path.exists(final) and isinstance(torch.load(final, weights_only=True), dict)
    check("final/model.pt is a loadable state_dict", loads, final)
    if proc.returncode != 0:
        print(log[-4000:])


def ddp() -> None:
    uri = scratch("gpucheck-ddp-")
    gpus = torch.cuda.device_count() if not CPU else 0
    if gpus >= 2:
        device, backend = "cuda", "nccl"
    else:
        device, backend = "cpu", "gloo"
        print(
            "DDP with nccl skipped: nccl needs one GPU per rank and this machine has "
            f"{gpus} GPU(s); running 2-rank DDP with gloo on CPU instead",
            flush=True,
        )
    results["ddp_backend"] = backend
    cmd = [
        sys.executable,
        "-m",
        "trainer.launch",
        "--standalone",
        "--nproc-per-node=2",
        "-m",
        "trainer",
        "--model=simplecnn",
        "--image-size=12",
        "--batch-size=8",
        "--synthetic-samples=64",
        "--max-steps=6",
        "--checkpoint-every-steps=4",
        "--log-every-steps=2",
        f"--device={device}",
        f"--checkpoint-uri={uri}",
    ]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env_for_subprocess(), capture_output=True, text=True, timeout=120
    )
    log = proc.stderr
    writes = [ln for ln in log.splitlines() if "checkpoint step 4 written" in ln]
    check(
        f"2-rank DDP ({backend})",
        proc.returncode == 0
        and f"rank 1 of 2, backend {backend}" in log
        and len(writes) == 1
        and "rank0" in writes[0],
        f"exit {proc.returncode}, checkpoint writes {len(writes)}",
    )
    rows.append((f"2-rank DDP ({backend})", "ok" if proc.returncode == 0 else "FAIL", ""))
    if proc.returncode != 0:
        print(log[-4000:])


def fsdp_on_the_device() -> None:
    """FSDP (a process group of one on this device), the default recipe through FSDP's
    mixed-precision policy, async DCP checkpoints with pinned staging; SIGTERM, then resume."""
    uri = scratch("gpucheck-fsdp-")
    args = [
        *SMALL_GPT,
        "--sharding=fsdp",
        "--max-steps=100000",
        "--log-every-steps=1",
        "--checkpoint-every-steps=4",
        "--async-checkpoint",
        f"--device={DEV}",
    ]
    r = sigterm_run(args, uri, after_step=6, timeout=150)
    ok = check(
        "FSDP: SIGTERM exit code 75", r.returncode == exit_codes.PREEMPTED, str(r.returncode)
    )
    ok &= check(
        "FSDP: sharded emergency checkpoint",
        r.step is not None and r.manifest.get("format") == 2 and r.step in r.checkpoint_steps,
        f"step {r.step}, files {sorted(r.manifest.get('files', {}))}",
    )
    if not ok or r.step is None:
        print(r.log[-4000:])
        return
    cmd = [sys.executable, "-m", "trainer", *args, f"--checkpoint-uri={uri}"]
    cmd = [c for c in cmd if not c.startswith("--max-steps")] + [f"--max-steps={r.step + 4}"]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env_for_subprocess(), capture_output=True, text=True, timeout=150
    )
    resumed = f"resumed from checkpoint step {r.step} " in proc.stderr
    check("FSDP: resume exit 0 from the sharded checkpoint", proc.returncode == 0 and resumed)
    final = os.path.join(uri, "final", "model.pt")
    plain = os.path.exists(final) and all(
        type(t) is torch.Tensor for t in torch.load(final, weights_only=True).values()
    )
    check("FSDP: final/model.pt holds plain tensors", plain, final)
    rows.append(("FSDP (1 process) SIGTERM -> sharded checkpoint", f"{r.emergency_s} s", ""))
    if proc.returncode != 0:
        print(proc.stderr[-4000:])


def checkpoint_formats() -> None:
    """Asynchronous checkpoints of a 1.14 B-parameter GPT + AdamW: DCP ``async_save`` with
    reused pinned staging buffers against the file format, both in the trainer's loop."""
    args = [*gpt_size_args(GPT_SIZE), f"--device={DEV}"]
    costs = []
    for fmt in ("file", "dcp"):
        # no synchronous save here (the CPU benchmark has one): 13.7 GB more per format would
        # not fit the check's time limit; the reference measured torch.save at 19.4 s
        c = async_checkpoint_cost(args, DEV, fmt, warmup=3, base_steps=10)
        costs.append(c)
        free()
    results["formats"] = {
        c.fmt: dict(
            params=c.params,
            checkpoint_mb=c.checkpoint_mb,
            blocking_s=c.blocking_s,
            write_s=c.write_s,
            base_step_s=c.base_step_s,
            during_step_s=c.during_step_s,
            steps_during=c.steps_during,
            share_at_default_interval=c.share_at(DEFAULT_INTERVAL_S),
        )
        for c in costs
    }
    rows.extend(format_rows(costs, DEFAULT_INTERVAL_S))
    rows.append(
        (
            "reference: DCP async_save, H200, 1.0 B + AdamW",
            f"{REFERENCE_DCP_BLOCKING_S:.1f} s",
            f"blocking (first call, no reuse); {REFERENCE_DCP_STEP_OVERHEAD:+.2%} step time",
        )
    )
    dcp = costs[1]
    if CPU:
        check("format comparison measured", all(c.blocking_s and c.write_s for c in costs))
        return
    check("model of at least 1 B parameters", dcp.params >= 1e9, f"{dcp.params / 1e9:.2f} B")
    check(
        "DCP blocking with reused buffers below the reference",
        dcp.reused_blocking_s < REFERENCE_DCP_BLOCKING_S,
        f"{dcp.reused_blocking_s:.2f} s (reference {REFERENCE_DCP_BLOCKING_S} s)",
    )
    for c in costs:
        check(
            f"{c.fmt}: async checkpoint every {DEFAULT_INTERVAL_S:g} s < 2% of the time",
            c.share_at(DEFAULT_INTERVAL_S) < 0.02,
            f"{c.share_at(DEFAULT_INTERVAL_S):.3%}",
        )


def fsdp_two_ranks() -> None:
    """2-rank FSDP with sharded checkpoints: nccl on 2 GPUs, else gloo on 2 CPU processes."""
    uri = scratch("gpucheck-fsdp2-")
    gpus = torch.cuda.device_count() if not CPU else 0
    device, backend = ("cuda", "nccl") if gpus >= 2 else ("cpu", "gloo")
    cmd = [
        sys.executable,
        "-m",
        "trainer.launch",
        "--standalone",
        "--nproc-per-node=2",
        "-m",
        "trainer",
        *SMALL_GPT,
        "--sharding=fsdp",
        "--max-steps=6",
        "--checkpoint-every-steps=4",
        "--log-every-steps=2",
        f"--device={device}",
        f"--checkpoint-uri={uri}",
    ]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env_for_subprocess(), capture_output=True, text=True, timeout=150
    )
    shards = os.path.join(uri, "checkpoints", "step_000000006")
    both = all(os.path.exists(os.path.join(shards, f"__{r}_0.distcp")) for r in (0, 1))
    check(
        f"2-rank FSDP ({backend}), each rank writes its shard",
        proc.returncode == 0 and both,
        f"exit {proc.returncode}",
    )
    rows.append((f"2-rank FSDP ({backend})", "ok" if proc.returncode == 0 else "FAIL", ""))
    if proc.returncode != 0:
        print(proc.stderr[-4000:])


STEPS: dict[str, tuple[str, Callable[[], None]]] = {
    "environment": ("environment", environment),
    "recipe": ("default recipe", default_recipe),
    "throughput": ("ResNet-50 throughput", throughputs),
    "loop": ("trainer loop vs bare loop, checkpoint overhead", trainer_vs_bare_loop),
    "checkpoint": ("checkpoint save/load and async blocking", checkpoint_costs),
    "sigterm": ("SIGTERM mid-run, emergency checkpoint, resume", sigterm_and_resume),
    "ddp": ("DDP", ddp),
    "fsdp": ("FSDP on the device, sharded checkpoints, SIGTERM, resume", fsdp_on_the_device),
    "formats": ("1B model: async checkpoint, DCP vs file format", checkpoint_formats),
    "fsdp2": ("2-rank FSDP", fsdp_two_ranks),
}


def main() -> int:
    t0 = time.perf_counter()
    unknown = ONLY - set(STEPS)
    if unknown:
        print(f"GPU_CHECK_ONLY: unknown step(s) {sorted(unknown)}; steps: {', '.join(STEPS)}")
        return 1
    for name, (title, fn) in STEPS.items():
        if not ONLY or name in ONLY or name == "environment":
            step(title, fn)
    results["seconds"] = time.perf_counter() - t0
    print()
    print(table(rows, f"gpu_check ({results['mode']}) - torch {torch.__version__}"))
    out = os.environ.get("GPU_CHECK_JSON")
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1, default=str)
    if problems:
        print(f"\nGPU CHECK FAILED ({len(problems)}): {', '.join(problems)}")
        return 1
    print(f"\nGPU CHECK PASSED in {results['seconds']:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
