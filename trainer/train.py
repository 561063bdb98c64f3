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

from trainer import __version__, exit_codes, shards
from trainer.checkpoint import (
    AsyncCheckpointer,
    CheckpointManager,
    CheckpointWriteError,
    capture_rng_state,
    generation_of,
    restore_rng_state,
)
from trainer.config import Config
from trainer.data import DataSource, ImageFolderData, SyntheticData
from trainer.distributed import DistContext, init_distributed
from trainer.errors import UserError
from trainer.models import SPECS, build_model
from trainer.remote import RemoteOptions
from trainer.storage import open_storage, probe_writable
from trainer.tblog import TensorBoardLog

log = logging.getLogger("trainer")

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
            "global_batch": cfg.batch_size * ctx.world,
            "dataset_size": self.data.size,
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
            cfg.checkpoint_uri,
            cfg.storage_endpoint_url,
            cfg.s3_addressing_style,
            cfg.staging_dir,
            cfg.storage_region,
            cfg.sts_endpoint_url,
        )
        self._probe_storage()
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
        if cfg.data_dir and shards.is_shard_dataset(cfg.data_dir):
            return shards.ShardData(
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
                options=RemoteOptions(
                    cfg.storage_endpoint_url,
                    cfg.storage_region,
                    cfg.sts_endpoint_url,
                    cfg.s3_addressing_style,
                ),
            )
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

    def _probe_storage(self) -> None:
        """Rank 0 (the only writer) checks that the URI is writable; every rank stops with
        the same one-line error if not."""
        problem: str | None = None
        if self.ctx.is_main:
            try:
                probe_writable(self.storage)
            except UserError as e:
                problem = str(e)
        problem = self.ctx.broadcast_object(problem)
        if problem is not None:
            raise UserError(problem)

    def request_stop(self, signum: int | None = None) -> None:
        """Finish the current step, checkpoint, exit with PREEMPTED (signal handler)."""
        if not self.stop_requested:
            self.signal_time = time.monotonic()
        self.stop_requested = True

    # ------------------------------------------------------------------ state
    def state_dict(self, rng: list[dict[str, Any]]) -> dict[str, Any]:
        batch_in_epoch = self.step % self.steps_per_epoch
        return {
            "format": 1,
            "step": self.step,
            "epoch": self.step // self.steps_per_epoch,
            "batch_in_epoch": batch_in_epoch,
            # the data position: a prefix of the epoch's permutation, whatever the sharding
            "samples_seen_in_epoch": batch_in_epoch * self.meta["global_batch"],
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
        self._check_data_position(state)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler.is_enabled() and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])
        rng = state.get("rng") or []
        if self.ctx.rank < len(rng):
            restore_rng_state(rng[self.ctx.rank])
        else:
            seed_everything(self.cfg.seed + 7919 * self.ctx.rank + state["step"])
        self.step = int(state["step"])
        self.last_saved_step = self.step

    def _check_data_position(self, state: dict[str, Any]) -> None:
        """Go on only where the saved data position means the same samples in this run.

        Every epoch is one permutation of the data set; after ``k`` steps of a global batch
        ``G`` (per-process batch x processes) the epoch has used exactly its first ``k*G``
        samples, however they were split over the processes. So a run with the same data set
        size and the same ``G`` continues exactly (another split of ``G`` over processes is
        remapped: same step, same samples per step). Anything else would train some samples
        twice or skip them, and change what a step means for ``--max-steps`` and the LR
        schedule: exit 64 with what to change.
        """
        meta = state.get("meta", {})
        saved_world, saved_batch = meta.get("world_size"), meta.get("batch_size")
        saved_global = meta.get("global_batch")
        if saved_global is None and saved_world is not None and saved_batch is not None:
            saved_global = saved_world * saved_batch  # written before global_batch was kept
        here = self.meta["global_batch"]
        where = f"checkpoint of step {state['step']} in {self.storage.uri}"
        if saved_global is not None and saved_global != here:
            raise UserError(
                f"{where} was written with a global batch of {saved_global} samples "
                f"(--batch-size {saved_batch} x {saved_world} process(es)); this run has "
                f"{here} (--batch-size {self.cfg.batch_size} x {self.ctx.world}): resuming would "
                f"train samples twice or skip them. Keep --batch-size x processes = "
                f"{saved_global}, or use another --checkpoint-uri"
            )
        saved_size = meta.get("dataset_size")
        if saved_size is not None and saved_size != self.data.size:
            raise UserError(
                f"{where} was written for a data set of {saved_size} samples, this run has "
                f"{self.data.size}: the saved data position does not apply; use another "
                "--checkpoint-uri"
            )
        if saved_world is not None and saved_world != self.ctx.world:
            log.info(
                "%s was written by %s process(es) of batch %s; this run has %d of batch %d: "
                "the same global batch, so the data position maps exactly (step %d)",
                where,
                saved_world,
                saved_batch,
                self.ctx.world,
                self.cfg.batch_size,
                state["step"],
            )

    def resume(self) -> None:
        """Rank 0 picks the newest complete checkpoint; every rank loads that one."""
        chosen: int | None = None
        state: dict[str, Any] | None = None
        if self.ctx.is_main:
            found = self.manager.find_latest()
            if found is not None:
                chosen, state, manifest = found
                self.manager.generation = generation_of(manifest)
            else:
                self.start_new_generation()
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

    def start_new_generation(self) -> None:
        """A run that starts at step 0 ranks its checkpoints above everything in the folder."""
        if self.ctx.is_main:
            self.manager.generation = self.manager.newest_generation() + 1

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
                try:
                    res = self.manager.save(state, self.step, reason)
                except Exception as e:
                    raise CheckpointWriteError(
                        f"checkpoint of step {self.step} failed: {type(e).__name__}: {e}"
                    ) from e
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
        if self.scaler.is_enabled() and self.step == 0:
            # The GradScaler skips a step whose gradients overflowed (often the first, at the
            # initial scale); the schedule still counts it, and torch warns once, at the
            # scheduler's first step, that the optimizer has not stepped. Only that call.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler")
                self.scheduler.step()
        else:
            self.scheduler.step()
        return loss.detach()

    def _due(self) -> bool:
        cfg = self.cfg
        return bool(cfg.checkpoint_every_steps) and self.step % cfg.checkpoint_every_steps == 0

    def _time_due(self) -> bool:
        s = self.cfg.checkpoint_every_seconds
        return bool(s) and time.monotonic() - self.last_ckpt_time >= s

    def _write_failed(self) -> bool:
        return self.async_ckpt is not None and self.async_ckpt.failed()

    def fit(self) -> int:
        cfg, ctx = self.cfg, self.ctx
        if cfg.resume:
            self.resume()
        else:
            self.start_new_generation()
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
        write_failed = False
        try:
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
                    stop, time_due, write_failed = ctx.any_flags(
                        self.stop_requested, self._time_due(), self._write_failed()
                    )
                    if self.step % cfg.log_every_steps == 0 or self.step == self.total_steps:
                        self._log_step(loss, images_per_step, last_log_t, last_log_step)
                        last_log_t, last_log_step = time.perf_counter(), self.step
                    if write_failed:
                        break
                    if stop or self.step >= self.total_steps:
                        break
                    if self._due() or time_due:
                        self.checkpoint("periodic", sync=False)
                if write_failed:
                    break
                epoch, start = epoch + 1, 0
        finally:
            self.data.close()
        if write_failed:
            return self._write_failure()
        if stop:
            return self._preempted()
        return self._complete()

    def _log_step(
        self, loss: torch.Tensor, images_per_step: int, last_t: float, last_step: int
    ) -> None:
        loss_v = float(loss.item())  # synchronises the device
        n = self.step - last_step
        dt = max(time.perf_counter() - last_t, 1e-9)
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

    def _write_failure(self) -> int:
        """A background checkpoint failed: every rank stops with CHECKPOINT_FAILED."""
        message = "a background checkpoint write failed on rank 0"
        if self.async_ckpt is not None:
            try:
                self.async_ckpt.wait()
            except CheckpointWriteError as e:
                message = str(e)
        log.error(
            "%s; stopping at step %d with exit %d (CHECKPOINT_FAILED): the newest loadable "
            "checkpoint in %s is older than this step",
            message,
            self.step,
            exit_codes.CHECKPOINT_FAILED,
            self.storage.uri,
        )
        self.tb.close()
        return exit_codes.CHECKPOINT_FAILED

    def _preempted(self) -> int:
        t0 = time.perf_counter()
        if self.async_ckpt is not None:
            try:
                self.async_ckpt.wait()
            except CheckpointWriteError as e:
                # the emergency checkpoint below supersedes it
                log.error("%s; writing the emergency checkpoint instead", e)
                self.last_saved_step = None
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
    except CheckpointWriteError as e:
        log.error("%s; exiting with %d (CHECKPOINT_FAILED)", e, exit_codes.CHECKPOINT_FAILED)
        return exit_codes.CHECKPOINT_FAILED
    finally:
        if trainer is not None and trainer.async_ckpt is not None:
            try:
                trainer.async_ckpt.wait()  # never leave a write running
            except CheckpointWriteError as e:
                log.error("%s", e)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        ctx.shutdown()
