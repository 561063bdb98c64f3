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
- FSDP (the trainer's `--sharding fsdp`, ZeRO stage 3, within one node) shards weights,
  gradients and optimizer state over the node's N GPUs: each holds states/N plus its own
  activations (not sharded), and the reserve on that (10% + 1 GiB); what it saves per GPU is
  the DDP total minus that.
- bf16 needs compute capability 8.0 or newer (Ampere on); older GPUs are left out for bf16.
When `--layers`/`--hidden` are not given, the shape is taken from the published model whose
size is closest (`REFERENCE_SHAPES`: GPT-3, Llama 2), as is within a factor 1.5, else scaled
from it keeping its hidden/layers ratio and head size (params ~ 12*L*h^2). The output names
the model it used; give --layers/--hidden for an exact figure.
Prices: on-demand per instance-hour, from a refreshed price file (`gpuinfra prices`,
`prices/<cloud>-<region>.json`, one row per region it prices) where there is one, else the
catalog's list price; each in its own currency. Types are listed cheapest first within each
currency, or, given `--rate` (e.g. USD/CNY=7.1@2026-11-30), all in one currency, converted at
that rate, which is shown with its date.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.catalog import GpuInstanceType
    from components.settings.model import GpuPoolSettings

    from .currency import ExchangeRate

GIB = 1024**3
_STATE_BYTES = {
    # (weights, gradients, optimizer state) bytes per parameter
    ("adam", "fp32"): (4, 4, 8),
    ("adam", "mixed"): (2, 2, 12),
    ("sgd", "fp32"): (4, 4, 4),
    ("sgd", "mixed"): (2, 2, 8),
}


@dataclass(frozen=True)
class Shape:
    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    head_dim: int
    source: str


REFERENCE_SHAPES: tuple[Shape, ...] = (
    # Brown et al., "Language Models are Few-Shot Learners", 2020, Table 2.1.
    # (layers, d_model, heads, d_head as the table lists them)
    Shape("GPT-3 Small", 125e6, 12, 768, 12, 64, "Brown et al. 2020, Table 2.1"),
    Shape("GPT-3 Medium", 350e6, 24, 1024, 16, 64, "Brown et al. 2020, Table 2.1"),
    Shape("GPT-3 Large", 760e6, 24, 1536, 16, 96, "Brown et al. 2020, Table 2.1"),
    Shape("GPT-3 XL", 1.3e9, 24, 2048, 24, 128, "Brown et al. 2020, Table 2.1"),
    Shape("GPT-3 2.7B", 2.7e9, 32, 2560, 32, 80, "Brown et al. 2020, Table 2.1"),
    # Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models", 2023 (model
    # card: 7B 32 layers x 4096 with 32 heads, 13B 40 x 5120 / 40, 70B 80 x 8192 / 64).
    Shape("Llama 2 7B", 7e9, 32, 4096, 32, 128, "Touvron et al. 2023"),
    Shape("Llama 2 13B", 13e9, 40, 5120, 40, 128, "Touvron et al. 2023"),
    Shape("Llama 2 70B", 70e9, 80, 8192, 64, 128, "Touvron et al. 2023"),
    Shape("GPT-3 175B", 175e9, 96, 12288, 96, 128, "Brown et al. 2020, Table 2.1"),
)
"""Published shapes (layers x hidden, heads) to assume when only a parameter count is given."""


def infer_shape(params: float) -> tuple[int, int, int, str]:
    """(layers, hidden, heads, what was assumed) for a model of `params` parameters."""
    nearest = min(REFERENCE_SHAPES, key=lambda s: abs(math.log(params / s.params)))
    if max(params, nearest.params) / min(params, nearest.params) <= 1.5:
        return (
            nearest.layers,
            nearest.hidden,
            nearest.heads,
            f"the shape of {nearest.name} ({nearest.source})",
        )
    ratio = nearest.hidden / nearest.layers
    head_dim = nearest.head_dim
    layers = max(1, round((params / (12 * ratio**2)) ** (1 / 3)))
    hidden = max(head_dim, round(ratio * layers / head_dim) * head_dim)
    return (
        layers,
        hidden,
        hidden // head_dim,
        f"{nearest.name}'s hidden/layers ratio and head size, scaled ({nearest.source})",
    )


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
    shape_source: str = ""
    """What the shape was assumed from, when it was."""

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
    source = ""
    if layers is None and hidden is None:
        layers, hidden, inferred_heads, source = infer_shape(params)
        heads = heads or inferred_heads
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
        shape_source=source,
    )


def fsdp_per_gpu_gib(memory: Memory, gpus: int) -> float:
    """GiB per GPU when FSDP shards the model states over ``gpus`` GPUs."""
    sharded = memory.states_gib / gpus + memory.activations_gib
    return sharded + 0.10 * sharded + 1


#: GPU counts the summary shows FSDP for (one node of the catalog's types has 1 to 8)
FSDP_GPU_COUNTS = (2, 4, 8)


@dataclass(frozen=True)
class Fit:
    cloud: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: int
    per_hour: float | None
    """On-demand price of one instance-hour, in `currency`."""
    price_date: str
    mode: str
    """"DDP" (every GPU holds everything) or "FSDP" (states sharded over the node's GPUs)."""
    per_gpu_gib: float
    fsdp_saves_gib: float
    """What FSDP over this type's GPUs saves per GPU against DDP (0 for one GPU)."""
    currency: str = "USD"
    region: str = ""
    """Where `per_hour` applies."""
    price_source: str = ""
    compare_per_hour: float | None = None
    """`per_hour` in the comparison currency (converted at the `--rate`), when one is given."""


COMPUTE_CAPABILITY = {
    # NVIDIA, "CUDA GPUs - Compute Capability", https://developer.nvidia.com/cuda-gpus
    # (2026-11-30); keyed by the catalog's model name before any "-<memory>" suffix.
    "V100": 7.0,
    "T4": 7.5,
    "A100": 8.0,
    "A10": 8.6,
    "A10G": 8.6,
    "L4": 8.9,
    "L20": 8.9,
    "H100": 9.0,
}
BF16_MIN_CAPABILITY = 8.0
"""Native bf16 from Ampere on: PyTorch's `torch.cuda.is_bf16_supported()` checks
compute capability major >= 8."""


def native_precision(precision: str, gpu_model: str) -> bool:
    """False when the GPU has no native support for `precision` (bf16 before Ampere)."""
    if precision != "bf16":
        return True
    capability = COMPUTE_CAPABILITY.get(gpu_model.split("-")[0])
    return capability is not None and capability >= BF16_MIN_CAPABILITY


def unsupported_models(precision: str, clouds: list[str]) -> list[str]:
    """GPU models of the catalog left out for `precision`."""
    from components import catalog

    models = {e.gpu_model for c in clouds for e in catalog.instance_types(c)}
    return sorted(m for m in models if not native_precision(precision, m))


def fit_of(memory: Memory, entry: GpuInstanceType) -> Fit | None:
    """How `entry`'s GPUs hold the job (DDP, else FSDP over the node's GPUs), or None."""
    if not native_precision(memory.precision, entry.gpu_model):
        return None
    capacity_gib = entry.gpu_memory_gb * 1e9 / GIB  # catalogs list GB
    ddp = memory.total_gib
    fsdp = fsdp_per_gpu_gib(memory, entry.gpu_count)
    if ddp <= capacity_gib:
        mode, need = "DDP", ddp
    elif entry.gpu_count > 1 and fsdp <= capacity_gib:
        mode, need = "FSDP", fsdp
    else:
        return None
    return Fit(
        cloud=entry.cloud,
        instance_type=entry.instance_type,
        gpu_model=entry.gpu_model,
        gpu_count=entry.gpu_count,
        gpu_memory_gb=entry.gpu_memory_gb,
        per_hour=entry.price.per_hour,
        price_date=entry.price.date,
        mode=mode,
        per_gpu_gib=round(need, 2),
        fsdp_saves_gib=round(ddp - fsdp, 2) if entry.gpu_count > 1 else 0.0,
        currency=entry.price.currency,
        region=entry.price.region,
        price_source=entry.price.source,
    )


def _priced(fit: Fit, cloud: str) -> list[Fit]:
    """The fit once per region a refreshed price file prices it in, else as the catalog
    prices it."""
    from .prices import file as price_file

    refreshed = [
        replace(
            fit,
            per_hour=f.on_demand[fit.instance_type],
            currency=f.currency,
            region=f.region,
            price_date=f.date,
            price_source=f"{f.source} (refreshed {f.refreshed})",
        )
        for f in price_file.load_all(cloud)
        if fit.instance_type in f.on_demand
    ]
    return refreshed or [fit]


def compare_in(found: list[Fit], currency: str, rate: ExchangeRate | None) -> list[Fit]:
    """Cheapest first: within each currency, or all in `currency` when `rate` converts them
    (a price the rate does not convert goes last, as unknown)."""
    if rate is None:
        return sorted(
            found,
            key=lambda f: (
                f.per_hour is None,
                f.currency,
                f.per_hour or 0.0,
                f.cloud,
                f.instance_type,
            ),
        )
    converted = [
        replace(
            f,
            compare_per_hour=None
            if f.per_hour is None
            else rate.convert(f.per_hour, f.currency, currency),
        )
        for f in found
    ]
    return sorted(
        converted,
        key=lambda f: (
            f.compare_per_hour is None,
            f.compare_per_hour or 0.0,
            f.cloud,
            f.instance_type,
        ),
    )


def fits(
    memory: Memory,
    clouds: list[str],
    currency: str = "USD",
    rate: ExchangeRate | None = None,
) -> list[Fit]:
    """Instance types whose GPUs hold the job in its precision, cheapest first (unknown
    prices last; see `compare_in`)."""
    from components import catalog

    found = [
        priced
        for cloud in clouds
        for entry in catalog.instance_types(cloud)
        if (fit := fit_of(memory, entry)) is not None
        for priced in _priced(fit, cloud)
    ]
    return compare_in(found, currency, rate)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .cli_errors import positive_int, positive_number, stack_name

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
        "--cloud", choices=("aws", "alicloud", "tencentcloud", "volcengine"), action="append",
        help="cloud(s) to list types from (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--stack", "-s", type=stack_name,
        help="also say which of this stack's GPU pools hold the job (the Job's `pool:`)",
    )  # fmt: skip
    parser.add_argument(
        "--rate", type=_rate, metavar="BASE/QUOTE=RATE@DATE",
        help="compare all clouds in one currency, converted at this rate, e.g. "
        "USD/CNY=7.1@2026-11-30 (1 USD = 7.1 CNY on that day); default: no conversion, "
        "cheapest first within each currency",
    )  # fmt: skip
    parser.add_argument(
        "--currency", choices=("USD", "CNY"), default="USD",
        help="the currency to compare in, with --rate (default USD)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--cwd", "-C", default=".", help="project directory (for the catalog)")


def _rate(text: str) -> ExchangeRate:
    from .currency import parse_rate

    try:
        return parse_rate(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


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
    clouds = args.cloud or ["aws", "alicloud", "tencentcloud", "volcengine"]
    rate = getattr(args, "rate", None)
    currency = getattr(args, "currency", "USD")
    found = fits(memory, clouds, currency, rate)
    left_out = unsupported_models(memory.precision, clouds)
    pools = pool_fits(memory, stack_pools(Path(args.cwd), args.stack)) if args.stack else None
    if args.json:
        doc: dict[str, Any] = {
            "memory": {**asdict(memory), "totalGib": memory.total_gib},
            "fsdpPerGpuGib": {str(n): fsdp_per_gpu_gib(memory, n) for n in FSDP_GPU_COUNTS},
            "fsdpNeeded": fsdp_needed(found),
            "formula": (__doc__ or "").strip(),
            "fits": [asdict(f) for f in found],
            "comparedIn": currency if rate else None,
            "rate": None if rate is None else asdict(rate),
            "leftOutForPrecision": left_out,
            "recommendation": recommendation(found),
        }
        if pools is not None:
            doc["stack"] = args.stack
            doc["pools"] = [asdict(p) for p in pools]
            doc["poolRecommendation"] = pool_recommendation(pools)
        print(json.dumps(doc, indent=2))
        return 0
    print(render(memory, found, left_out, currency if rate else None, rate))
    if pools is not None:
        print()
        print(render_pools(args.stack, pools))
    return 0


def fsdp_needed(found: list[Fit]) -> bool:
    """True when some type fits, and only with FSDP (no GPU of the list holds the DDP total)."""
    return bool(found) and all(f.mode == "FSDP" for f in found)


def render_fsdp(m: Memory) -> str:
    """What FSDP would put on (and save on) each GPU, for the GPU counts one node has."""
    per = ", ".join(
        f"{n} GPUs {gib:.2f} GiB (saves {m.total_gib - gib:.2f})"
        for n, gib in ((n, fsdp_per_gpu_gib(m, n)) for n in FSDP_GPU_COUNTS)
    )
    return (
        f"With FSDP (trainer: --sharding fsdp) the model states ({m.states_gib:.2f} GiB) are "
        "sharded over the GPUs; activations are not. Per GPU: " + per + "."
    )


# --- the GPU pools of a stack (issue 20) -----------------------------------------------------


@dataclass(frozen=True)
class PoolFit:
    """Whether one GPU pool of a stack holds the job, and how."""

    pool: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    capacity_type: str
    mode: str | None
    """"DDP", "FSDP", or None: the pool's GPUs cannot hold it."""
    per_gpu_gib: float | None


def stack_pools(root: Path, stack: str) -> tuple[GpuPoolSettings, ...]:
    """The GPU pools of `stack` (of its cluster stack, for a GPU-layer stack)."""
    from .cli_errors import UserError
    from .preview import cluster_stack_name
    from .project import load_project, load_stack_config
    from .reachability import stack_settings

    settings = stack_settings(root, stack)
    existing = settings.existing_cluster
    if existing is not None and existing.cluster_stack is not None:
        project = load_project(root)
        name = cluster_stack_name(project, load_stack_config(project, stack).values) or ""
        parts = name.split("/")
        if len(parts) != 3 or parts[1] != project.name:
            raise UserError(
                "--stack",
                stack,
                f"its clusterStack {name!r} is not a stack of this project",
                "a stack with GPU pools, or a GPU-layer stack of one in this project",
            )
        settings = stack_settings(root, parts[2])
    if not settings.gpu_pools:
        raise UserError(
            "--stack",
            stack,
            "is an existing cluster (cloud kubernetes): gpuinfra knows no GPU pools of it",
            "a stack with GPU pools (gpuPools or gpuPool* keys)",
        )
    return settings.gpu_pools


def pool_fits(memory: Memory, pools: tuple[GpuPoolSettings, ...]) -> list[PoolFit]:
    """Each pool in `gpuPools` order, with how (or whether) its GPUs hold the job."""
    found = []
    for pool in pools:
        fit = fit_of(memory, pool.instance)
        found.append(
            PoolFit(
                pool=pool.name,
                instance_type=pool.instance.instance_type,
                gpu_model=pool.gpu_model,
                gpu_count=pool.gpus_per_node,
                capacity_type=pool.capacity_type,
                mode=fit.mode if fit else None,
                per_gpu_gib=fit.per_gpu_gib if fit else None,
            )
        )
    return found


def pool_recommendation(pools: list[PoolFit]) -> str:
    """Which pool a training Job should name: the first that holds it, DDP before FSDP."""
    holding = [p for p in pools if p.mode == "DDP"] or [p for p in pools if p.mode == "FSDP"]
    if not holding:
        return (
            "No GPU pool of this stack holds it: add a pool of a type listed above to "
            "gpuinfra:gpuPools, or shrink the job (--checkpointing, --batch, --seq-len)."
        )
    best = holding[0]
    return (
        f"Name `pool: {best.pool}` in the training Job ({best.mode}, gpusPerNode up to "
        f"{best.gpu_count}); a Job that names no pool runs on the first pool with its GPUs, "
        "whatever their memory."
    )


def render_pools(stack: str, pools: list[PoolFit]) -> str:
    lines = [f"GPU pools of stack {stack} (gpuPools order):"]
    for p in pools:
        held = f"{p.mode:4} {p.per_gpu_gib:7.2f} GiB/GPU" if p.mode else "does not hold it"
        lines.append(
            f"  {p.pool:16} {p.instance_type:24} {p.gpu_count} x {p.gpu_model:10} "
            f"{p.capacity_type:8} {held}"
        )
    lines.append(pool_recommendation(pools))
    return "\n".join(lines)


def recommendation(found: list[Fit]) -> str:
    """What to run: DDP where it fits, FSDP when only sharding fits, else how to shrink."""
    if fsdp_needed(found):
        return (
            "DDP does not fit on any GPU here: use FSDP (shard weights, gradients and "
            "optimizer state over the node's GPUs), on the types marked FSDP; the reference "
            "trainer runs it with --sharding fsdp."
        )
    if found:
        return "DDP fits: every GPU holds the whole model."
    return (
        "Neither DDP nor FSDP within one node fits: try --checkpointing, a smaller --batch "
        "or --seq-len, or shard across nodes."
    )


def render(
    m: Memory,
    found: list[Fit],
    left_out: list[str] | None = None,
    compared_in: str | None = None,
    rate: ExchangeRate | None = None,
) -> str:
    assumed = f"assumed: {m.shape_source}" if m.shape_source else "assumed from the parameter count"
    shape = f"{m.layers} layers, hidden {m.hidden}, {m.heads} heads" + (
        f" ({assumed}; set --layers/--hidden)" if m.shape_assumed else ""
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
        render_fsdp(m),
        "Formula: ZeRO (2020) bytes per parameter for model states; Korthikanti et al. (2022) "
        "for activations; see `gpuinfra sizing --json` for the full text.",
        "",
    ]
    if left_out:
        lines.append(
            f"Left out for {m.precision}: {', '.join(left_out)} (no native bf16: compute "
            "capability below 8.0; use --precision fp16 on them)."
        )
    lines.append(f"Recommendation: {recommendation(found)}")
    if not found:
        lines.append("No instance type in the catalog fits.")
        return "\n".join(lines)
    from .currency import money

    if compared_in and rate is not None:
        lines.append(
            f"Instance types that fit, cheapest first in {compared_in} (on-demand, estimate; "
            f"converted at {rate}):"
        )
    else:
        lines.append(
            "Instance types that fit, cheapest first within each currency (on-demand, "
            "estimate; never converted: --rate USD/CNY=<rate>@<date> compares across):"
        )
    for f in found:
        price = "unknown" if f.per_hour is None else f"{money(f.per_hour, f.currency)}/h"
        if compared_in and f.per_hour is not None and f.currency != compared_in:
            converted = money(f.compare_per_hour, compared_in)
            price += f" = {converted}/h" if f.compare_per_hour is not None else " (no rate)"
        saves = f"  (FSDP saves {f.fsdp_saves_gib:.2f} GiB/GPU)" if f.mode == "FSDP" else ""
        lines.append(
            f"  {f.cloud:13} {f.instance_type:24} {f.gpu_count} x {f.gpu_model:10} "
            f"{f.mode:4} {f.per_gpu_gib:7.2f} GiB/GPU  {price} ({f.region}, {f.price_date}){saves}"
        )
    return "\n".join(lines)
