"""Checkpoint layout, atomic saving, validation, resume, pruning and asynchronous writes.

Layout under the run's URI::

    checkpoints/step_000000120/state.pt       torch.save of the whole training state
    checkpoints/step_000000120/manifest.json  written last: step, files, sizes, sha256

A checkpoint counts as complete only when its manifest exists, parses, names files whose sizes
and SHA-256 match, and ``state.pt`` loads. Anything else is skipped with a warning.
"""

from __future__ import annotations

import json
import logging
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import torch

from trainer.errors import CheckpointError
from trainer.storage import FileInfo, Storage, file_info

log = logging.getLogger("trainer")

FORMAT_VERSION = 1
CHECKPOINT_DIR = "checkpoints"
STATE_FILE = "state.pt"
MANIFEST_FILE = "manifest.json"
PREFIX = "step_"


def step_dir(step: int) -> str:
    """Relative folder of the checkpoint of ``step``."""
    return f"{CHECKPOINT_DIR}/{PREFIX}{step:09d}"


def parse_step(name: str) -> int | None:
    if not name.startswith(PREFIX):
        return None
    try:
        return int(name[len(PREFIX) :])
    except ValueError:
        return None


# ----------------------------------------------------------------------------- RNG states


def capture_rng_state() -> dict[str, Any]:
    """RNG states of this process: Python, NumPy (only if imported), torch CPU and CUDA."""
    version, internal, gauss = random.getstate()
    state: dict[str, Any] = {
        "python": [version, list(internal), gauss],
        "torch": torch.get_rng_state(),
    }
    if "numpy" in sys.modules:
        import numpy as np

        kind, keys, pos, has_gauss, cached = np.random.get_state()
        state["numpy"] = [
            kind,
            torch.from_numpy(np.asarray(keys, dtype=np.int64)),
            pos,
            has_gauss,
            cached,
        ]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Inverse of :func:`capture_rng_state`."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(state["torch"])
    if "numpy" in state:
        import numpy as np

        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


# ----------------------------------------------------------------------------- manager


@dataclass
class SaveResult:
    step: int
    seconds: float
    bytes: int


class CheckpointManager:
    """Saves, finds, validates, loads and prunes checkpoints in one :class:`Storage`."""

    def __init__(self, storage: Storage, keep_last: int = 3) -> None:
        self.storage = storage
        self.keep_last = keep_last

    # -- writing
    def save(self, state: dict[str, Any], step: int, reason: str = "periodic") -> SaveResult:
        """Write ``state`` as the checkpoint of ``step``: data first, manifest last; prune."""
        t0 = time.perf_counter()
        folder = step_dir(step)
        info = self.storage.write_file(
            f"{folder}/{STATE_FILE}", lambda w: torch.save(state, cast(BinaryIO, w))
        )
        manifest = {
            "format": FORMAT_VERSION,
            "step": step,
            "epoch": state.get("epoch"),
            "batch_in_epoch": state.get("batch_in_epoch"),
            "reason": reason,
            "created_unix": time.time(),
            "world_size": state.get("meta", {}).get("world_size"),
            "files": {STATE_FILE: {"size": info.size, "sha256": info.sha256}},
        }
        self.storage.write_bytes(
            f"{folder}/{MANIFEST_FILE}", json.dumps(manifest, indent=1).encode()
        )
        seconds = time.perf_counter() - t0
        self.prune()
        return SaveResult(step, seconds, info.size)

    def prune(self) -> None:
        """Keep the newest ``keep_last`` complete checkpoints; drop stale partial ones."""
        steps = self.list_steps()
        complete = [s for s in steps if self.storage.exists(f"{step_dir(s)}/{MANIFEST_FILE}")]
        keep = set(complete[: self.keep_last])
        newest = complete[0] if complete else None
        for s in steps:
            if s in keep:
                continue
            if s in complete or (newest is not None and s < newest):
                self.storage.remove_tree(step_dir(s))

    # -- reading
    def list_steps(self) -> list[int]:
        """Steps of all checkpoint folders, newest first (complete or not)."""
        steps = [parse_step(n) for n in self.storage.list_dirs(CHECKPOINT_DIR)]
        return sorted((s for s in steps if s is not None), reverse=True)

    def read_manifest(self, step: int) -> dict[str, Any]:
        folder = step_dir(step)
        try:
            raw = self.storage.read_bytes(f"{folder}/{MANIFEST_FILE}")
        except FileNotFoundError:
            raise CheckpointError("no manifest (partial write)") from None
        try:
            manifest = json.loads(raw)
            files = manifest["files"]
            if manifest["step"] != step or STATE_FILE not in files:
                raise ValueError("manifest does not match its folder")
        except (ValueError, KeyError, TypeError) as e:
            raise CheckpointError(f"invalid manifest: {e}") from None
        return manifest

    def load(self, step: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate and load the checkpoint of ``step`` to CPU; raise CheckpointError."""
        manifest = self.read_manifest(step)
        expected = manifest["files"][STATE_FILE]
        try:
            with self.storage.fetch(f"{step_dir(step)}/{STATE_FILE}") as path:
                got: FileInfo = file_info(path)
                if got.size != expected.get("size"):
                    raise CheckpointError(
                        f"size mismatch: {got.size} bytes, manifest says {expected.get('size')}"
                    )
                if got.sha256 != expected.get("sha256"):
                    raise CheckpointError("sha256 mismatch")
                try:
                    state = torch.load(path, map_location="cpu", weights_only=True)
                except Exception as e:
                    raise CheckpointError(f"unloadable: {type(e).__name__}: {e}") from None
        except FileNotFoundError:
            raise CheckpointError(f"{STATE_FILE} missing") from None
        if not isinstance(state, dict) or state.get("step") != step:
            raise CheckpointError("state does not match its manifest")
        return state, manifest

    def find_latest(self, load: bool = True) -> tuple[int, dict[str, Any] | None] | None:
        """The newest complete checkpoint as ``(step, state)``; warns about each one skipped."""
        for step in self.list_steps():
            name = f"{self.storage.uri}/{step_dir(step)}"
            try:
                if load:
                    state, _ = self.load(step)
                    return step, state
                self.read_manifest(step)
                return step, None
            except CheckpointError as e:
                log.warning("skipping checkpoint %s: %s", name, e)
        return None


# ----------------------------------------------------------------------------- async


class AsyncCheckpointer:
    """Copy state into reused CPU buffers (pinned for CUDA), write in a background thread.

    Only the copy blocks the training loop; after the first checkpoint no memory is allocated,
    because the same buffers are reused (at most one write is in flight, so they are free).
    """

    def __init__(self, manager: CheckpointManager) -> None:
        self.manager = manager
        self._buffers: dict[str, torch.Tensor] = {}
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._result: SaveResult | None = None
        self.pending_step: int | None = None
        self.allocated_bytes = 0

    def _stage(self, obj: Any, key: str, cuda_copies: list[bool]) -> Any:
        if isinstance(obj, torch.Tensor):
            src = obj.detach()
            buf = self._buffers.get(key)
            if buf is None or buf.shape != src.shape or buf.dtype != src.dtype:
                pin = src.is_cuda
                buf = torch.empty(src.shape, dtype=src.dtype, device="cpu", pin_memory=pin)
                self._buffers[key] = buf
                self.allocated_bytes += buf.numel() * buf.element_size()
            buf.copy_(src, non_blocking=src.is_cuda)
            if src.is_cuda:
                cuda_copies.append(True)
            return buf
        if isinstance(obj, dict):
            return {k: self._stage(v, f"{key}/{k}", cuda_copies) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._stage(v, f"{key}/{i}", cuda_copies) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return tuple(self._stage(v, f"{key}/{i}", cuda_copies) for i, v in enumerate(obj))
        return obj  # int, float, str, bool, None: immutable

    def submit(self, state: dict[str, Any], step: int, reason: str = "periodic") -> float:
        """Stage ``state`` and start writing it; returns the seconds the caller was blocked."""
        t0 = time.perf_counter()
        self.wait()
        waited = time.perf_counter() - t0
        if waited > 0.05:
            log.info("waited %.2fs for the previous checkpoint write to finish", waited)
        cuda_copies: list[bool] = []
        staged = self._stage(state, "", cuda_copies)
        event = None
        if cuda_copies:
            event = torch.cuda.Event()
            event.record()
        self.pending_step = step
        self._thread = threading.Thread(
            target=self._write, args=(staged, step, reason, event), name="ckpt-writer"
        )
        self._thread.start()
        return time.perf_counter() - t0

    def _write(self, staged: dict[str, Any], step: int, reason: str, event: Any) -> None:
        try:
            if event is not None:
                event.synchronize()  # the device-to-host copies have landed
            self._result = self.manager.save(staged, step, reason)
            log.info(
                "checkpoint step %d written in background: %.1f MB in %.2fs",
                step,
                self._result.bytes / 1e6,
                self._result.seconds,
            )
        except BaseException as e:  # reported by wait()
            self._error = e

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self) -> SaveResult | None:
        """Wait for the write in flight; log (not raise) its failure. Returns its result."""
        if self._thread is None:
            return None
        self._thread.join()
        self._thread = None
        step, self.pending_step = self.pending_step, None
        result, self._result = self._result, None
        if self._error is not None:
            err, self._error = self._error, None
            log.error("background checkpoint of step %s failed: %r", step, err)
            return None
        return result
