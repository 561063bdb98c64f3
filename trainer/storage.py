"""Where checkpoints, final weights and event files go: a local folder or object storage.

Local writes are atomic: data goes to a temporary name in the same folder, is fsync'ed, then
renamed over the final name, and the folder is fsync'ed. On object storage a PUT is atomic by
itself (an object is either absent or complete), so files are spooled locally (hashing on the
way), then uploaded under their final key. ``fsspec``/``s3fs`` are imported only for remote URIs,
so a local run needs nothing beyond torch. Credentials come only from the environment / pod
identity (the default AWS credential chain: env vars, IRSA web identity, instance profile).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from trainer.errors import UserError

log = logging.getLogger("trainer")

_CHUNK = 8 << 20

OSS_HINT = (
    "use s3://<bucket>/<prefix> with --s3-endpoint-url https://s3.oss-<region>.aliyuncs.com "
    "--s3-addressing-style virtual (Alibaba OSS is S3-compatible)"
)
COS_HINT = (
    "use s3://<bucket-appid>/<prefix> with --s3-endpoint-url https://cos.<region>.myqcloud.com "
    "--s3-addressing-style virtual (Tencent COS is S3-compatible)"
)


@dataclass(frozen=True)
class FileInfo:
    """Size and SHA-256 of a written file."""

    size: int
    sha256: str


class HashingWriter:
    """File-like wrapper that counts and hashes what passes through ``write``."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._h = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._h.update(data)
        self.size += len(data)
        return self._f.write(data)

    def flush(self) -> None:
        self._f.flush()

    def info(self) -> FileInfo:
        return FileInfo(self.size, self._h.hexdigest())


def file_info(path: str) -> FileInfo:
    """Size and SHA-256 of a local file, streamed."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            size += len(chunk)
    return FileInfo(size, h.hexdigest())


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


Producer = Callable[[HashingWriter], object]


class Storage:
    """Operations on paths relative to the run's root URI."""

    uri: str
    is_remote: bool = False

    def write_file(self, rel: str, produce: Producer) -> FileInfo:
        raise NotImplementedError

    def write_bytes(self, rel: str, data: bytes) -> FileInfo:
        return self.write_file(rel, lambda w: w.write(data))

    def read_bytes(self, rel: str) -> bytes:
        raise NotImplementedError

    def fetch(self, rel: str) -> contextlib.AbstractContextManager[str]:
        """A local path holding the file's content for the duration of the ``with`` block."""
        raise NotImplementedError

    def exists(self, rel: str) -> bool:
        raise NotImplementedError

    def list_dirs(self, rel: str) -> list[str]:
        raise NotImplementedError

    def remove_tree(self, rel: str) -> None:
        raise NotImplementedError

    def local_dir(self, rel: str) -> str | None:
        """A local folder that *is* ``rel`` (local storage), or None (remote)."""
        return None

    def upload_dir(self, local: str, rel: str) -> None:
        """Copy new or grown files of a local folder to ``rel`` (event files)."""


class LocalStorage(Storage):
    """A folder on a local or mounted (NFS, CSI) file system."""

    def __init__(self, path: str) -> None:
        self.root = os.path.abspath(path)
        self.uri = self.root

    def _p(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def write_file(self, rel: str, produce: Producer) -> FileInfo:
        final = self._p(rel)
        folder = os.path.dirname(final)
        os.makedirs(folder, exist_ok=True)
        tmp = f"{final}.tmp.{os.getpid()}.{threading.get_ident()}"
        try:
            with open(tmp, "wb") as f:
                w = HashingWriter(f)
                produce(w)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(folder)
        return w.info()

    def read_bytes(self, rel: str) -> bytes:
        with open(self._p(rel), "rb") as f:
            return f.read()

    @contextlib.contextmanager
    def fetch(self, rel: str) -> Iterator[str]:
        path = self._p(rel)
        if not os.path.isfile(path):
            raise FileNotFoundError(path)
        yield path

    def exists(self, rel: str) -> bool:
        return os.path.exists(self._p(rel))

    def list_dirs(self, rel: str) -> list[str]:
        path = self._p(rel)
        if not os.path.isdir(path):
            return []
        return sorted(n for n in os.listdir(path) if os.path.isdir(os.path.join(path, n)))

    def remove_tree(self, rel: str) -> None:
        shutil.rmtree(self._p(rel), ignore_errors=True)

    def local_dir(self, rel: str) -> str | None:
        path = self._p(rel)
        os.makedirs(path, exist_ok=True)
        return path


class FsspecStorage(Storage):
    """Object storage through an fsspec file system (``s3://`` via s3fs)."""

    is_remote = True

    def __init__(self, uri: str, fs: Any, staging_dir: str | None = None) -> None:
        self.uri = uri.rstrip("/")
        self.fs = fs
        self.base = self.uri.split("://", 1)[1]
        self.staging = staging_dir or tempfile.gettempdir()
        os.makedirs(self.staging, exist_ok=True)
        self._uploaded: dict[str, int] = {}

    def _p(self, rel: str) -> str:
        return f"{self.base}/{rel}" if rel else self.base

    def write_file(self, rel: str, produce: Producer) -> FileInfo:
        fd, spool = tempfile.mkstemp(prefix="trainer-upload-", dir=self.staging)
        try:
            with os.fdopen(fd, "wb") as f:
                w = HashingWriter(f)
                produce(w)
            # One PUT (or a multipart upload completed in one call): the object appears whole.
            self.fs.put_file(spool, self._p(rel))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(spool)
        return w.info()

    def read_bytes(self, rel: str) -> bytes:
        return self.fs.cat_file(self._p(rel))

    @contextlib.contextmanager
    def fetch(self, rel: str) -> Iterator[str]:
        fd, spool = tempfile.mkstemp(prefix="trainer-download-", dir=self.staging)
        os.close(fd)
        try:
            self.fs.get_file(self._p(rel), spool)
            yield spool
        finally:
            with contextlib.suppress(OSError):
                os.unlink(spool)

    def exists(self, rel: str) -> bool:
        self.fs.invalidate_cache()
        return bool(self.fs.exists(self._p(rel)))

    def list_dirs(self, rel: str) -> list[str]:
        self.fs.invalidate_cache()
        path = self._p(rel)
        try:
            entries = self.fs.ls(path, detail=True)
        except FileNotFoundError:
            return []
        names = [
            e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e["type"] == "directory"
        ]
        return sorted(names)

    def remove_tree(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._p(rel), recursive=True)
        self.fs.invalidate_cache()

    def upload_dir(self, local: str, rel: str) -> None:
        for folder, _, files in os.walk(local):
            for name in files:
                src = os.path.join(folder, name)
                size = os.path.getsize(src)
                sub = os.path.relpath(src, local).replace(os.sep, "/")
                if self._uploaded.get(sub) == size:
                    continue
                self.fs.put_file(src, self._p(f"{rel}/{sub}"))
                self._uploaded[sub] = size


def open_storage(
    uri: str,
    s3_endpoint_url: str | None = None,
    s3_addressing_style: str = "auto",
    staging_dir: str | None = None,
) -> Storage:
    """Storage for ``uri``; raises :class:`UserError` for unsupported or unsafe URIs."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        return LocalStorage(parts.path if scheme == "file" else uri)
    if "@" in parts.netloc:
        raise UserError(
            "credentials in --checkpoint-uri are not accepted; use the environment or pod identity"
        )
    if scheme == "oss":
        raise UserError(f"oss:// is not supported natively; {OSS_HINT}")
    if scheme in ("cos", "cosn"):
        raise UserError(f"{scheme}:// has no maintained fsspec file system; {COS_HINT}")
    if scheme not in ("s3", "s3a"):
        raise UserError(f"unsupported --checkpoint-uri scheme {scheme}://; use a path or s3://")
    if not parts.netloc:
        raise UserError(f"--checkpoint-uri {uri!r} has no bucket")
    try:
        import s3fs
    except ImportError as e:  # missing, or broken by a mismatched botocore/aiobotocore pair
        raise UserError(
            f"s3:// checkpoints need a working s3fs ({e}); see requirements.txt"
        ) from None
    client_kwargs: dict[str, Any] = {}
    if s3_endpoint_url:
        client_kwargs["endpoint_url"] = s3_endpoint_url
    config_kwargs: dict[str, Any] = {}
    if s3_addressing_style != "auto":
        config_kwargs["s3"] = {"addressing_style": s3_addressing_style}
    # No key/secret arguments: s3fs/botocore use the default credential chain.
    fs = s3fs.S3FileSystem(
        client_kwargs=client_kwargs, config_kwargs=config_kwargs, skip_instance_cache=True
    )
    return FsspecStorage(f"s3://{parts.netloc}{parts.path}", fs, staging_dir)
