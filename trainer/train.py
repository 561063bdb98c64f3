"""The training loop: precision recipe, DDP or FSDP, gradient accumulation, checkpoints,
resume (also on another number of processes) and graceful preemption."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import random
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import torch
from torch import nn
from torch.nn import functional

from trainer import __version__, exit_codes, shards
from trainer.checkpoint import (
    FORMAT_DCP,
    FORMAT_FILE,
    FORMAT_NAMES,
    AsyncCheckpointer,
    CheckpointManager,
    CheckpointWriteError,
    capture_rng_state,
    format_of,
    generation_of,
    restore_rng_state,
    step_dir,
)
from trainer.config import Config
from trainer.data import DataSource, ImageFolderData, Step, SyntheticData, SyntheticTokens
from trainer.distributed import DistContext, init_distributed
from trainer.errors import CheckpointError, UserError
from trainer.models import GPT, SPECS, GPTShape, build_model, fsdp_units
from trainer.remote import RemoteOptions
from trainer.sharded import ShardedCheckpointer
from trainer.storage import open_storage, probe_writable
from trainer.tblog import TensorBoardLog

log = logging.getLogger("trainer")

FINAL_MODEL = "final/model.pt"
FINAL_INFO = "final/model.json"
EXPORT_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}

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


def accumulation_rounds(cfg: Config, world: int) -> int:
    """Micro-batches per process and step that make up ``--global-batch-size``."""
    per_round = cfg.batch_size * world
    if cfg.global_batch_size is None:
        return 1
    if cfg.global_batch_size % per_round:
        raise UserError(
            f"--global-batch-size {cfg.global_batch_size} is not a multiple of --batch-size "
            f"{cfg.batch_size} x {world} process(es) = {per_round}; choose a --batch-size "
            f"that divides {cfg.global_batch_size} // {world}"
        )
    return cfg.global_batch_size // per_round


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
        self.format = FORMAT_DCP if cfg.checkpoint_format == "dcp" else FORMAT_FILE
        self.accum = accumulation_rounds(cfg, ctx.world)
        seed_everything(cfg.seed)
        self.data = self._make_data()
        self.data.check()
        self.steps_per_epoch = self.data.steps_per_epoch
        self.total_steps = cfg.max_steps or (cfg.epochs or 1) * self.steps_per_epoch
        self.meta = {
            "model": cfg.model,
            **self.data.arch,
            "precision": self.recipe.precision,
            "world_size": ctx.world,
            "batch_size": cfg.batch_size,
            "accumulation": self.accum,
            "global_batch": self.data.global_batch,
            "sharding": cfg.sharding,
            "dataset_size": self.data.size,
            "seed": cfg.seed,
            "trainer_version": __version__,
        }
        torch.manual_seed(cfg.seed)  # same initial weights on every rank (and every world size)
        model = self._build_model()
        self.is_gpt = isinstance(model, GPT)
        if self.is_gpt and self.recipe.channels_last:
            self.recipe = Recipe(self.recipe.precision, False)  # no images: nothing to lay out
        self.autocast = self.recipe.amp_dtype is not None
        self.model: nn.Module = model
        self.forward_module: nn.Module = model
        if cfg.sharding == "fsdp":
            self._shard(model)
            self.autocast = False  # FSDP's MixedPrecisionPolicy casts instead
        else:
            mf = torch.channels_last if self.recipe.channels_last else torch.contiguous_format
            self.model = model.to(self.device, memory_format=mf)  # type: ignore[call-overload]
            self.forward_module = self.model
            if ctx.enabled:
                from torch.nn.parallel import DistributedDataParallel

                ids = [ctx.local_rank] if self.device.type == "cuda" else None
                self.forward_module = DistributedDataParallel(self.model, device_ids=ids)
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
        self.sharded: ShardedCheckpointer | None = None
        self.async_ckpt: AsyncCheckpointer | ShardedCheckpointer | None = None
        if self.format == FORMAT_DCP:
            self.sharded = ShardedCheckpointer(self.manager, ctx)
            self.async_ckpt = self.sharded if cfg.async_checkpoint else None
        elif cfg.async_checkpoint:
            self.async_ckpt = AsyncCheckpointer(self.manager)
        self.tb = TensorBoardLog(self.storage, cfg.tensorboard and ctx.is_main, cfg.staging_dir)
        self.step = 0
        self.last_saved_step: int | None = None
        self.stop_requested = False
        self.signal_time: float | None = None
        self.last_ckpt_time = time.monotonic()
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ setup helpers
    def _make_data(self) -> DataSource:
        cfg, ctx = self.cfg, self.ctx
        if cfg.model == "gpt":
            return SyntheticTokens(
                cfg.synthetic_samples,
                cfg.seq_len,
                cfg.vocab_size,
                cfg.seed,
                ctx.rank,
                ctx.world,
                cfg.batch_size,
                self.accum,
                self.device,
            )
        spec = SPECS[cfg.model]
        image_size = cfg.image_size or spec.image_size
        if cfg.data_dir and shards.is_shard_dataset(cfg.data_dir):
            return shards.ShardData(
                cfg.data_dir,
                spec.channels,
                image_size,
                cfg.num_classes,
                cfg.seed,
                ctx.rank,
                ctx.world,
                cfg.batch_size,
                self.accum,
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
                spec.channels,
                image_size,
                cfg.num_classes,
                cfg.seed,
                ctx.rank,
                ctx.world,
                cfg.batch_size,
                self.accum,
                cfg.workers,
                pin_memory=self.device.type == "cuda",
            )
        return SyntheticData(
            cfg.synthetic_samples,
            spec.channels,
            image_size,
            cfg.num_classes or spec.num_classes,
            cfg.seed,
            ctx.rank,
            ctx.world,
            cfg.batch_size,
            self.accum,
            self.device,
        )

    def _build_model(self) -> nn.Module:
        cfg, arch = self.cfg, self.data.arch
        if cfg.model == "gpt":
            shape = GPTShape(
                arch["vocab_size"], arch["seq_len"], cfg.gpt_layers, cfg.gpt_dim, cfg.gpt_heads
            )
            self.data.arch.update(layers=shape.layers, dim=shape.dim, heads=shape.heads)
            self.meta.update(self.data.arch)
            return GPT(shape, cfg.gpt_dropout)
        return build_model(cfg.model, arch["channels"], arch["image_size"], arch["num_classes"])

    def _shard(self, model: nn.Module) -> None:
        """FSDP2: each unit (a GPT block) and then the root become ``fully_shard`` groups over
        all processes; bf16/fp16 through FSDP's mixed-precision policy (fp32 master weights,
        fp32 gradient reduction). The full model is built on the CPU from the seed and sharded
        unit by unit, so the device never holds more than one unit unsharded."""
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        mesh = init_device_mesh(self.device.type, (self.ctx.world,))
        amp = self.recipe.amp_dtype
        policy = MixedPrecisionPolicy(param_dtype=amp, reduce_dtype=torch.float32 if amp else None)
        if self.recipe.channels_last:
            model = model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        for unit in fsdp_units(model):
            fully_shard(unit, mesh=mesh, mp_policy=policy)
        fully_shard(model, mesh=mesh, mp_policy=policy)

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
    def _position(self) -> dict[str, Any]:
        batch_in_epoch = self.step % self.steps_per_epoch
        return {
            "step": self.step,
            "epoch": self.step // self.steps_per_epoch,
            "batch_in_epoch": batch_in_epoch,
            # the data position: a prefix of the epoch's permutation, whatever the sharding
            "samples_seen_in_epoch": batch_in_epoch * self.meta["global_batch"],
            "samples_seen": self.step * self.meta["global_batch"],
        }

    def state_dict(self, rng: list[dict[str, Any]]) -> dict[str, Any]:
        """The whole state of a file-format checkpoint (rank 0 writes it)."""
        return {
            "format": FORMAT_FILE,
            **self._position(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": rng,
            "meta": dict(self.meta),
        }

    def trainer_state(self, rng: list[dict[str, Any]]) -> dict[str, Any]:
        """What a sharded checkpoint keeps beside the shards (``trainer.pt``): small, so a
        copy is taken now (the scheduler and scaler go on changing)."""
        state = {
            "format": FORMAT_DCP,
            **self._position(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": rng,
            "meta": dict(self.meta),
        }
        buf = io.BytesIO()
        torch.save(state, buf)
        buf.seek(0)
        return cast(dict[str, Any], torch.load(buf, weights_only=True))

    def sharded_state(self) -> dict[str, Any]:
        """Model and optimizer state for DCP: this rank's shards (FSDP) or replicated tensors
        (DDP), the optimizer's keyed by parameter name so that it reshards."""
        from torch.distributed.checkpoint.state_dict import get_state_dict

        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        return {"model": model_sd, "optim": optim_sd}

    def _check_meta(self, state: dict[str, Any]) -> None:
        meta = state.get("meta", {})
        keys = ("model", *self.data.arch)
        for key in keys:
            if meta.get(key) != self.meta[key]:
                raise UserError(
                    f"checkpoint in {self.storage.uri} was made with {key}={meta.get(key)!r}, "
                    f"this run has {key}={self.meta[key]!r}; use another --checkpoint-uri"
                )
        self._check_data_position(state)

    def load_state(self, state: dict[str, Any]) -> None:
        """Apply a file-format checkpoint."""
        self._check_meta(state)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self._apply_trainer_state(state)

    def _apply_trainer_state(self, state: dict[str, Any]) -> None:
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
        ``G`` (per-process batch x processes x accumulation rounds) the epoch has used exactly
        its first ``k*G`` samples, however they were split over processes and rounds. So a
        run with the same data set size and the same ``G`` continues exactly (another split of
        ``G`` is remapped: same step, same samples per step). Anything else would train some
        samples twice or skip them, and change what a step means for ``--max-steps`` and the
        LR schedule: exit 64 with what to change.
        """
        meta = state.get("meta", {})
        saved_world, saved_batch = meta.get("world_size"), meta.get("batch_size")
        saved_accum = meta.get("accumulation", 1)
        saved_global = meta.get("global_batch")
        if saved_global is None and saved_world is not None and saved_batch is not None:
            saved_global = saved_world * saved_batch  # written before global_batch was kept
        here = self.meta["global_batch"]
        where = f"checkpoint of step {state['step']} in {self.storage.uri}"
        if saved_global is not None and saved_global != here:
            rounds = f" x {saved_accum} accumulation rounds" if saved_accum != 1 else ""
            mine = f" x {self.accum} accumulation rounds" if self.accum != 1 else ""
            raise UserError(
                f"{where} was written with a global batch of {saved_global} samples "
                f"(--batch-size {saved_batch} x {saved_world} process(es){rounds}); this run "
                f"has {here} (--batch-size {self.cfg.batch_size} x {self.ctx.world}{mine}): "
                f"resuming would train samples twice or skip them. Keep --batch-size x "
                f"processes = {saved_global} or set --global-batch-size {saved_global}, or use "
                "another --checkpoint-uri"
            )
        saved_size = meta.get("dataset_size")
        if saved_size is not None and saved_size != self.data.size:
            raise UserError(
                f"{where} was written for a data set of {saved_size} samples, this run has "
                f"{self.data.size}: the saved data position does not apply; use another "
                "--checkpoint-uri"
            )
        if saved_world is not None and (saved_world, saved_accum) != (self.ctx.world, self.accum):
            log.info(
                "%s was written by %s process(es) of batch %s x %s round(s); this run has %d "
                "of batch %d x %d round(s): the same global batch, so the data position maps "
                "exactly (step %d, %d samples seen)",
                where,
                saved_world,
                saved_batch,
                saved_accum,
                self.ctx.world,
                self.cfg.batch_size,
                self.accum,
                state["step"],
                state["step"] * here,
            )

    def _format_problem(self, step: int, manifest: dict[str, Any]) -> str | None:
        fmt = format_of(manifest)
        if fmt == self.format:
            return None
        return (
            f"checkpoint of step {step} in {self.storage.uri} is in the "
            f"{FORMAT_NAMES[fmt]} format (sharding {manifest.get('sharding', 'ddp')}); this run "
            f"writes {FORMAT_NAMES[self.format]} (--sharding {self.cfg.sharding}, "
            f"--checkpoint-format {self.cfg.checkpoint_format}): resume with the settings it "
            "was written with, or use another --checkpoint-uri"
        )

    def resume(self) -> None:
        """Find the newest complete checkpoint and load it on every rank."""
        t0 = time.perf_counter()
        loaded = self._resume_sharded() if self.format == FORMAT_DCP else self._resume_file()
        if not loaded:
            log.info("no complete checkpoint in %s: starting at step 0", self.storage.uri)
            return
        log.info(
            "resumed from checkpoint step %d (epoch %d, batch %d) of %s",
            self.step,
            self.step // self.steps_per_epoch,
            self.step % self.steps_per_epoch,
            self.storage.uri,
        )
        self.timings["resume_apply_s"] = time.perf_counter() - t0

    def _resume_file(self) -> bool:
        """Rank 0 picks the newest complete checkpoint; every rank loads that one."""
        chosen: int | None = None
        state: dict[str, Any] | None = None
        problem: str | None = None
        if self.ctx.is_main:
            found = self.manager.find_latest()
            if found is not None:
                chosen, state, manifest = found
                self.manager.generation = generation_of(manifest)
                problem = self._format_problem(chosen, manifest)
            else:
                self.start_new_generation()
        chosen, problem = self.ctx.broadcast_object((chosen, problem))
        if problem is not None:
            raise UserError(problem)
        if chosen is None:
            return False
        if state is None:
            state, _ = self.manager.load(chosen)
        self.load_state(state)
        return True

    def _resume_sharded(self) -> bool:
        """Rank 0 ranks the checkpoints by their manifests; for each, newest first, every rank
        verifies a share of its files; the first that all ranks find intact is loaded,
        resharded to this run (``dcp.load``)."""
        assert self.sharded is not None
        candidates: list[tuple[int, dict[str, Any]]] = []
        if self.ctx.is_main:
            ranked, broken = self.manager.candidates()
            for step, why in broken.items():
                log.warning("skipping checkpoint %s/%s: %s", self.storage.uri, step_dir(step), why)
            candidates = [(step, self.manager.read_manifest(step)) for step in ranked]
        candidates = self.ctx.broadcast_object(candidates)
        for step, manifest in candidates:
            problem = self._format_problem(step, manifest)
            if problem is not None:
                raise UserError(problem)
            mine = self.sharded.verify_share(step, manifest)
            reasons = [r for r in self.ctx.gather_objects(mine) if r]
            state: dict[str, Any] | None = None
            if not reasons and self.ctx.is_main:
                try:
                    state = self.manager.load_trainer_state(step, manifest)
                except CheckpointError as e:
                    reasons.append(str(e))
            reasons, state = self.ctx.broadcast_object((reasons, state))
            if reasons:
                if self.ctx.is_main:
                    log.warning(
                        "skipping checkpoint %s/%s: %s",
                        self.storage.uri,
                        step_dir(step),
                        "; ".join(reasons),
                    )
                continue
            assert state is not None
            self._check_meta(state)
            if self.ctx.is_main:
                self.manager.generation = generation_of(manifest)
                self.manager.note_good(step, manifest)
            from torch.distributed.checkpoint.state_dict import set_state_dict

            sharded = self.sharded_state()
            self.sharded.load(sharded, step)
            set_state_dict(
                self.model,
                self.optimizer,
                model_state_dict=sharded["model"],
                optim_state_dict=sharded["optim"],
            )
            self._apply_trainer_state(state)
            return True
        self.start_new_generation()
        return False

    def start_new_generation(self) -> None:
        """A run that starts at step 0 ranks its checkpoints above everything in the folder."""
        if self.ctx.is_main:
            self.manager.generation = self.manager.newest_generation() + 1

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self, reason: str, sync: bool) -> float:
        """Checkpoint the current step (file format: rank 0 writes; dcp: every rank writes its
        shards). Returns the seconds the loop was blocked."""
        t0 = time.perf_counter()
        rng = self.ctx.gather_objects(capture_rng_state())
        if self.sharded is not None:
            self._checkpoint_sharded(rng, reason, sync)
        elif self.ctx.is_main:
            state = self.state_dict(rng)
            if self.async_ckpt is not None and not sync:
                blocked = self.async_ckpt.submit(state, self.step, reason)  # type: ignore[call-arg, arg-type]
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
        if self.ctx.is_main:
            self.tb.sync()
        self.last_saved_step = self.step
        self.last_ckpt_time = time.monotonic()
        blocked = time.perf_counter() - t0
        self.tb.scalars(self.step, {"checkpoint/blocking_s": blocked})
        return blocked

    def _checkpoint_sharded(self, rng: list[dict[str, Any]], reason: str, sync: bool) -> None:
        assert self.sharded is not None
        trainer_state = self.trainer_state(rng) if self.ctx.is_main else None
        state = self.sharded_state()
        if self.async_ckpt is not None and not sync:
            blocked = self.sharded.submit(state, trainer_state, self.step, reason)
            self.timings["async_blocking_s"] = blocked
            return
        if self.async_ckpt is not None:
            self.async_ckpt.wait()
        try:
            res = self.sharded.save(state, trainer_state, self.step, reason)
        except Exception as e:
            raise CheckpointWriteError(
                f"checkpoint of step {self.step} failed: {type(e).__name__}: {e}"
            ) from e
        if res is not None:
            log.info(
                "sharded checkpoint step %d written (%s): %.1f MB in %.2fs",
                self.step,
                reason,
                res.bytes / 1e6,
                res.seconds,
            )

    def write_final(self) -> None:
        """The final weights as a plain ``state_dict`` in ``--export-dtype``: loadable with
        ``torch.load`` and ``load_state_dict``, no process group needed. Under FSDP every rank
        takes part in gathering them; rank 0 writes."""
        dtype = EXPORT_DTYPES[self.cfg.export_dtype]
        if self.cfg.sharding == "fsdp":
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                get_model_state_dict,
            )

            options = StateDictOptions(full_state_dict=True, cpu_offload=True)
            full = get_model_state_dict(self.model, options=options)
        else:
            full = self.model.state_dict() if self.ctx.is_main else {}
        if not self.ctx.is_main:
            return
        state = {
            k: (v.detach().to("cpu", dtype) if v.is_floating_point() else v.detach().cpu())
            for k, v in full.items()
        }
        info = self.storage.write_file(FINAL_MODEL, lambda w: torch.save(state, cast(BinaryIO, w)))
        about = {
            "model": self.cfg.model,
            "arch": self.data.arch,
            "dtype": self.cfg.export_dtype,
            "step": self.step,
            "parameters": sum(v.numel() for v in state.values()),
            "file": {
                "name": os.path.basename(FINAL_MODEL),
                "size": info.size,
                "sha256": info.sha256,
            },
            "load": "torch.load(path, weights_only=True) -> state_dict of trainer.models",
        }
        self.storage.write_bytes(FINAL_INFO, json.dumps(about, indent=1).encode())
        log.info(
            "final weights (%s): %s/%s (%.1f MB)",
            self.cfg.export_dtype,
            self.storage.uri,
            FINAL_MODEL,
            info.size / 1e6,
        )

    # ------------------------------------------------------------------ loop
    @contextlib.contextmanager
    def _gradient_sync(self, last: bool) -> Iterator[None]:
        """Reduce gradients over the processes only in the last accumulation round."""
        if last or not self.ctx.enabled:
            yield
        elif self.cfg.sharding == "fsdp":
            self.model.set_requires_gradient_sync(False)  # type: ignore[operator]
            try:
                yield
            finally:
                self.model.set_requires_gradient_sync(True)  # type: ignore[operator]
        else:
            with self.forward_module.no_sync():  # type: ignore[operator]
                yield

    def _loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = self.forward_module(x)
        if self.is_gpt:
            return functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
        return functional.cross_entropy(out, y)

    def train_step(self, micro: Step) -> torch.Tensor:
        """One optimizer step over this rank's micro-batches; returns the mean loss."""
        amp = self.recipe.amp_dtype
        self.optimizer.zero_grad(set_to_none=True)
        total = torch.zeros((), device=self.device)
        for i, (x, y) in enumerate(micro):
            with self._gradient_sync(i == len(micro) - 1):
                with torch.autocast(
                    self.device.type, dtype=amp or torch.float32, enabled=self.autocast
                ):
                    loss = self._loss(x, y) / len(micro)
                self.scaler.scale(loss).backward()
            total += loss.detach()
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
        return total

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
            "model %s, %s%s, %s, device %s, world %d, batch %d/process x %d round(s) = global "
            "batch %d, %d steps/epoch, steps %d..%d",
            cfg.model,
            self.recipe.precision,
            " + channels_last" if self.recipe.channels_last else "",
            cfg.sharding,
            self.device,
            ctx.world,
            cfg.batch_size,
            self.accum,
            self.meta["global_batch"],
            self.steps_per_epoch,
            self.step,
            self.total_steps,
        )
        samples_per_step = self.meta["global_batch"]
        last_log_t, last_log_step = time.perf_counter(), self.step
        loss = torch.zeros((), device=self.device)
        epoch = self.step // self.steps_per_epoch
        start = self.step % self.steps_per_epoch
        stop = ctx.any_flags(self.stop_requested)[0]  # a signal during setup
        write_failed = False
        try:
            while self.step < self.total_steps and not stop:
                for micro in self.data.steps(epoch, start):
                    loss = self.train_step([self._to_device(x, y) for x, y in micro])
                    self.step += 1
                    if self.hook is not None:
                        self.hook(self, self.step)
                    stop, time_due, write_failed = ctx.any_flags(
                        self.stop_requested, self._time_due(), self._write_failed()
                    )
                    if self.step % cfg.log_every_steps == 0 or self.step == self.total_steps:
                        self._log_step(loss, samples_per_step, last_log_t, last_log_step)
                        last_log_t, last_log_step = time.perf_counter(), self.step
                    if write_failed:
                        break
                    if stop or self.step >= self.total_steps:
                        break
                    if self._due() or time_due:
                        self.checkpoint("periodic", sync=False)
                        if self.async_ckpt is not None:  # it waited for the previous write:
                            write_failed = ctx.any_flags(self._write_failed())[0]  # did it fail?
                            if write_failed:
                                break
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

    def _to_device(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.to(self.device, non_blocking=True)
        y = y.to(self.device, non_blocking=True)
        if self.recipe.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return x, y

    def _log_step(
        self, loss: torch.Tensor, samples_per_step: int, last_t: float, last_step: int
    ) -> None:
        if self.ctx.enabled:  # the loss of the global batch: the mean over the processes
            import torch.distributed as dist

            loss = loss.clone()
            dist.all_reduce(loss)
            loss /= self.ctx.world
        loss_v = float(loss.item())  # synchronises the device
        n = self.step - last_step
        dt = max(time.perf_counter() - last_t, 1e-9)
        rate = n * samples_per_step / dt
        unit = "images"
        if self.is_gpt:  # a sample is a sequence: count its tokens
            unit, rate = "tokens", rate * self.data.arch["seq_len"]
        log.info(
            "step %d/%d epoch %d loss %.6f %s/s %.1f step_time %.4fs lr %.3g",
            self.step,
            self.total_steps,
            (self.step - 1) // self.steps_per_epoch,
            loss_v,
            unit,
            rate,
            dt / n,
            self.scheduler.get_last_lr()[0],
        )
        self.tb.scalars(
            self.step,
            {
                "train/loss": loss_v,
                f"perf/{unit}_per_s": rate,
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
    # FSDP needs a process group, and DCP coordinates through one: a group of one if need be
    sharded = cfg.sharding == "fsdp" or cfg.checkpoint_format == "dcp"
    ctx = init_distributed(cfg.device, group_of_one=sharded)
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
        if trainer is not None and trainer.sharded is not None:
            trainer.sharded.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        ctx.shutdown()
