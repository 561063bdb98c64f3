"""Helpers shared by the trainer tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import torch

from trainer.config import parse_args
from trainer.train import StepHook, run

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def tiny_args(uri: str, *extra: str, steps: int = 8) -> list[str]:
    """A fast deterministic CPU run: 32 samples of 1x12x12, batch 8 -> 4 steps per epoch."""
    return [
        "--model=simplecnn",
        "--image-size=12",
        "--synthetic-samples=32",
        "--batch-size=8",
        "--workers=0",
        "--device=cpu",
        "--deterministic",
        "--log-every-steps=2",
        f"--max-steps={steps}",
        f"--checkpoint-uri={uri}",
        *extra,
    ]


def run_inprocess(args: list[str], hook: StepHook | None = None) -> int:
    return run(parse_args(args), hook)


def stop_at(step: int) -> StepHook:
    """A hook that asks the trainer to stop (like SIGTERM) once ``step`` is done."""

    def hook(trainer: Any, current: int) -> None:
        if current == step:
            trainer.request_stop()

    return hook


def checkpoint_steps(root: str) -> list[int]:
    folder = os.path.join(root, "checkpoints")
    if not os.path.isdir(folder):
        return []
    return sorted(int(n.split("_")[1]) for n in os.listdir(folder) if n.startswith("step_"))


def load_state(root: str, step: int) -> dict[str, Any]:
    path = os.path.join(root, "checkpoints", f"step_{step:09d}", "state.pt")
    return torch.load(path, map_location="cpu", weights_only=True)


def load_final(root: str) -> dict[str, torch.Tensor]:
    return torch.load(os.path.join(root, "final", "model.pt"), weights_only=True)


def assert_same(a: Any, b: Any, path: str = "") -> None:
    """Deep equality of nested checkpoint content; tensors must be bit-identical."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor), f"{path}: type"
        assert a.dtype == b.dtype and a.shape == b.shape, (
            f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        )
        assert torch.equal(a, b), (
            f"{path}: tensors differ (max |d| {(a.double() - b.double()).abs().max()})"
        )
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (
            f"{path}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"
        )
        for k in a:
            assert_same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: length"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}/{i}")
    else:
        assert a == b or (a != a and b != b), f"{path}: {a!r} != {b!r}"


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def trainer_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "trainer", *args]


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        trainer_cmd(*args),
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def make_image_folder(root: str, classes: int = 4, per_class: int = 8, size: int = 12) -> str:
    """``root/<class>/<i>.png``: random grayscale images drawn from a fixed seed."""
    from PIL import Image

    g = torch.Generator().manual_seed(1234)
    for c in range(classes):
        folder = os.path.join(root, f"class{c}")
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            pixels = torch.randint(0, 256, (size, size), generator=g, dtype=torch.uint8)
            Image.fromarray(pixels.numpy(), mode="L").save(os.path.join(folder, f"{i}.png"))
    return root


def folder_args(uri: str, data: str, *extra: str, steps: int = 8, workers: int = 2) -> list[str]:
    """:func:`tiny_args` on an image folder (32 images: 4 steps per epoch) with loader workers."""
    args = [a for a in tiny_args(uri, *extra, steps=steps) if not a.startswith("--workers")]
    return [a for a in args if not a.startswith("--synthetic")] + [
        f"--data-dir={data}",
        f"--workers={workers}",
    ]


def gpt_args(uri: str, *extra: str, steps: int = 12, batch: int = 4) -> list[str]:
    """A tiny GPT under FSDP: 2 layers of width 32, a vocabulary of 64, 16 tokens a sequence,
    64 sequences; a global batch of 8 (8 steps per epoch) whatever the number of processes,
    made up by accumulation rounds of ``batch``. Every step logged."""
    return [
        "--model=gpt",
        "--vocab-size=64",
        "--seq-len=16",
        "--gpt-layers=2",
        "--gpt-dim=32",
        "--gpt-heads=2",
        "--synthetic-samples=64",
        f"--batch-size={batch}",
        "--global-batch-size=8",
        "--sharding=fsdp",
        "--workers=0",
        "--device=cpu",
        "--deterministic",
        "--log-every-steps=1",
        f"--max-steps={steps}",
        f"--checkpoint-uri={uri}",
        *extra,
    ]


def launch_cmd(*args: str, nproc: int = 2) -> list[str]:
    """``trainer.launch`` (torchrun keeping exit codes) of ``nproc`` CPU processes (gloo)."""
    launcher = [sys.executable, "-m", "trainer.launch", "--standalone", f"--nproc-per-node={nproc}"]
    return [*launcher, "-m", "trainer", *args]


def load_sharded(root: str, step: int, scratch: str) -> dict[str, Any]:
    """A sharded checkpoint as one dict, read without a process group: DCP's shards merged
    (``dcp_to_torch_save``) and ``trainer.pt``."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    folder = os.path.join(root, "checkpoints", f"step_{step:09d}")
    out = os.path.join(scratch, f"merged-{abs(hash(folder))}.pt")
    dcp_to_torch_save(folder, out)
    merged = torch.load(out, weights_only=True)
    trainer_state = torch.load(os.path.join(folder, "trainer.pt"), weights_only=True)
    return {"dcp": merged, "trainer": trainer_state}


_LOSS_LINE = re.compile(r"\bstep (\d+)/\d+ epoch \d+ loss ([\d.]+) ")


def logged_losses(log: str) -> dict[int, float]:
    """The logged loss of each step, the last time it was logged (every rank logs the loss of
    the whole global batch, so any rank's line will do)."""
    return {int(m[1]): float(m[2]) for m in _LOSS_LINE.finditer(log)}
