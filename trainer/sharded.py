"""Sharded checkpoints with PyTorch Distributed Checkpoint (``torch.distributed.checkpoint``).

Every rank writes its own shards in parallel (``dcp.save``/``dcp.async_save``), through the run's
:class:`~trainer.storage.Storage`: DCP's ``FileSystemWriter`` for a local folder, its
``FsspecWriter`` over the same s3fs settings (endpoint, addressing, pod-identity session) for
object storage. ``dcp.load`` reshards on load, so a run resumes on another number of processes.

Integrity is the file format's: each rank hashes (SHA-256) and counts what it writes, on the
way, by wrapping the stream DCP writes to. After DCP's coordinator has written ``.metadata``,
the ranks gather those digests, and rank 0 writes ``trainer.pt`` (step, data position,
schedule, every rank's RNG, meta) and then ``manifest.json`` listing every file. A resume trusts
a checkpoint only when every listed file has its size and digest; the ranks verify a share of
the files each, in parallel.

Asynchronous mode: ``dcp.async_save`` stages the state into CPU buffers through a stager that
caches them (``DefaultStager``: allocated once, pinned for CUDA, reused at every later
checkpoint), which is all the training loop waits for; the write, the digests' exchange and
the manifest run in the background. At most one checkpoint is in flight.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import torch
import torch.distributed as dist

from trainer.checkpoint import CheckpointManager, CheckpointWriteError, SaveResult, step_dir
from trainer.distributed import DistContext
from trainer.storage import FileInfo

log = logging.getLogger("trainer")

#: DCP's warning when it writes into a folder that has a ``.metadata``. The trainer does that on
#: purpose: a run resumed from an older checkpoint redoes later steps and writes their folders
#: again, after :meth:`CheckpointManager.begin_sharded` has dropped the old manifest (so the
#: folder reads as partial until the new one lands). The writers pass ``overwrite=True``
#: explicitly, as the warning asks, so a change of torch's default cannot turn it into an error.
REWRITE_WARNING = r"Detected an existing checkpoint in "


class HashingStream:
    """A write stream of DCP's that counts and hashes every byte on its way to ``raw``."""

    def __init__(self, raw: Any, path: str) -> None:
        self.raw, self.path = raw, path
        self._h = hashlib.sha256()
        self.size = 0

    def write(self, data: Any) -> int:
        self._h.update(data)
        n = self.raw.write(data)
        self.size += memoryview(data).nbytes
        return n

    def tell(self) -> int:
        return self.size  # a new file, written front to back

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return int(self.raw.fileno())

    def close(self) -> None:
        self.raw.close()

    def info(self) -> FileInfo:
        return FileInfo(self.size, self._h.hexdigest())


class HashingFileSystem:
    """DCP's file-system layer with every written file's size and SHA-256 recorded by name.

    Wraps the ``fs`` of DCP's ``FileSystemWriter``/``FsspecWriter`` (its documented layer for
    where bytes go); everything but writing and renaming is passed through.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.written: dict[str, FileInfo] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @contextlib.contextmanager
    def create_stream(self, path: Any, mode: str) -> Iterator[Any]:
        with self._inner.create_stream(path, mode) as raw:
            if "w" not in mode:
                yield raw
                return
            stream = HashingStream(raw, os.fspath(path))
            yield stream
        with self._lock:
            self.written[os.path.basename(os.fspath(path))] = stream.info()

    def rename(self, path: Any, new_path: Any) -> None:
        self._inner.rename(path, new_path)
        with self._lock:
            info = self.written.pop(os.path.basename(os.fspath(path)), None)
            if info is not None:
                self.written[os.path.basename(os.fspath(new_path))] = info


def make_stager(device: torch.device) -> Any:
    """DCP's stager that keeps its CPU copies between checkpoints (pinned for CUDA)."""
    cuda = device.type == "cuda"
    try:
        from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
    except ImportError:  # torch before DefaultStager: the blocking stager, cached
        from torch.distributed.checkpoint.staging import BlockingAsyncStager

        return BlockingAsyncStager(cache_staged_state_dict=True)
    # positional: the fields were renamed between releases, their order was not
    # (pinned memory, shared memory, staging in a thread, non-blocking copies)
    return DefaultStager(StagingOptions(cuda, False, False, cuda))


class ShardedCheckpointer:
    """Writes and reads the sharded checkpoints of one run; every rank has one.

    ``save`` writes synchronously; ``submit`` stages and writes in the background (see the
    module docstring). A failed background write is raised by :meth:`wait` and reported by
    :meth:`failed`, as :class:`~trainer.checkpoint.AsyncCheckpointer` does for the file format.
    """

    def __init__(self, manager: CheckpointManager, ctx: DistContext) -> None:
        self.manager, self.ctx = manager, ctx
        self.group = ctx.checkpoint_group
        # process-wide: DCP may plan in a background thread
        warnings.filterwarnings("ignore", message=REWRITE_WARNING, category=UserWarning)
        self.stager: Any = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._result: SaveResult | None = None
        self.pending_step: int | None = None

    # ------------------------------------------------------------------ writing
    def _writer(self, step: int) -> tuple[Any, HashingFileSystem]:
        writer = self.manager.storage.dcp_writer(step_dir(step))
        hashing = HashingFileSystem(writer.fs)
        writer.fs = hashing
        return writer, hashing

    def save(
        self, state: dict[str, Any], trainer_state: dict[str, Any] | None, step: int, reason: str
    ) -> SaveResult | None:
        """Write the checkpoint of ``step`` now (every rank calls this); rank 0 returns what
        was written, the others None."""
        import torch.distributed.checkpoint as dcp

        writer, hashing = self._writer(step)
        if self.ctx.is_main:
            self.manager.begin_sharded(step)
        t0 = time.perf_counter()
        dcp.save(state, storage_writer=writer, process_group=self.group)
        result = self._commit(hashing, trainer_state, step, reason)
        if result is not None:
            result = SaveResult(time.perf_counter() - t0, result.bytes)
        return result

    def submit(
        self, state: dict[str, Any], trainer_state: dict[str, Any] | None, step: int, reason: str
    ) -> float:
        """Stage ``state`` into the reused buffers and write it in the background; returns
        the seconds the caller was blocked (the wait for a previous write, the staging)."""
        import torch.distributed.checkpoint as dcp

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
        if self.stager is None:
            self.stager = make_stager(self.ctx.device)
        writer, hashing = self._writer(step)
        future = dcp.async_save(
            state, storage_writer=writer, process_group=self.group, async_stager=self.stager
        )
        if not isinstance(future, Future):  # an AsyncSaveResponse (staging in a thread)
            future = future.upload_completion
        self.pending_step = step
        self._thread = threading.Thread(
            target=self._finish,
            args=(future, hashing, trainer_state, step, reason),
            name="ckpt-writer",
        )
        self._thread.start()
        return time.perf_counter() - t0

    def _finish(
        self,
        future: Future[Any],
        hashing: HashingFileSystem,
        trainer_state: dict[str, Any] | None,
        step: int,
        reason: str,
    ) -> None:
        t0 = time.perf_counter()
        try:
            if self.ctx.is_main:
                self.manager.begin_sharded(step)
            future.result()  # DCP reports a failure on any rank to every rank
            self._result = self._commit(hashing, trainer_state, step, reason)
            if self._result is not None:
                log.info(
                    "sharded checkpoint step %d written in background: %.1f MB in %.2fs",
                    step,
                    self._result.bytes / 1e6,
                    time.perf_counter() - t0,
                )
        except BaseException as e:  # raised by wait()
            self._error = e

    def _commit(
        self,
        hashing: HashingFileSystem,
        trainer_state: dict[str, Any] | None,
        step: int,
        reason: str,
    ) -> SaveResult | None:
        """Gather every rank's digests; rank 0 writes ``trainer.pt`` and the manifest."""
        mine = dict(hashing.written)
        if self.group is not None:
            gathered: list[Any] = [None] * dist.get_world_size(self.group)
            dist.all_gather_object(gathered, mine, group=self.group)
        else:
            gathered = [mine]
        if not self.ctx.is_main:
            return None
        files: dict[str, FileInfo] = {}
        for part in gathered:
            files.update(part)
        assert trainer_state is not None
        return self.manager.commit_sharded(trainer_state, step, reason, files)

    def busy(self) -> bool:
        """True while a background write is in flight."""
        return self._thread is not None and self._thread.is_alive()

    def failed(self) -> bool:
        """True once a background write has ended in an error (no waiting)."""
        return self._error is not None and not (self._thread and self._thread.is_alive())

    def wait(self) -> SaveResult | None:
        """Wait for the write in flight; raise :class:`CheckpointWriteError` if it failed."""
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

    def close(self) -> None:
        """Free the staging buffers (after the last write)."""
        if self.stager is not None:
            self.stager.close()
            self.stager = None

    # ------------------------------------------------------------------ reading
    def verify_share(self, step: int, manifest: dict[str, Any]) -> str | None:
        """Verify this rank's share of the checkpoint's files (every ``world``-th, from
        ``rank``); the reason it cannot be trusted, or None."""
        from trainer.errors import CheckpointError

        names = sorted(manifest["files"])[self.ctx.rank :: self.ctx.world]
        try:
            self.manager.verify_files(step, manifest, names)
        except CheckpointError as e:
            return str(e)
        except OSError as e:
            return f"unreadable: {type(e).__name__}: {e}"
        return None

    def load(self, state: dict[str, Any], step: int) -> None:
        """Fill ``state`` (tensors in place) from the shards of ``step``, resharded to this
        run's ranks (every rank calls this)."""
        import torch.distributed.checkpoint as dcp

        reader = self.manager.storage.dcp_reader(step_dir(step))
        dcp.load(state, storage_reader=reader, process_group=self.group)
