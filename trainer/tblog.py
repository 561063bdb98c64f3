"""TensorBoard event files under ``<checkpoint-uri>/tb/``; optional (warns once if missing)."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from typing import Any

from trainer.storage import Storage

log = logging.getLogger("trainer")

TB_DIR = "tb"


class TensorBoardLog:
    """Scalars to event files; written locally, copied to object storage on :meth:`sync`."""

    def __init__(self, storage: Storage, enabled: bool, staging_dir: str | None = None) -> None:
        self.storage = storage
        self.writer: Any = None
        self.local: str | None = None
        if not enabled:
            return
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as e:
            log.warning("TensorBoard logging disabled (%s); pip install 'tensorboard>=2'", e)
            return
        local = storage.local_dir(TB_DIR)
        if local is None:
            digest = hashlib.sha256(storage.uri.encode()).hexdigest()[:12]
            local = os.path.join(staging_dir or tempfile.gettempdir(), f"trainer-tb-{digest}")
            os.makedirs(local, exist_ok=True)
        self.local = local
        self.writer = SummaryWriter(log_dir=local)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self.writer is None:
            return
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)

    def sync(self) -> None:
        """Flush; upload new or grown event files when the URI is remote."""
        if self.writer is None:
            return
        self.writer.flush()
        if self.storage.is_remote and self.local:
            try:
                self.storage.upload_dir(self.local, TB_DIR)
            except Exception as e:  # event files are not worth failing a run
                log.warning("could not upload TensorBoard files: %r", e)

    def close(self) -> None:
        if self.writer is None:
            return
        self.sync()
        self.writer.close()
        self.writer = None
