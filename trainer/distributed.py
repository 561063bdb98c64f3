"""Process-group setup from torchrun's environment (``env://``) and small control collectives."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from trainer.errors import UserError

log = logging.getLogger("trainer")


@dataclass
class DistContext:
    """Rank, world size and device of this process."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    backend: str | None = None
    control: Any = None  # a gloo group for CPU-side control messages
    checkpoint_group: Any = None  # a gloo group of its own for sharded (DCP) checkpoint writes

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def any_flags(self, *flags: bool) -> list[bool]:
        """Element-wise OR of boolean flags over all ranks (no GPU sync: gloo on CPU)."""
        if not self.enabled:
            return list(flags)
        t = torch.tensor([int(f) for f in flags], dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.control)
        return [bool(v) for v in t.tolist()]

    def gather_objects(self, obj: Any) -> list[Any]:
        if not self.enabled:
            return [obj]
        out: list[Any] = [None] * self.world
        dist.all_gather_object(out, obj, group=self.control)
        return out

    def broadcast_object(self, obj: Any) -> Any:
        if not self.enabled:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.control)
        return box[0]

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier(group=self.control)

    def shutdown(self) -> None:
        if self.backend is not None and dist.is_initialized():
            dist.destroy_process_group()


def init_distributed(device_choice: str, group_of_one: bool = False) -> DistContext:
    """Pick the device; join the process group when torchrun started several processes.

    ``group_of_one``: form a process group even for a single process (FSDP needs one), from
    an in-memory store, so no rendezvous port is needed. Every group gets a second gloo group
    for sharded checkpoint writes: they run in a background thread, and collectives of two
    threads on one group could interleave differently on each rank.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = device_choice == "cuda" or (device_choice == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        raise UserError("--device cuda but no CUDA device is available")
    if use_cuda:
        if local_rank >= torch.cuda.device_count():
            raise UserError(
                f"LOCAL_RANK {local_rank} but only {torch.cuda.device_count()} GPU(s) visible; "
                "start at most one process per GPU"
            )
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    ctx = DistContext(rank=rank, world=world, local_rank=local_rank, device=device)
    if world > 1 or group_of_one:
        backend = "nccl" if use_cuda else "gloo"
        if world > 1:
            dist.init_process_group(backend=backend, init_method="env://")
        else:
            dist.init_process_group(backend=backend, store=dist.HashStore(), rank=0, world_size=1)
        ctx.backend = backend
        ctx.control = dist.new_group(backend="gloo") if backend != "gloo" else dist.group.WORLD
        ctx.checkpoint_group = dist.new_group(backend="gloo")
        log.info("joined process group: rank %d of %d, backend %s", rank, world, backend)
    return ctx
