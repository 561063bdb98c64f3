"""Checkpoint layout, atomic saving, validation, resume, pruning and asynchronous writes.

Two formats share one layout under the run's URI and one manifest, written last::

    checkpoints/step_000000120/state.pt        format 1 ("file"): torch.save of the whole state
    checkpoints/step_000000120/.metadata       format 2 ("dcp"): torch.distributed.checkpoint's
    checkpoints/step_000000120/__<rank>_0.distcp   index and each rank's shards (trainer.sharded)
    checkpoints/step_000000120/trainer.pt      format 2: step, data position, schedule, RNG, meta
    checkpoints/step_000000120/manifest.json   written last: step, every file's size and sha256

A checkpoint counts as complete only when its manifest exists, parses with the fields and types
this trainer writes, names files whose sizes and SHA-256 match, and ``state.pt`` (or
``trainer.pt``) loads. Anything else is skipped with a warning.
"""

from __future__ import annotations

import contextlib
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

FORMAT_FILE = 1
FORMAT_DCP = 2
FORMAT_NAMES = {FORMAT_FILE: "file", FORMAT_DCP: "dcp"}
CHECKPOINT_DIR = "checkpoints"
STATE_FILE = "state.pt"
TRAINER_FILE = "trainer.pt"
DCP_METADATA = ".metadata"
MANIFEST_FILE = "manifest.json"
PREFIX = "step_"
#: the files each format's manifest must list
REQUIRED_FILES = {FORMAT_FILE: (STATE_FILE,), FORMAT_DCP: (DCP_METADATA, TRAINER_FILE)}


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
    seconds: float
    bytes: int


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate_manifest(manifest: Any, step: int) -> dict[str, Any]:
    """The manifest if it has the fields and types this trainer writes; else CheckpointError."""
    if not isinstance(manifest, dict):
        raise CheckpointError(f"invalid manifest: a JSON {type(manifest).__name__}, not an object")
    problems = []
    if manifest.get("step") != step or not _is_int(manifest.get("step")):
        problems.append(f"step {manifest.get('step')!r} is not the folder's {step}")
    fmt = manifest.get("format", FORMAT_FILE)
    if fmt not in REQUIRED_FILES or not _is_int(fmt):
        problems.append(f"format {fmt!r} is not one of {sorted(REQUIRED_FILES)}")
        fmt = FORMAT_FILE
    files = manifest.get("files")
    for name in REQUIRED_FILES[fmt]:
        entry = files.get(name) if isinstance(files, dict) else None
        if not isinstance(entry, dict):
            problems.append(f"files.{name} is missing or not an object")
    for name, entry in files.items() if isinstance(files, dict) else ():
        if not isinstance(entry, dict):
            continue
        if not _is_int(entry.get("size")) or entry["size"] < 0:
            problems.append(f"files.{name}.size {entry.get('size')!r} is not a size")
        if not isinstance(entry.get("sha256"), str):
            problems.append(f"files.{name}.sha256 {entry.get('sha256')!r} is not a digest")
        if "/" in name or name in ("", ".", ".."):
            problems.append(f"files.{name} is not a file name of this folder")
    if not _is_int(manifest.get("generation", 0)):
        problems.append(f"generation {manifest.get('generation')!r} is not an integer")
    if problems:
        raise CheckpointError("invalid manifest: " + "; ".join(problems))
    return manifest


def format_of(manifest: dict[str, Any]) -> int:
    """The format of a validated manifest (checkpoints of #17 carry 1)."""
    return int(manifest.get("format", FORMAT_FILE))


def generation_of(manifest: dict[str, Any]) -> int:
    """Checkpoints written before generations existed count as generation 0."""
    return int(manifest.get("generation", 0))


class CheckpointManager:
    """Saves, finds, validates, loads and prunes checkpoints in one :class:`Storage`.

    **Order.** Checkpoints are ordered by ``(generation, step)``. A run that resumes keeps the
    generation of the checkpoint it loaded; a run that starts from scratch (``--no-resume``,
    or nothing loadable) takes one above every generation in the folder. So a fresh run's
    checkpoints outrank those of an earlier run under the same URI, even at lower steps, and
    the next restart resumes the fresh run's work.

    **Pruning keeps what resume can load.** A checkpoint counts towards ``keep_last`` only
    once it has passed the same checks as a resume (manifest, size, SHA-256, ``torch.load``);
    the ones this process wrote or loaded itself are known good, any other is verified once.
    The checkpoint just written is never deleted. Partial and corrupt folders are deleted
    only when they lie below the newest loadable checkpoint; newer ones are left for a human
    (a resume skips them with a warning).
    """

    def __init__(self, storage: Storage, keep_last: int = 3) -> None:
        self.storage = storage
        self.keep_last = keep_last
        self.generation = 1
        self._known_good: dict[int, tuple[int, bytes]] = {}  # step -> (generation, manifest)

    # -- writing
    def save(self, state: dict[str, Any], step: int, reason: str = "periodic") -> SaveResult:
        """Write ``state`` as the checkpoint of ``step``: data first, manifest last; prune."""
        t0 = time.perf_counter()
        info = self.storage.write_file(
            f"{step_dir(step)}/{STATE_FILE}", lambda w: torch.save(state, cast(BinaryIO, w))
        )
        self._commit(FORMAT_FILE, state, step, reason, {STATE_FILE: info})
        seconds = time.perf_counter() - t0
        self._prune_after(step)
        return SaveResult(seconds, info.size)

    def begin_sharded(self, step: int) -> None:
        """Before the shards of ``step`` are written: drop a manifest left in that folder (an
        older run's), so that the folder reads as partial until the new manifest lands."""
        self.storage.remove_file(f"{step_dir(step)}/{MANIFEST_FILE}")

    def commit_sharded(
        self, trainer_state: dict[str, Any], step: int, reason: str, shards: dict[str, FileInfo]
    ) -> SaveResult:
        """After every rank's shards and DCP's ``.metadata`` are written (``shards``: their
        sizes and digests, as each rank hashed them while writing): ``trainer.pt``, then the
        manifest, then pruning."""
        t0 = time.perf_counter()
        if DCP_METADATA not in shards:
            raise CheckpointError(f"the sharded checkpoint of step {step} has no {DCP_METADATA}")
        info = self.storage.write_file(
            f"{step_dir(step)}/{TRAINER_FILE}",
            lambda w: torch.save(trainer_state, cast(BinaryIO, w)),
        )
        files = {**shards, TRAINER_FILE: info}
        self._commit(FORMAT_DCP, trainer_state, step, reason, files)
        seconds = time.perf_counter() - t0
        self._prune_after(step)
        return SaveResult(seconds, sum(f.size for f in files.values()))

    def _commit(
        self, fmt: int, state: dict[str, Any], step: int, reason: str, files: dict[str, FileInfo]
    ) -> None:
        meta = state.get("meta", {})
        manifest = {
            "format": fmt,
            "step": step,
            "generation": self.generation,
            "epoch": state.get("epoch"),
            "batch_in_epoch": state.get("batch_in_epoch"),
            "samples_seen_in_epoch": state.get("samples_seen_in_epoch"),
            "samples_seen": state.get("samples_seen"),
            "reason": reason,
            "created_unix": time.time(),
            "world_size": meta.get("world_size"),
            "global_batch": meta.get("global_batch"),
            "sharding": meta.get("sharding", "ddp"),
            "files": {n: {"size": f.size, "sha256": f.sha256} for n, f in sorted(files.items())},
        }
        raw = json.dumps(manifest, indent=1).encode()
        self.storage.write_bytes(f"{step_dir(step)}/{MANIFEST_FILE}", raw)
        self._known_good[step] = (self.generation, raw)

    def _prune_after(self, step: int) -> None:
        try:
            self.prune(keep=step)
        except Exception as e:  # the checkpoint is written; a failed clean-up is not fatal
            log.warning("pruning old checkpoints in %s failed: %r", self.storage.uri, e)

    def prune(self, keep: int) -> None:
        """Keep the newest ``keep_last`` loadable checkpoints (always the one of step ``keep``);
        delete older loadable ones and unloadable folders below the newest loadable one."""
        loadable: list[tuple[int, int]] = []  # (generation, step)
        broken: list[int] = []
        for step in self.list_steps():
            gen = self._loadable_generation(step)
            if gen is None:
                broken.append(step)
            else:
                loadable.append((gen, step))
        loadable.sort(reverse=True)
        kept = {s for _, s in loadable[: self.keep_last]} | {keep}
        newest_step = max(kept)
        for _, step in loadable:
            if step not in kept:
                self._remove(step, "older than the newest --keep-last")
        for step in broken:
            if step < newest_step:
                self._remove(step, "partial or corrupt, below a loadable one")

    def note_good(self, step: int, manifest: dict[str, Any]) -> None:
        """``step`` was verified (by every rank, each a share): pruning need not read it."""
        self._known_good[step] = (generation_of(manifest), self._manifest_bytes(step))

    def _remove(self, step: int, why: str) -> None:
        log.info("removing checkpoint %s/%s (%s)", self.storage.uri, step_dir(step), why)
        self.storage.remove_tree(step_dir(step))
        self._known_good.pop(step, None)

    def _loadable_generation(self, step: int) -> int | None:
        """The generation of the checkpoint of ``step`` if a resume could load it, else None."""
        try:
            raw = self.storage.read_bytes(f"{step_dir(step)}/{MANIFEST_FILE}")
        except FileNotFoundError:
            return None
        known = self._known_good.get(step)
        if known is not None and known[1] == raw:
            return known[0]
        try:
            _, manifest = self.load(step)
        except CheckpointError as e:
            log.warning(
                "checkpoint %s/%s cannot be loaded: %s", self.storage.uri, step_dir(step), e
            )
            return None
        return generation_of(manifest)

    # -- reading
    def list_steps(self) -> list[int]:
        """Steps of all checkpoint folders, newest first (complete or not)."""
        steps = [parse_step(n) for n in self.storage.list_dirs(CHECKPOINT_DIR)]
        return sorted((s for s in steps if s is not None), reverse=True)

    def _manifest_bytes(self, step: int) -> bytes:
        try:
            return self.storage.read_bytes(f"{step_dir(step)}/{MANIFEST_FILE}")
        except FileNotFoundError:
            raise CheckpointError("no manifest (partial write)") from None

    def read_manifest(self, step: int) -> dict[str, Any]:
        raw = self._manifest_bytes(step)
        try:
            parsed = json.loads(raw)
        except ValueError as e:
            raise CheckpointError(f"invalid manifest: {e}") from None
        return validate_manifest(parsed, step)

    def verify_files(self, step: int, manifest: dict[str, Any], names: list[str]) -> None:
        """Size and SHA-256 of each of ``names`` against the manifest; CheckpointError if one
        is missing or differs."""
        for name in names:
            expected = manifest["files"][name]
            try:
                got: FileInfo = self.storage.file_info(f"{step_dir(step)}/{name}")
            except FileNotFoundError:
                raise CheckpointError(f"{name} missing") from None
            if got.size != expected["size"]:
                raise CheckpointError(
                    f"size mismatch: {name} is {got.size} bytes, manifest says {expected['size']}"
                )
            if got.sha256 != expected["sha256"]:
                raise CheckpointError(f"sha256 mismatch in {name}")

    def load(self, step: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate and load the checkpoint of ``step`` to CPU; raise CheckpointError.

        Format 1: the whole state. Format 2 (sharded): every file is verified, and the state
        returned is ``trainer.pt`` (the tensors stay in the shards, for ``dcp.load``).
        """
        raw = self._manifest_bytes(step)
        manifest = self.read_manifest(step)
        if format_of(manifest) == FORMAT_DCP:
            others = sorted(n for n in manifest["files"] if n != TRAINER_FILE)
            self.verify_files(step, manifest, others)
            state = self.load_trainer_state(step, manifest)
        else:
            state = self._load_file(step, manifest["files"][STATE_FILE])
        if not isinstance(state, dict) or state.get("step") != step:
            raise CheckpointError("state does not match its manifest")
        self._known_good[step] = (generation_of(manifest), raw)
        return state, manifest

    def load_trainer_state(self, step: int, manifest: dict[str, Any]) -> dict[str, Any]:
        """``trainer.pt`` of a sharded checkpoint, verified against the manifest."""
        state = self._load_file(step, manifest["files"][TRAINER_FILE], TRAINER_FILE)
        if not isinstance(state, dict) or state.get("step") != step:
            raise CheckpointError(f"{TRAINER_FILE} does not match its manifest")
        return state

    def _load_file(self, step: int, expected: dict[str, Any], name: str = STATE_FILE) -> Any:
        try:
            with self.storage.fetch(f"{step_dir(step)}/{name}") as path:
                got: FileInfo = file_info(path)
                if got.size != expected["size"]:
                    raise CheckpointError(
                        f"size mismatch: {got.size} bytes, manifest says {expected['size']}"
                    )
                if got.sha256 != expected["sha256"]:
                    raise CheckpointError("sha256 mismatch")
                try:
                    return torch.load(path, map_location="cpu", weights_only=True)
                except Exception as e:
                    raise CheckpointError(f"unloadable: {type(e).__name__}: {e}") from None
        except FileNotFoundError:
            raise CheckpointError(f"{name} missing") from None

    def candidates(self) -> tuple[list[int], dict[int, str]]:
        """Checkpoint steps with a valid manifest in resume order, by (generation, step),
        newest first; and why each other folder cannot be loaded."""
        ranked: list[tuple[int, int]] = []
        broken: dict[int, str] = {}
        for step in self.list_steps():
            try:
                ranked.append((generation_of(self.read_manifest(step)), step))
            except CheckpointError as e:
                broken[step] = str(e)
        return [s for _, s in sorted(ranked, reverse=True)], broken

    def newest_generation(self) -> int:
        """The highest generation of any readable manifest (0 when there is none)."""
        gens = [0]
        for step in self.list_steps():
            with contextlib.suppress(CheckpointError):
                gens.append(generation_of(self.read_manifest(step)))
        return max(gens)

    def find_latest(self) -> tuple[int, dict[str, Any], dict[str, Any]] | None:
        """The newest loadable checkpoint as ``(step, state, manifest)``; warns about each one
        skipped."""
        ranked, broken = self.candidates()
        for step, why in broken.items():
            log.warning("skipping checkpoint %s/%s: %s", self.storage.uri, step_dir(step), why)
        for step in ranked:
            name = f"{self.storage.uri}/{step_dir(step)}"
            try:
                state, manifest = self.load(step)
                return step, state, manifest
            except CheckpointError as e:
                log.warning("skipping checkpoint %s: %s", name, e)
        return None


# ----------------------------------------------------------------------------- async


class CheckpointWriteError(Exception):
    """A checkpoint could not be written (exit code ``CHECKPOINT_FAILED``)."""


class AsyncCheckpointer:
    """Copy state into reused CPU buffers (pinned for CUDA), write in a background thread.

    Only the copy blocks the training loop; after the first checkpoint no memory is allocated,
    because the same buffers are reused (at most one write is in flight, so they are free).
    A failed write is raised by :meth:`wait` and reported by :meth:`failed` as soon as the
    thread has ended, so training never goes on believing it is saved.
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
        """Stage ``state`` and start writing it; returns the seconds the caller was blocked.

        If the previous write failed, nothing new is started and the failure stays reported
        by :meth:`failed` (the loop checks it after every step, on every rank)."""
        t0 = time.perf_counter()
        if self._thread is not None:
            self._thread.join()
        waited = time.perf_counter() - t0
        if waited > 0.05:
            log.info("waited %.2fs for the previous checkpoint write to finish", waited)
        if self._error is not None:
            log.error(
                "not checkpointing step %d: the write of step %s failed", step, self.pending_step
            )
            return time.perf_counter() - t0
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
        except BaseException as e:  # raised by wait()
            self._error = e

    def busy(self) -> bool:
        """True while a background write is in flight."""
        return self._thread is not None and self._thread.is_alive()

    def failed(self) -> bool:
        """True once a background write has ended in an error (no waiting)."""
        return self._error is not None and not (self._thread and self._thread.is_alive())

    def wait(self) -> SaveResult | None:
        """Wait for the write in flight and return its result; raise
        :class:`CheckpointWriteError` if it failed."""
        if self._thread is None:
            return None
        self._thread.join()
        self._thread = None
        step, self.pending_step = self.pending_step, None
        result, self._result = self._result, None
        if self._error is not None:
            err, self._error = self._error, None
            raise CheckpointWriteError(
                f"background checkpoint of step {step} failed: {type(err).__name__}: {err}"
            ) from err
        return result
