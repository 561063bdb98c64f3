"""Command-line arguments and their validation."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from trainer.errors import UserError

PRECISIONS = ("auto", "fp32", "tf32", "fp16", "bf16")
#: kept here (not imported from trainer.models) so argument errors are reported before torch loads
MODELS = ("gpt", "resnet18", "resnet50", "simplecnn")
#: models whose layers keep per-process statistics (BatchNorm): DDP only
BATCHNORM_MODELS = ("resnet18", "resnet50")
SHARDINGS = ("ddp", "fsdp")
CHECKPOINT_FORMATS = ("auto", "file", "dcp")
EXPORT_DTYPES = ("fp32", "bf16", "fp16")


@dataclass
class Config:
    """Validated trainer settings (see ``--help`` for each field)."""

    model: str = "simplecnn"
    data_dir: str | None = None
    image_size: int | None = None
    num_classes: int | None = None
    synthetic_samples: int = 1024
    batch_size: int = 64
    global_batch_size: int | None = None
    vocab_size: int = 32000
    seq_len: int = 512
    gpt_layers: int = 12
    gpt_dim: int = 768
    gpt_heads: int = 12
    gpt_dropout: float = 0.0
    sharding: str = "ddp"
    epochs: int | None = None
    max_steps: int | None = None
    optimizer: str = "adamw"
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 0
    precision: str = "auto"
    channels_last: bool | None = None
    device: str = "auto"
    seed: int = 0
    deterministic: bool = False
    workers: int = 2
    checkpoint_uri: str = "./trainer-run"
    checkpoint_every_steps: int = 0
    checkpoint_every_seconds: float = 0.0
    keep_last: int = 3
    async_checkpoint: bool = False
    checkpoint_format: str = "auto"
    export_dtype: str = "fp32"
    storage_endpoint_url: str | None = None
    storage_region: str | None = None
    sts_endpoint_url: str | None = None
    s3_addressing_style: str = "auto"
    staging_dir: str | None = None
    log_every_steps: int = 10
    tensorboard: bool = True
    resume: bool = True


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`UserError` instead of printing usage and exiting 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(message)


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m trainer`` argument parser."""
    p = _Parser(
        prog="python -m trainer",
        description="Restartable reference trainer: resumes from the newest complete checkpoint.",
    )
    g = p.add_argument_group("model and data")
    g.add_argument("--model", choices=MODELS, default="simplecnn")
    g.add_argument(
        "--data-dir",
        default=os.environ.get("DATASET_DIR") or None,
        help="image folder: one sub-folder of images per class (needs Pillow); or tar shards "
        "with a shardindex.json, in a folder or at s3://, oss://, cosn://bucket/prefix "
        "(trainer/shards.py). Default: env DATASET_DIR, else deterministic synthetic data.",
    )
    g.add_argument(
        "--image-size", type=_positive_int, help="side in pixels (28 simplecnn, 224 resnet)"
    )
    g.add_argument("--num-classes", type=_positive_int, help="10 simplecnn, 1000 resnet")
    g.add_argument(
        "--synthetic-samples",
        type=_positive_int,
        default=1024,
        help="size of the synthetic data set (all ranks together)",
    )
    g.add_argument(
        "--batch-size", type=_positive_int, default=64, help="per process and micro-batch"
    )
    g.add_argument(
        "--global-batch-size",
        type=_positive_int,
        help="samples per optimizer step over all processes; a multiple of --batch-size x "
        "processes, the rest made up by gradient accumulation. Keeps the optimisation the same "
        "when a Job restarts on fewer or more GPUs (default: --batch-size x processes)",
    )
    g.add_argument("--workers", type=_non_negative_int, default=2, help="image loader workers")

    g = p.add_argument_group("gpt model (--model gpt: a decoder on synthetic tokens)")
    g.add_argument("--vocab-size", type=_positive_int, default=32000)
    g.add_argument("--seq-len", type=_positive_int, default=512, help="tokens per sample")
    g.add_argument("--gpt-layers", type=_positive_int, default=12)
    g.add_argument("--gpt-dim", type=_positive_int, default=768, help="model width")
    g.add_argument("--gpt-heads", type=_positive_int, default=12)
    g.add_argument("--gpt-dropout", type=_probability, default=0.0)

    g = p.add_argument_group("optimisation")
    g.add_argument("--epochs", type=_positive_int, help="default 1 when --max-steps is not set")
    g.add_argument("--max-steps", type=_positive_int, help="total optimizer steps")
    g.add_argument("--optimizer", choices=("adamw", "sgd"), default="adamw")
    g.add_argument("--lr", type=_positive_float, default=1e-3)
    g.add_argument("--weight-decay", type=_non_negative_float, default=0.01)
    g.add_argument("--warmup-steps", type=_non_negative_int, default=0)

    g = p.add_argument_group("performance")
    g.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="auto: bf16 on a GPU of compute capability >= 8.0, fp16 on older GPUs, fp32 on CPU",
    )
    g.add_argument(
        "--channels-last",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="NHWC memory format (default: on for CUDA, off for CPU)",
    )
    g.add_argument(
        "--sharding",
        choices=SHARDINGS,
        default="ddp",
        help="ddp: every process holds the whole model; fsdp: parameters, gradients and "
        "optimizer state sharded over the processes (FSDP2, fully_shard)",
    )
    g.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument(
        "--deterministic",
        action="store_true",
        help="deterministic algorithms only (slower; bit-exact reruns on the same hardware)",
    )

    g = p.add_argument_group("checkpoints")
    g.add_argument(
        "--checkpoint-uri",
        default=os.environ.get("CHECKPOINT_URI")
        or os.environ.get("TRAINER_CHECKPOINT_URI", "./trainer-run"),
        help="local path, s3://, oss:// or cosn://bucket/prefix "
        "(env CHECKPOINT_URI, then TRAINER_CHECKPOINT_URI)",
    )
    g.add_argument("--checkpoint-every-steps", type=_non_negative_int, default=0)
    g.add_argument("--checkpoint-every-seconds", type=_non_negative_float, default=0.0)
    g.add_argument("--keep-last", type=_positive_int, default=3)
    g.add_argument(
        "--async-checkpoint",
        action="store_true",
        help="copy state to reused (pinned) CPU buffers and write in a background thread",
    )
    g.add_argument(
        "--checkpoint-format",
        choices=CHECKPOINT_FORMATS,
        default="auto",
        help="file: rank 0 writes one torch.save file; dcp: every process writes its shards "
        "(torch.distributed.checkpoint), resumable on another number of processes. "
        "auto: dcp with --sharding fsdp, else file",
    )
    g.add_argument(
        "--export-dtype",
        choices=EXPORT_DTYPES,
        default="fp32",
        help="dtype of the final weights in <checkpoint-uri>/final/",
    )
    g.add_argument(
        "--storage-endpoint-url",
        "--s3-endpoint-url",
        dest="storage_endpoint_url",
        default=None,
        help="the bucket's S3-compatible endpoint (needed for oss:// and cosn://); "
        "default: env STORAGE_ENDPOINT_URL, then AWS_ENDPOINT_URL",
    )
    g.add_argument(
        "--storage-region",
        default=os.environ.get("STORAGE_REGION") or None,
        help="the bucket's region (env STORAGE_REGION)",
    )
    g.add_argument(
        "--sts-endpoint-url",
        default=os.environ.get("STORAGE_STS_ENDPOINT_URL") or None,
        help="STS endpoint of the oss:// and cosn:// identity exchange (env "
        "STORAGE_STS_ENDPOINT_URL; default: the cloud library's own). s3:// uses botocore's "
        "settings (AWS_ENDPOINT_URL_STS)",
    )
    g.add_argument(
        "--s3-addressing-style",
        choices=("auto", "virtual", "path"),
        default="auto",
        help="virtual for Alibaba OSS and Tencent COS, path for most MinIO setups",
    )
    g.add_argument(
        "--staging-dir", help="local scratch for object-storage uploads (default: system temp)"
    )
    g.add_argument(
        "--no-resume", dest="resume", action="store_false", help="ignore existing checkpoints"
    )

    g = p.add_argument_group("logging")
    g.add_argument("--log-every-steps", type=_positive_int, default=10)
    g.add_argument(
        "--no-tensorboard", dest="tensorboard", action="store_false", help="no event files"
    )
    return p


def parse_args(argv: list[str] | None = None) -> Config:
    """Parse and validate; raises :class:`UserError` with a one-line message on bad input."""
    ns = build_parser().parse_args(argv)
    cfg = Config(**{k: v for k, v in vars(ns).items() if k in Config.__dataclass_fields__})
    if cfg.epochs is None and cfg.max_steps is None:
        cfg.epochs = 1
    if not cfg.checkpoint_uri:
        raise UserError("--checkpoint-uri must not be empty")
    if cfg.data_dir is not None and "://" not in cfg.data_dir and not os.path.isdir(cfg.data_dir):
        raise UserError(f"--data-dir {cfg.data_dir!r} is not a directory")
    if cfg.checkpoint_format == "auto":
        cfg.checkpoint_format = "dcp" if cfg.sharding == "fsdp" else "file"
    if cfg.sharding == "fsdp" and cfg.checkpoint_format != "dcp":
        raise UserError(
            "--sharding fsdp needs --checkpoint-format dcp: the file format gathers the whole "
            "state on rank 0, which is what FSDP avoids"
        )
    if cfg.sharding == "fsdp" and cfg.model in BATCHNORM_MODELS:
        raise UserError(
            f"--model {cfg.model} has BatchNorm statistics that FSDP would keep per process; "
            "use --sharding ddp (or --model gpt / simplecnn with fsdp)"
        )
    if cfg.model == "gpt" and cfg.data_dir is not None:
        raise UserError(
            f"--data-dir (or env DATASET_DIR) {cfg.data_dir!r} is for the image models: image "
            "folders and tar shards hold images with class labels; --model gpt trains on "
            "synthetic tokens only (drop --data-dir and DATASET_DIR, or pick an image model)"
        )
    if cfg.model == "gpt" and cfg.gpt_dim % cfg.gpt_heads:
        raise UserError(f"--gpt-dim {cfg.gpt_dim} is not a multiple of --gpt-heads {cfg.gpt_heads}")
    if cfg.storage_endpoint_url is None:
        cfg.storage_endpoint_url = (
            os.environ.get("STORAGE_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL") or None
        )
    return cfg
