"""GPU sizing: training memory for a model and the catalog instance types that hold it.

Formula (say it, so a user can check it):
- weights + gradients + optimizer state, bytes per parameter, for Adam (as in Rajbhandari
  et al., "ZeRO", 2020, section 3.1): mixed precision (bf16/fp16) keeps 2 B weights, 2 B
  gradients and 12 B of fp32 master weights, momentum and variance = 16 B; fp32 keeps
  4 + 4 + 8 = 16 B; SGD with momentum needs 4 B of state instead of Adam's 8 B (fp32) or
  12 B (mixed).
- activations of a GPT-style transformer per layer, 16-bit, no recomputation and no tensor
  parallelism (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
  Models", 2022, eq. 1): s*b*h*(34 + 5*a*s/h) bytes; with full activation checkpointing
  only each layer's input is kept: 2*s*b*h bytes. fp32 doubles both.
- reserve: CUDA context, allocator fragmentation and workspace: 10% of the above plus 1 GiB.
When `--layers`/`--hidden` are not given, the shape is assumed: params = 12*L*h^2 with
h = 64*L (close to GPT-2/GPT-3 shapes from 350M to 7B) and one head per 64 dimensions.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from typing import Any

GIB = 1024**3
_STATE_BYTES = {
    # (weights, gradients, optimizer state) bytes per parameter
    ("adam", "fp32"): (4, 4, 8),
    ("adam", "mixed"): (2, 2, 12),
    ("sgd", "fp32"): (4, 4, 4),
    ("sgd", "mixed"): (2, 2, 8),
}


@dataclass(frozen=True)
class Memory:
    params: float
    precision: str
    optimizer: str
    layers: int
    hidden: int
    heads: int
    seq_len: int
    micro_batch: int
    checkpointing: bool
    shape_assumed: bool
    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    reserve_gib: float

    @property
    def states_gib(self) -> float:
        return self.weights_gib + self.gradients_gib + self.optimizer_gib

    @property
    def total_gib(self) -> float:
        return self.states_gib + self.activations_gib + self.reserve_gib


def estimate_memory(
    params: float,
    precision: str = "bf16",
    *,
    optimizer: str = "adam",
    micro_batch: int = 1,
    seq_len: int = 2048,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    checkpointing: bool = False,
) -> Memory:
    if params <= 0:
        raise ValueError("params must be positive")
    kind = "fp32" if precision == "fp32" else "mixed"
    weights, grads, state = _STATE_BYTES[(optimizer, kind)]
    assumed = layers is None or hidden is None
    if layers is None and hidden is None:
        layers = max(1, round((params / (12 * 64**2)) ** (1 / 3)))
        hidden = 64 * layers
    elif layers is None:
        assert hidden is not None
        layers = max(1, round(params / (12 * hidden**2)))
    elif hidden is None:
        hidden = max(64, int(math.sqrt(params / (12 * layers)) // 64 * 64))
    assert layers is not None and hidden is not None
    heads = heads or max(1, hidden // 64)
    s, b, h, a = seq_len, micro_batch, hidden, heads
    per_layer = 2 * s * b * h if checkpointing else s * b * h * (34 + 5 * a * s / h)
    activations = per_layer * layers * (2 if kind == "fp32" else 1)
    states = params * (weights + grads + state)
    reserve = 0.10 * (states + activations) + GIB
    return Memory(
        params=params,
        precision=precision,
        optimizer=optimizer,
        layers=layers,
        hidden=hidden,
        heads=heads,
        seq_len=seq_len,
        micro_batch=micro_batch,
        checkpointing=checkpointing,
        shape_assumed=assumed,
        weights_gib=params * weights / GIB,
        gradients_gib=params * grads / GIB,
        optimizer_gib=params * state / GIB,
        activations_gib=activations / GIB,
        reserve_gib=reserve / GIB,
    )


@dataclass(frozen=True)
class Fit:
    cloud: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: int
    usd_per_hour: float | None
    price_date: str
    mode: str
    """"DDP" (every GPU holds everything) or "FSDP" (states sharded over the node's GPUs)."""
    per_gpu_gib: float


def fits(memory: Memory, clouds: list[str]) -> list[Fit]:
    """Instance types whose GPUs hold the job, cheapest first (unknown prices last)."""
    from components import catalog

    found = []
    for cloud in clouds:
        for entry in catalog.instance_types(cloud):
            capacity_gib = entry.gpu_memory_gb * 1e9 / GIB  # catalogs list GB
            ddp = memory.total_gib
            fsdp = (
                memory.states_gib / entry.gpu_count
                + memory.activations_gib
                + 0.10 * (memory.states_gib / entry.gpu_count + memory.activations_gib)
                + 1
            )
            if ddp <= capacity_gib:
                mode, need = "DDP", ddp
            elif entry.gpu_count > 1 and fsdp <= capacity_gib:
                mode, need = "FSDP", fsdp
            else:
                continue
            found.append(
                Fit(
                    cloud=cloud,
                    instance_type=entry.instance_type,
                    gpu_model=entry.gpu_model,
                    gpu_count=entry.gpu_count,
                    gpu_memory_gb=entry.gpu_memory_gb,
                    usd_per_hour=entry.price.usd_per_hour,
                    price_date=entry.price.date,
                    mode=mode,
                    per_gpu_gib=round(need, 2),
                )
            )
    return sorted(
        found,
        key=lambda f: (f.usd_per_hour is None, f.usd_per_hour or 0.0, f.cloud, f.instance_type),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .cli_errors import positive_int, positive_number

    # Bounds keep every figure finite; they are far beyond any model trained today.
    parser.add_argument(
        "--params", type=positive_number(1e15), required=True, help="parameter count, e.g. 3e8"
    )
    parser.add_argument("--precision", choices=("bf16", "fp16", "fp32"), default="bf16")
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    parser.add_argument(
        "--batch", type=positive_int(10**6), default=1, help="micro-batch per GPU (sequences)"
    )
    parser.add_argument(
        "--seq-len", type=positive_int(10**8), default=2048, help="tokens per sequence"
    )
    parser.add_argument(
        "--layers", type=positive_int(10**5), help="transformer layers (default: assumed)"
    )
    parser.add_argument("--hidden", type=positive_int(10**7), help="hidden size (default: assumed)")
    parser.add_argument(
        "--heads", type=positive_int(10**6), help="attention heads (default: hidden/64)"
    )
    parser.add_argument(
        "--checkpointing", action="store_true", help="full activation checkpointing"
    )
    parser.add_argument(
        "--cloud", choices=("aws", "alicloud", "tencentcloud"), action="append",
        help="cloud(s) to list types from (default: all)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--cwd", "-C", default=".", help="project directory (for the catalog)")


def run(args: argparse.Namespace) -> int:
    """Arguments arrive checked (`add_arguments`: positive and bounded)."""
    memory = estimate_memory(
        args.params,
        args.precision,
        optimizer=args.optimizer,
        micro_batch=args.batch,
        seq_len=args.seq_len,
        layers=args.layers,
        hidden=args.hidden,
        heads=args.heads,
        checkpointing=args.checkpointing,
    )
    found = fits(memory, args.cloud or ["aws", "alicloud", "tencentcloud"])
    if args.json:
        doc: dict[str, Any] = {
            "memory": {**asdict(memory), "totalGib": memory.total_gib},
            "formula": (__doc__ or "").strip(),
            "fits": [asdict(f) for f in found],
        }
        print(json.dumps(doc, indent=2))
        return 0
    print(render(memory, found))
    return 0


def render(m: Memory, found: list[Fit]) -> str:
    shape = f"{m.layers} layers, hidden {m.hidden}, {m.heads} heads" + (
        " (assumed from the parameter count; set --layers/--hidden)" if m.shape_assumed else ""
    )
    lines = [
        f"Training memory for {m.params:.3g} parameters, {m.precision}, {m.optimizer}, "
        f"micro-batch {m.micro_batch} x {m.seq_len} tokens ({shape}):",
        f"  weights      {m.weights_gib:8.2f} GiB",
        f"  gradients    {m.gradients_gib:8.2f} GiB",
        f"  optimizer    {m.optimizer_gib:8.2f} GiB",
        f"  activations  {m.activations_gib:8.2f} GiB"
        + ("  (activation checkpointing)" if m.checkpointing else ""),
        f"  reserve      {m.reserve_gib:8.2f} GiB  (10% + 1 GiB: CUDA context, fragmentation)",
        f"  total        {m.total_gib:8.2f} GiB per GPU with DDP",
        "Formula: ZeRO (2020) bytes per parameter for model states; Korthikanti et al. (2022) "
        "for activations; see `gpuinfra sizing --json` for the full text.",
        "",
    ]
    if not found:
        lines.append(
            "No instance type in the catalog fits; try --checkpointing or a smaller batch."
        )
        return "\n".join(lines)
    lines.append("Instance types that fit, cheapest first (on-demand list price, estimate):")
    for f in found:
        price = "unknown" if f.usd_per_hour is None else f"${f.usd_per_hour:.3f}/h"
        lines.append(
            f"  {f.cloud:13} {f.instance_type:24} {f.gpu_count} x {f.gpu_model:10} "
            f"{f.mode:4} {f.per_gpu_gib:7.2f} GiB/GPU  {price} ({f.price_date})"
        )
    return "\n".join(lines)
