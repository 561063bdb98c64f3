"""``python -m trainer`` that SIGKILLs itself part-way through writing one checkpoint file.

    python tests/trainer/sigkill_in_write.py STEP FILE NBYTES -- <trainer arguments>

Test-only fault injection, applied from outside the trainer: this script wraps
``LocalStorage.write_file`` (and the stream through which DCP writes a sharded checkpoint's
files) in its own process and then runs the unchanged ``trainer`` package as ``python -m
trainer`` would. When the checkpoint of ``STEP`` writes ``FILE`` (``state.pt``,
``manifest.json``, a shard such as ``__0_0.distcp``, ``.metadata.tmp``, ``trainer.pt``) and at
least ``NBYTES`` bytes have gone to the file, the process sends itself SIGKILL. That is a node
dying in the middle of a write, at a point an external watcher cannot hit reliably because a
small checkpoint is written in a few milliseconds. Everything the dying process leaves on disk
is what the real storage code left there.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from trainer import sharded, storage  # noqa: E402
from trainer.checkpoint import step_dir  # noqa: E402


class _DyingWriter:
    """Passes writes through; SIGKILLs the process once ``limit`` bytes are in the file."""

    def __init__(self, inner: storage.HashingWriter, limit: int) -> None:
        self.inner, self.limit = inner, limit

    def write(self, data: bytes | bytearray | memoryview) -> int:
        n = self.inner.write(data)
        if self.inner.size >= self.limit:
            self.inner.flush()  # the bytes reach the file, as a real half-done write's would
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    def flush(self) -> None:
        self.inner.flush()


def main() -> None:
    step, name, nbytes, sep, *trainer_args = sys.argv[1:]
    if sep != "--":
        raise SystemExit(__doc__)
    target, limit = f"{step_dir(int(step))}/{name}", int(nbytes)
    original = storage.LocalStorage.write_file

    def write_file(
        self: storage.LocalStorage, rel: str, produce: storage.Producer
    ) -> storage.FileInfo:
        if rel != target:
            return original(self, rel, produce)
        return original(self, rel, lambda w: produce(_DyingWriter(w, limit)))  # type: ignore[arg-type]

    storage.LocalStorage.write_file = write_file  # type: ignore[method-assign]
    write_shard = sharded.HashingStream.write

    def dying_shard_write(self: sharded.HashingStream, data: bytes) -> int:
        n = write_shard(self, data)
        if self.path.endswith(target) and self.size >= limit:
            self.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    sharded.HashingStream.write = dying_shard_write  # type: ignore[method-assign]
    sys.argv = ["trainer", *trainer_args]
    runpy.run_module("trainer", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
