"""The training loop: precision recipe, DDP, checkpoints, resume and graceful preemption."""

from __future__ import annotations

import logging
import math
import os
import random
import signal
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import torch
from torch import nn
from torch.nn import functional

from trainer import __version__, exit_codes
from trainer.checkpoint import (
    AsyncCheckpointer,
    CheckpointManager,
    capture_rng_state,
    restore_rng_state,
)
from trainer.config import Config
from trainer.data import DataSource, ImageFolderData, SyntheticData
from trainer.distributed import DistContext, init_distributed
from trainer.errors import UserError
from trainer.models import SPECS, build_model
from trainer.storage import open_storage
from trainer.tblog import TensorBoardLog

log = logging.getLogger("trainer")

# With fp16 the GradScaler skips optimizer steps whose gradients overflowed; the scheduler still
# steps (the schedule counts training steps), which makes torch warn on the first skipped step.
warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler.step\(\)`")

FINAL_MODEL = "final/model.pt"

StepHook = Callable[["Trainer", int], None]


@dataclass(frozen=True)
class Recipe:
    """Resolved numeric recipe."""

    precision: str  # fp32 | tf32 | fp16 | bf16
    channels_last: bool

    @property
    def amp_dtype(self) -> torch.dtype | None:
        return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(self.precision)


def resolve_recipe(precision: str, channels_last: bool | None, device: torch.device) -> Recipe:
    """``auto``: bf16 + channels_last on CUDA cc >= 8.0, fp16 + channels_last on older GPUs,
    fp32 on CPU."""
    cuda = device.type == "cuda"
    if precision == "auto":
        if cuda:
            major, _ = torch.cuda.get_device_capability(device)
            precision = "bf16" if major >= 8 else "fp16"
        else:
            precision = "fp32"
    if precision == "bf16" and cuda and torch.cuda.get_device_capability(device)[0] < 8:
        raise UserError("--precision bf16 needs a GPU of compute capability >= 8.0 (Ampere+)")
    if channels_last is None:
        channels_last = cuda
    return Recipe(precision, channels_last)


def configure_backends(recipe: Recipe, deterministic: bool, device: torch.device) -> None:
    """TF32 switches, cuDNN autotuning and deterministic algorithms."""
    tf32 = recipe.precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.benchmark = device.type == "cuda"


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    import sys

    if "numpy" in sys.modules:
        import numpy as np

        np.random.seed(seed % 2**32)


def _lr_lambda(warmup: int, total: int) -> Callable[[int], float]:
    def f(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return f


class Trainer:
    """One training run of one process (a rank, under torchrun)."""

    def __init__(self, cfg: Config, ctx: DistContext, hook: StepHook | None = None) -> None:
        self.cfg, self.ctx, self.hook = cfg, ctx, hook
        self.device = ctx.device
        self.recipe = resolve_recipe(cfg.precision, cfg.channels_last, self.device)
        configure_backends(self.recipe, cfg.deterministic, self.device)
        if self.recipe.precision == "tf32" and self.device.type == "cpu":
            log.warning("--precision tf32 has no effect on CPU (runs as fp32)")
        spec = SPECS[cfg.model]
        image_size = cfg.image_size or spec.image_size
        seed_everything(cfg.seed)
        self.data = self._make_data(spec.channels, image_size, cfg.num_classes or spec.num_classes)
        self.data.check()
        self.steps_per_epoch = self.data.steps_per_epoch
        self.total_steps = cfg.max_steps or (cfg.epochs or 1) * self.steps_per_epoch
        self.meta = {
            "model": cfg.model,
            "channels": self.data.channels,
            "image_size": self.data.image_size,
            "num_classes": self.data.num_classes,
            "precision": self.recipe.precision,
            "world_size": ctx.world,
            "batch_size": cfg.batch_size,
            "seed": cfg.seed,
            "trainer_version": __version__,
        }
        torch.manual_seed(cfg.seed)  # same initial weights on every rank
        model = build_model(
            cfg.model, self.data.channels, self.data.image_size, self.data.num_classes
        )
        mf = torch.channels_last if self.recipe.channels_last else torch.contiguous_format
        self.model: nn.Module = model.to(self.device, memory_format=mf)  # type: ignore[call-overload]
        self.ddp: nn.Module = self.model
        if ctx.enabled:
            from torch.nn.parallel import DistributedDataParallel

            ids = [ctx.local_rank] if self.device.type == "cuda" else None
            self.ddp = DistributedDataParallel(self.model, device_ids=ids)
        seed_everything(cfg.seed + 7919 * ctx.rank)  # per-rank dropout streams
        cuda = self.device.type == "cuda"
        if cfg.optimizer == "adamw":
            self.optimizer: torch.optim.Optimizer = torch.optim.AdamW(
                self.model.parameters(),
                lr=cfg.lr,
                weight_decay=cfg.weight_decay,
                fused=cuda or None,
            )
        else:
            self.optimizer = torch.optim.SGD(
                self.model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay
            )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, _lr_lambda(cfg.warmup_steps, self.total_steps)
        )
        self.scaler = torch.amp.GradScaler(
            self.device.type, enabled=self.recipe.precision == "fp16"
        )
        self.storage = open_storage(
            cfg.checkpoint_uri, cfg.s3_endpoint_url, cfg.s3_addressing_style, cfg.staging_dir
        )
        self.manager = CheckpointManager(self.storage, cfg.keep_last)
        self.async_ckpt = AsyncCheckpointer(self.manager) if cfg.async_checkpoint else None
        self.tb = TensorBoardLog(self.storage, cfg.tensorboard and ctx.is_main, cfg.staging_dir)
        self.step = 0
        self.last_saved_step: int | None = None
        self.stop_requested = False
        self.signal_time: float | None = None
        self.last_ckpt_time = time.monotonic()
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ setup helpers
    def _make_data(self, channels: int, image_size: int, num_classes: int) -> DataSource:
        cfg, ctx = self.cfg, self.ctx
        if cfg.data_dir:
            return ImageFolderData(
                cfg.data_dir,
                channels,
                image_size,
                cfg.num_classes,
                cfg.seed,
                ctx.rank,
                ctx.world,
                cfg.batch_size,
                cfg.workers,
                pin_memory=self.device.type == "cuda",
            )
        return SyntheticData(
            cfg.synthetic_samples,
            channels,
            image_size,
            num_classes,
            cfg.seed,
            ctx.rank,
            ctx.world,
            cfg.batch_size,
            self.device,
        )

    def request_stop(self, signum: int | None = None) -> None:
        """Finish the current step, checkpoint, exit with PREEMPTED (signal handler)."""
        if not self.stop_requested:
            self.signal_time = time.monotonic()
        self.stop_requested = True

    # ------------------------------------------------------------------ state
    def state_dict(self, rng: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "format": 1,
            "step": self.step,
            "epoch": self.step // self.steps_per_epoch,
            "batch_in_epoch": self.step % self.steps_per_epoch,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": rng,
            "meta": dict(self.meta),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        meta = state.get("meta", {})
        for key in ("model", "channels", "image_size", "num_classes"):
            if meta.get(key) != self.meta[key]:
                raise UserError(
                    f"checkpoint in {self.storage.uri} was made with {key}={meta.get(key)!r}, "
                    f"this run has {key}={self.meta[key]!r}; use another --checkpoint-uri"
                )
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler.is_enabled() and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        rng = state.get("rng") or []
        if meta.get("world_size") != self.ctx.world:
            log.warning(
                "checkpoint was written by %s process(es), this run has %d: the data order "
                "after step %d differs from an uninterrupted run",
                meta.get("world_size"),
                self.ctx.world,
                state["step"],
            )
        if self.ctx.rank < len(rng):
            restore_rng_state(rng[self.ctx.rank])
        else:
            seed_everything(self.cfg.seed + 7919 * self.ctx.rank + state["step"])
        self.step = int(state["step"])
        self.last_saved_step = self.step

    def resume(self) -> None:
        """Rank 0 picks the newest complete checkpoint; every rank loads that one."""
        chosen: int | None = None
        state: dict[str, Any] | None = None
        if self.ctx.is_main:
            found = self.manager.find_latest(load=True)
            if found is not None:
                chosen, state = found
        chosen = self.ctx.broadcast_object(chosen)
        if chosen is None:
            log.info("no complete checkpoint in %s: starting at step 0", self.storage.uri)
            return
        if state is None:
            state, _ = self.manager.load(chosen)
        t0 = time.perf_counter()
        self.load_state(state)
        log.info(
            "resumed from checkpoint step %d (epoch %d, batch %d) of %s",
            self.step,
            self.step // self.steps_per_epoch,
            self.step % self.steps_per_epoch,
            self.storage.uri,
        )
        self.timings["resume_apply_s"] = time.perf_counter() - t0

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self, reason: str, sync: bool) -> float:
        """Checkpoint the current step (rank 0 writes). Returns seconds the loop was blocked."""
        t0 = time.perf_counter()
        rng = self.ctx.gather_objects(capture_rng_state())
        if self.ctx.is_main:
            state = self.state_dict(rng)
            if self.async_ckpt is not None and not sync:
                blocked = self.async_ckpt.submit(state, self.step, reason)
                self.timings["async_blocking_s"] = blocked
            else:
                if self.async_ckpt is not None:
                    self.async_ckpt.wait()
                res = self.manager.save(state, self.step, reason)
                log.info(
                    "checkpoint step %d written (%s): %.1f MB in %.2fs",
                    self.step,
                    reason,
                    res.bytes / 1e6,
                    res.seconds,
                )
            self.tb.sync()
        self.last_saved_step = self.step
        self.last_ckpt_time = time.monotonic()
        blocked = time.perf_counter() - t0
        self.tb.scalars(self.step, {"checkpoint/blocking_s": blocked})
        return blocked

    def write_final(self) -> None:
        if not self.ctx.is_main:
            return
        state = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
        info = self.storage.write_file(FINAL_MODEL, lambda w: torch.save(state, cast(BinaryIO, w)))
        log.info("final weights: %s/%s (%.1f MB)", self.storage.uri, FINAL_MODEL, info.size / 1e6)

    # ------------------------------------------------------------------ loop
    def train_step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        amp = self.recipe.amp_dtype
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=amp or torch.float32, enabled=amp is not None):
            loss = functional.cross_entropy(self.ddp(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        return loss.detach()

    def _due(self) -> bool:
        cfg = self.cfg
        return bool(cfg.checkpoint_every_steps) and self.step % cfg.checkpoint_every_steps == 0

    def _time_due(self) -> bool:
        s = self.cfg.checkpoint_every_seconds
        return bool(s) and time.monotonic() - self.last_ckpt_time >= s

    def fit(self) -> int:
        cfg, ctx = self.cfg, self.ctx
        if cfg.resume:
            self.resume()
        log.info(
            "model %s, %s%s, device %s, world %d, batch %d/process, %d steps/epoch, steps %d..%d",
            cfg.model,
            self.recipe.precision,
            " + channels_last" if self.recipe.channels_last else "",
            self.device,
            ctx.world,
            cfg.batch_size,
            self.steps_per_epoch,
            self.step,
            self.total_steps,
        )
        images_per_step = cfg.batch_size * ctx.world
        last_log_t, last_log_step = time.perf_counter(), self.step
        loss = torch.zeros((), device=self.device)
        epoch = self.step // self.steps_per_epoch
        start = self.step % self.steps_per_epoch
        stop = ctx.any_flags(self.stop_requested)[0]  # a signal during setup
        while self.step < self.total_steps and not stop:
            for x, y in self.data.batches(epoch, start):
                x = x.to(self.device, non_blocking=True)
                y = y.to(self.device, non_blocking=True)
                if self.recipe.channels_last:
                    x = x.contiguous(memory_format=torch.channels_last)
                loss = self.train_step(x, y)
                self.step += 1
                if self.hook is not None:
                    self.hook(self, self.step)
                stop, time_due = ctx.any_flags(self.stop_requested, self._time_due())
                if self.step % cfg.log_every_steps == 0 or self.step == self.total_steps:
                    loss_v = float(loss.item())  # synchronises the device
                    now = time.perf_counter()
                    n = self.step - last_log_step
                    dt = max(now - last_log_t, 1e-9)
                    ips = n * images_per_step / dt
                    log.info(
                        "step %d/%d epoch %d loss %.4f images/s %.1f step_time %.4fs lr %.3g",
                        self.step,
                        self.total_steps,
                        (self.step - 1) // self.steps_per_epoch,
                        loss_v,
                        ips,
                        dt / n,
                        self.scheduler.get_last_lr()[0],
                    )
                    self.tb.scalars(
                        self.step,
                        {
                            "train/loss": loss_v,
                            "perf/images_per_s": ips,
                            "perf/step_time_s": dt / n,
                            "train/lr": float(self.scheduler.get_last_lr()[0]),
                        },
                    )
                    last_log_t, last_log_step = time.perf_counter(), self.step
                if stop or self.step >= self.total_steps:
                    break
                if self._due() or time_due:
                    self.checkpoint("periodic", sync=False)
            epoch, start = epoch + 1, 0
        if stop:
            return self._preempted()
        return self._complete()

    def _preempted(self) -> int:
        t0 = time.perf_counter()
        if self.async_ckpt is not None:
            self.async_ckpt.wait()
        if self.last_saved_step != self.step:
            self.checkpoint("preempted", sync=True)
        self.ctx.barrier()  # no rank exits before rank 0 has written
        took = time.perf_counter() - t0
        since = time.monotonic() - self.signal_time if self.signal_time else float("nan")
        self.timings["emergency_checkpoint_s"] = took
        log.warning(
            "preempted: emergency checkpoint of step %d took %.2fs (%.2fs after the signal); "
            "exiting with %d (PREEMPTED, retry to resume)",
            self.step,
            took,
            since,
            exit_codes.PREEMPTED,
        )
        self.tb.close()
        return exit_codes.PREEMPTED

    def _complete(self) -> int:
        if self.async_ckpt is not None:
            self.async_ckpt.wait()
        if self.last_saved_step != self.step:
            self.checkpoint("final", sync=True)
        self.write_final()
        self.tb.close()
        self.ctx.barrier()
        log.info("training complete at step %d", self.step)
        return exit_codes.OK


def run(cfg: Config, hook: StepHook | None = None) -> int:
    """Run one process's part of the training; returns an exit code."""
    ctx = init_distributed(cfg.device)
    trainer: Trainer | None = None
    previous: dict[int, Any] = {}

    def on_signal(signum: int, frame: Any) -> None:
        log.warning(
            "received %s: finishing the current step, then checkpointing",
            signal.Signals(signum).name,
        )
        if trainer is not None:
            trainer.request_stop(signum)
        else:
            pending.append(signum)

    pending: list[int] = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        trainer = Trainer(cfg, ctx, hook)
        if pending:
            trainer.request_stop(pending[0])
        return trainer.fit()
    finally:
        if trainer is not None and trainer.async_ckpt is not None:
            trainer.async_ckpt.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        ctx.shutdown()
