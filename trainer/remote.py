"""Read access to a dataset in object storage, with the same identity code as checkpoints.

``trainer.stage`` and ``trainer.shards`` read datasets from ``s3://``, ``oss://``, ``cosn://``, ``tos://``
(and every scheme :func:`trainer.storage.open_storage` learns) exactly as checkpoints are
written: over the S3 API at the bucket's endpoint, with the pod identity the platform's webhook
injected (:mod:`trainer.identity`), never a key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from trainer.errors import UserError
from trainer.storage import FsspecStorage, open_storage


@dataclass(frozen=True)
class RemoteOptions:
    """How to reach a bucket: the Job -> trainer contract (STORAGE_* env) or flags."""

    endpoint_url: str | None = None
    region: str | None = None
    sts_endpoint_url: str | None = None
    addressing_style: str = "auto"

    @classmethod
    def from_env(cls) -> RemoteOptions:
        return cls(
            endpoint_url=os.environ.get("STORAGE_ENDPOINT_URL")
            or os.environ.get("AWS_ENDPOINT_URL")
            or None,
            region=os.environ.get("STORAGE_REGION") or None,
            sts_endpoint_url=os.environ.get("STORAGE_STS_ENDPOINT_URL") or None,
        )


def is_remote(location: str) -> bool:
    return "://" in location and not location.startswith("file://")


def open_remote(uri: str, flag: str, options: RemoteOptions) -> tuple[Any, str]:
    """The fsspec file system of ``uri`` and the path of ``uri`` in it. Problems with the URI
    or the identity are :class:`UserError` naming ``flag``."""
    try:
        storage = open_storage(
            uri,
            options.endpoint_url,
            options.addressing_style,
            None,
            options.region,
            options.sts_endpoint_url,
        )
    except UserError as e:  # its messages name the checkpoint flag
        raise UserError(str(e).replace("--checkpoint-uri", flag)) from None
    if not isinstance(storage, FsspecStorage):
        raise UserError(f"{flag} {uri!r} is not in object storage (s3://, oss://, cosn://, tos://)")
    return storage.fs, storage.base


def refused(e: BaseException) -> bool:
    """True for errors that say "this identity can never read that" (exit 64, no retry),
    as opposed to outages (timeouts, connection errors: retried)."""
    if isinstance(e, (PermissionError, FileNotFoundError, NotADirectoryError)):
        return True
    return type(e).__name__ in ("NoCredentialsError", "PartialCredentialsError")
