"""Measurement helpers shared by ``benchmark.py`` and ``gpu_check.py`` (torch + stdlib only)."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.nn import functional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from trainer.config import parse_args  # noqa: E402
from trainer.distributed import DistContext, init_distributed  # noqa: E402
from trainer.models import build_model  # noqa: E402
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


_GROUP_OF_ONE: dict[str, DistContext] = {}


def make_trainer(args: list[str], device: str = "auto", tensorboard: bool = False) -> Trainer:
    """A Trainer of this process, its checkpoints in a temporary folder. Sharded checkpoints
    and FSDP get a process group of one, formed once per benchmark process, as ``run`` does."""
    tb = [] if tensorboard else ["--no-tensorboard"]
    cfg = parse_args([*args, f"--checkpoint-uri={scratch('trainer-')}", *tb])
    dev = torch.device("cuda" if device != "cpu" and torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        torch.cuda.set_device(0)
        dev = torch.device("cuda", 0)
    if cfg.sharding == "fsdp" or cfg.checkpoint_format == "dcp":
        if dev.type not in _GROUP_OF_ONE:
            _GROUP_OF_ONE[dev.type] = init_distributed(dev.type, group_of_one=True)
        return Trainer(cfg, _GROUP_OF_ONE[dev.type])
    return Trainer(cfg, DistContext(device=dev))


def _device_steps(trainer: Trainer) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    """The first epoch's steps (micro-batches) of the trainer's data, on its device, in its
    memory format."""
    steps = []
    for micro in trainer.data.steps(0, 0):
        steps.append([trainer._to_device(x, y) for x, y in micro])
    return steps


def throughput(trainer: Trainer, steps: int, warmup: int) -> tuple[float, float]:
    """(samples/s, last loss) of the trainer's own train_step on its synthetic batches."""
    batches = _device_steps(trainer)
    loss = torch.zeros(())
    for i in range(warmup):
        loss = trainer.train_step(batches[i % len(batches)])
    sync(trainer.device)
    t0 = time.perf_counter()
    for i in range(steps):
        loss = trainer.train_step(batches[i % len(batches)])
    sync(trainer.device)
    dt = time.perf_counter() - t0
    return steps * trainer.data.global_batch / dt, float(loss)


def bare_loop(trainer: Trainer, steps: int, warmup: int) -> float:
    """Images/s of a plain PyTorch training loop, the yardstick for the trainer's own loop.

    Same model class, batch, precision (autocast, GradScaler for fp16), memory format and
    optimizer as ``trainer``, on batches already on the device; none of the trainer's
    machinery: no data position, LR schedule, stop check, logging or checkpoints.
    """
    cfg, dev, recipe, data = trainer.cfg, trainer.device, trainer.recipe, trainer.data
    torch.manual_seed(cfg.seed)
    mf = torch.channels_last if recipe.channels_last else torch.contiguous_format
    arch = data.arch
    model = build_model(cfg.model, arch["channels"], arch["image_size"], arch["num_classes"])
    model = model.to(dev, memory_format=mf)  # type: ignore[call-overload]
    opt: torch.optim.Optimizer
    if cfg.optimizer == "adamw":
        fused = dev.type == "cuda" or None
        opt = torch.optim.AdamW(
            model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=fused
        )
    else:
        opt = torch.optim.SGD(
            model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay
        )
    scaler = torch.amp.GradScaler(dev.type, enabled=recipe.precision == "fp16")
    amp = recipe.amp_dtype
    batches = [micro[0] for micro in _device_steps(trainer)]

    def one_step(x: torch.Tensor, y: torch.Tensor) -> None:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=amp or torch.float32, enabled=amp is not None):
            loss = functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for i in range(warmup):
        one_step(*batches[i % len(batches)])
    sync(dev)
    t0 = time.perf_counter()
    for i in range(steps):
        one_step(*batches[i % len(batches)])
    sync(dev)
    return steps * batches[0][0].shape[0] / (time.perf_counter() - t0)


@dataclass
class LoopResult:
    """The trainer's own loop (``Trainer.fit``) between two steps."""

    images_per_s: float
    step_s: float
    checkpoints: int  # periodic checkpoints started inside the timed window


def trainer_loop(
    args: list[str], device: str, steps: int, warmup: int, tensorboard: bool = True
) -> LoopResult:
    """Time ``Trainer.fit`` from the end of step ``warmup`` to the end of step ``warmup+steps``.

    Everything the loop does per step is inside the window: data position, the stop check,
    logging (TensorBoard too, as by default) and the checkpoints that fall due. The window ends
    only when a background checkpoint write still in flight has finished, so the cost of
    asynchronous saving is counted in full. The final checkpoint and weights come after it.
    """
    end = warmup + steps
    tr = make_trainer([*args, f"--max-steps={end}", "--no-resume"], device, tensorboard)
    marks: dict[int, float] = {}
    started: list[int] = []
    save = tr.checkpoint

    def counting_checkpoint(reason: str, sync: bool) -> float:
        started.append(tr.step)
        return save(reason, sync)

    def hook(t: Trainer, step: int) -> None:
        if step in (warmup, end):
            if step == end and t.async_ckpt is not None:
                t.async_ckpt.wait()
            sync(t.device)
            marks[step] = time.perf_counter()

    tr.checkpoint = counting_checkpoint  # type: ignore[method-assign]
    tr.hook = hook
    code = tr.fit()
    if code != 0 or set(marks) != {warmup, end}:
        raise RuntimeError(f"trainer loop ended with {code} at step {tr.step}")
    dt = marks[end] - marks[warmup]
    inside = [s for s in started if warmup <= s < end]
    images = steps * tr.data.global_batch
    return LoopResult(images / dt, dt / steps, len(inside))


@dataclass
class LoopComparison:
    """The trainer's loop against the bare loop, rounds interleaved (the median of each)."""

    bare_images_per_s: float
    trainer_images_per_s: float
    ratio: float  # median of the per-round ratios trainer / bare
    ratios: list[float]


def compare_loops(
    args: list[str], device: str, steps: int, warmup: int, rounds: int
) -> LoopComparison:
    """Bare loop and trainer loop, alternating which goes first, ``rounds`` times each.

    On a shared machine the speed drifts between runs; a ratio of two runs made back to back
    is steadier than either figure.
    """
    bare: list[float] = []
    loop: list[float] = []
    for r in range(rounds):
        for kind in ("bare", "trainer") if r % 2 == 0 else ("trainer", "bare"):
            if kind == "bare":
                bare.append(bare_loop(make_trainer(args, device), steps, warmup))
            else:
                loop.append(trainer_loop(args, device, steps, warmup).images_per_s)
    ratios = [t / b for t, b in zip(loop, bare, strict=True)]
    return LoopComparison(
        statistics.median(bare), statistics.median(loop), statistics.median(ratios), ratios
    )


@dataclass
class SaveOverhead:
    """Step time of the trainer's loop without checkpoints, with async and with sync ones."""

    every: int
    step_s: dict[str, float]  # "none", "async", "sync": median over rounds
    checkpoints: int  # checkpoints in the timed window (async and sync runs)

    def overhead(self, mode: str) -> float:
        """Extra step time, as a fraction of the step time without checkpoints."""
        return self.step_s[mode] / self.step_s["none"] - 1.0

    def per_checkpoint_s(self, mode: str, steps: int) -> float:
        """Seconds each checkpoint added to the loop."""
        return (self.step_s[mode] - self.step_s["none"]) * steps / max(self.checkpoints, 1)


def save_overhead(
    args: list[str], device: str, steps: int, warmup: int, every: int, rounds: int
) -> SaveOverhead:
    """The loop with no checkpoints, async ones every ``every`` steps and sync ones, interleaved."""
    modes = {
        "none": [],
        "async": [f"--checkpoint-every-steps={every}", "--async-checkpoint"],
        "sync": [f"--checkpoint-every-steps={every}"],
    }
    times: dict[str, list[float]] = {m: [] for m in modes}
    count = 0
    for r in range(rounds):
        order = list(modes) if r % 2 == 0 else list(reversed(modes))
        for mode in order:
            res = trainer_loop([*args, *modes[mode]], device, steps, warmup, tensorboard=False)
            times[mode].append(res.step_s)
            if mode != "none":
                count = res.checkpoints
    return SaveOverhead(every, {m: statistics.median(v) for m, v in times.items()}, count)


@dataclass
class AsyncCost:
    """What asynchronous checkpoints of one format cost a training loop (one process)."""

    fmt: str
    params: int
    checkpoint_mb: float
    blocking_s: list[float]  # each checkpoint; the first allocates the staging buffers
    write_s: list[float]  # from the call until the background write had finished
    base_step_s: float  # median step time with no checkpoint in flight
    during_step_s: float  # median step time while a background write was in flight
    steps_during: int
    sync_s: list[float] = field(default_factory=list)  # synchronous checkpoints, if asked for

    @property
    def reused_blocking_s(self) -> float:
        return min(self.blocking_s[1:] or self.blocking_s)

    @property
    def overhead_during(self) -> float:
        """Extra step time while a write is in flight, as a fraction."""
        return self.during_step_s / self.base_step_s - 1.0

    def share_at(self, interval_s: float) -> float:
        """The cost of one checkpoint (blocking with reused buffers, plus the slower steps
        while it is written) as a share of ``interval_s`` of training."""
        writes = max(len(self.write_s), 1)
        slower = self.steps_during / writes * max(self.during_step_s - self.base_step_s, 0.0)
        return (self.reused_blocking_s + slower) / interval_s


def async_checkpoint_cost(
    args: list[str],
    device: str,
    fmt: str,
    warmup: int,
    base_steps: int,
    writes: int = 2,
    sync_saves: int = 0,
) -> AsyncCost:
    """Train with the trainer's own ``train_step`` and ``checkpoint`` (asynchronous, format
    ``fmt``: ``file`` or ``dcp``): the step time without a checkpoint in flight, then
    ``writes`` checkpoints, each followed by steps until its background write has finished.
    Every step is timed to the device's completion. Then ``sync_saves`` synchronous
    checkpoints of the same state (what the loop would wait for without ``--async-checkpoint``:
    write, fsync, digests, manifest)."""
    # keep-last 1: a 1 B-parameter checkpoint with AdamW is 13.7 GB on disk
    fmt_args = [f"--checkpoint-format={fmt}", "--async-checkpoint", "--keep-last=1"]
    tr = make_trainer([*args, *fmt_args], device)
    assert tr.async_ckpt is not None
    batches = _device_steps(tr)
    i = 0

    def one_step() -> float:
        nonlocal i
        t0 = time.perf_counter()
        tr.train_step(batches[i % len(batches)])
        sync(tr.device)
        i += 1
        return time.perf_counter() - t0

    for _ in range(warmup):
        one_step()
    base = statistics.median(one_step() for _ in range(base_steps))
    blocking: list[float] = []
    written: list[float] = []
    during: list[float] = []
    size = 0
    for n in range(writes):
        tr.step = 1000 + n
        sync(tr.device)
        t0 = time.perf_counter()
        blocking.append(tr.checkpoint("periodic", sync=False))
        while tr.async_ckpt.busy():
            during.append(one_step())
        result = tr.async_ckpt.wait()
        written.append(time.perf_counter() - t0)
        size = result.bytes if result is not None else size
    synced: list[float] = []
    for n in range(sync_saves):
        tr.step = 2000 + n
        sync(tr.device)
        synced.append(tr.checkpoint("periodic", sync=True))
    params = sum(p.numel() for p in tr.model.parameters())
    if tr.sharded is not None:
        tr.sharded.close()
    shutil.rmtree(tr.cfg.checkpoint_uri, ignore_errors=True)
    return AsyncCost(
        fmt=fmt,
        params=params,
        checkpoint_mb=size / 1e6,
        blocking_s=blocking,
        write_s=written,
        base_step_s=base,
        during_step_s=statistics.median(during) if during else base,
        steps_during=len(during),
        sync_s=synced,
    )


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
