"""Where checkpoints, final weights and event files go: a local folder or object storage.

Local writes are atomic: data goes to a temporary name in the same folder, is fsync'ed, then
renamed over the final name, and the folder is fsync'ed. On object storage a PUT is atomic by
itself (an object is either absent or complete), so files are spooled locally (hashing on the
way), then uploaded under their final key. ``fsspec``/``s3fs`` are imported only for remote URIs,
so a local run needs nothing beyond torch. Every object store is reached over the S3 API;
credentials come only from the pod's identity: botocore's chain for ``s3://`` (IRSA web
identity), the exchange in :mod:`trainer.identity` for ``oss://`` (RRSA), ``cosn://`` (TKE) and
``tos://`` (VKE IRSA).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import logging
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from trainer.errors import UserError

log = logging.getLogger("trainer")

_CHUNK = 8 << 20


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

    def remove_file(self, rel: str) -> None:
        raise NotImplementedError

    def local_dir(self, rel: str) -> str | None:
        """A local folder that *is* ``rel`` (local storage), or None (remote)."""
        return None

    def upload_dir(self, local: str, rel: str) -> None:
        """Copy new or grown files of a local folder to ``rel`` (event files)."""

    def file_info(self, rel: str) -> FileInfo:
        """Size and SHA-256 of a stored file, streamed (FileNotFoundError if absent)."""
        raise NotImplementedError

    def dcp_writer(self, rel: str) -> Any:
        """A ``torch.distributed.checkpoint`` StorageWriter for folder ``rel``."""
        raise NotImplementedError

    def dcp_reader(self, rel: str) -> Any:
        """A ``torch.distributed.checkpoint`` StorageReader for folder ``rel``."""
        raise NotImplementedError


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

    def remove_file(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._p(rel))

    def local_dir(self, rel: str) -> str | None:
        path = self._p(rel)
        os.makedirs(path, exist_ok=True)
        return path

    def file_info(self, rel: str) -> FileInfo:
        return file_info(self._p(rel))

    def dcp_writer(self, rel: str) -> Any:
        from torch.distributed.checkpoint import FileSystemWriter

        # sync_files: each shard is fsync'ed before the coordinator writes .metadata;
        # overwrite: see trainer.sharded.REWRITE_WARNING (torch says its default may change)
        return FileSystemWriter(self._p(rel), sync_files=True, overwrite=True)

    def dcp_reader(self, rel: str) -> Any:
        from torch.distributed.checkpoint import FileSystemReader

        return FileSystemReader(self._p(rel))


class FsspecStorage(Storage):
    """Object storage through an fsspec file system (``s3://`` via s3fs)."""

    is_remote = True

    def __init__(
        self,
        uri: str,
        fs: Any,
        staging_dir: str | None = None,
        fs_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.uri = uri.rstrip("/")
        self.fs = fs
        #: what ``fs`` was made from: DCP's fsspec reader and writer build theirs from it
        self.fs_kwargs = dict(fs_kwargs or {})
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

    def remove_file(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._p(rel))

    def file_info(self, rel: str) -> FileInfo:
        h = hashlib.sha256()
        size = 0
        with self.fs.open(self._p(rel), "rb", block_size=_CHUNK) as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                size += len(chunk)
        return FileInfo(size, h.hexdigest())

    def _dcp_path(self, rel: str) -> str:
        # Every scheme is the S3 API through s3fs (see open_storage), so s3:// for fsspec.
        return f"s3://{self._p(rel)}"

    def dcp_writer(self, rel: str) -> Any:
        # An object is whole once its upload completes: nothing to fsync.
        writer = _dcp_fsspec("FsspecWriter")
        return writer(self._dcp_path(rel), sync_files=False, overwrite=True, **self.fs_kwargs)

    def dcp_reader(self, rel: str) -> Any:
        return _dcp_fsspec("FsspecReader")(self._dcp_path(rel), **self.fs_kwargs)

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


def _dcp_fsspec(name: str) -> Any:
    """DCP's fsspec ``FsspecWriter``/``FsspecReader``. torch 2.13 defines them in
    ``torch.distributed.checkpoint._fsspec_filesystem`` without exporting them from the
    package; a release that exports them is preferred."""
    import torch.distributed.checkpoint as dcp

    found = getattr(dcp, name, None)
    if found is None:
        from torch.distributed.checkpoint import _fsspec_filesystem

        found = getattr(_fsspec_filesystem, name)
    return found


PROBE_FILE = ".trainer-write-probe"
#: errno values that say "this location cannot be written by this identity", not an outage
_REFUSED = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENOENT}


def probe_writable(storage: Storage) -> None:
    """Write, read back and delete a small file under the root, so that a URI this run can
    never write to stops the run at the start with exit 64 (not after hours, with a traceback
    and a retry). Outages (timeouts, connection errors) are not the user's mistake: they
    propagate and the Job retries."""
    payload = f"{socket.gethostname()} {os.getpid()}".encode()
    try:
        storage.write_bytes(PROBE_FILE, payload)
        if storage.read_bytes(PROBE_FILE) != payload:
            raise PermissionError("what was written reads back differently")
        storage.remove_file(PROBE_FILE)
    except Exception as e:
        refused = isinstance(e, (PermissionError, FileNotFoundError, NotADirectoryError))
        refused |= isinstance(e, OSError) and e.errno in _REFUSED
        refused |= type(e).__name__ in ("NoCredentialsError", "PartialCredentialsError")
        if not refused:
            raise
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UserError(
            f"--checkpoint-uri {storage.uri} is not writable: {type(e).__name__}: {reason}"
        ) from None


def content_md5_for_delete_objects(request: Any, **_: Any) -> None:
    """A ``before-sign`` handler: DeleteObjects (a POST of the key list) carries Content-MD5,
    as TOS's own SDK sends it (``tos`` 2.9.3, ``TosClientV2.delete_multi_objects``), instead of
    the CRC32 headers botocore >= 1.36 puts there (it no longer sends Content-MD5, and stores
    that require it refuse the request: pruning would then never delete old checkpoints)."""
    body = request.body or b""
    digest = hashlib.md5(body.encode() if isinstance(body, str) else body, usedforsecurity=False)
    request.headers["Content-MD5"] = base64.b64encode(digest.digest()).decode()
    for name in [h for h in request.headers if h.lower().startswith(_FLEXIBLE_CHECKSUM)]:
        del request.headers[name]


_FLEXIBLE_CHECKSUM = ("x-amz-checksum-", "x-amz-sdk-checksum-")

#: URI schemes of object storage, all reached over the S3 API (OSS, COS, TOS are S3-compatible)
OBJECT_SCHEMES = ("s3", "s3a", "oss", "cosn", "cos", "tos")
#: what the README calls each scheme's bucket, for messages
ENDPOINT_EXAMPLE = {
    "oss": "https://s3.oss-<region>-internal.aliyuncs.com",
    "cosn": "https://cos.<region>.myqcloud.com",
    "tos": "https://tos-s3-<region>.ivolces.com",
}


def open_storage(
    uri: str,
    endpoint_url: str | None = None,
    addressing_style: str = "auto",
    staging_dir: str | None = None,
    region: str | None = None,
    sts_endpoint_url: str | None = None,
) -> Storage:
    """Storage for ``uri``; raises :class:`UserError` for unsupported or unsafe URIs.

    ``s3://`` uses botocore's default credential chain (IRSA web identity on EKS).
    ``oss://``, ``cosn://`` (``cos://`` too) and ``tos://`` exchange the pod identity that ACK
    RRSA, TKE or VKE IRSA injected for temporary keys (:mod:`trainer.identity`) and talk to the
    bucket over the S3 API at ``endpoint_url``, virtual-hosted.
    """
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        return LocalStorage(parts.path if scheme == "file" else uri)
    if "@" in parts.netloc:
        raise UserError(
            "credentials in --checkpoint-uri are not accepted; use the environment or pod identity"
        )
    if scheme not in OBJECT_SCHEMES:
        raise UserError(
            f"unsupported --checkpoint-uri scheme {scheme}://; "
            "use a path, s3://, oss://, cosn:// or tos://"
        )
    if not parts.netloc:
        raise UserError(f"--checkpoint-uri {uri!r} has no bucket")
    family = {"s3a": "s3", "cos": "cosn"}.get(scheme, scheme)
    session = None
    config_kwargs: dict[str, Any] = {}
    if family != "s3":
        if not endpoint_url:
            raise UserError(
                f"{scheme}:// needs the bucket's S3-compatible endpoint: --storage-endpoint-url "
                f"or STORAGE_ENDPOINT_URL (e.g. {ENDPOINT_EXAMPLE[family]})"
            )
        from trainer import identity

        identity.check_identity_env(family)
        if addressing_style == "auto":
            # OSS and TOS refuse path style; COS expects virtual hosts. TOS takes virtual-hosted
            # requests only (TOS's "Compatibility with Amazon S3" page, in BytePlus's edition:
            # docs.byteplus.com/en/docs/tos/docs-compatibility-with-amazon-s3).
            addressing_style = "virtual"
        # OSS and COS do not take the aws-chunked uploads with trailing checksums that
        # botocore >= 1.36 sends by default: checksums only where the API requires them.
        config_kwargs["request_checksum_calculation"] = "when_required"
        config_kwargs["response_checksum_validation"] = "when_required"
        # TOS: the same, as no TOS page says its S3 endpoint takes aws-chunked uploads or
        # x-amz-checksum-* headers. Its requests are SigV4 in STORAGE_REGION (botocore's
        # default): the page above says TOS takes signature V4 and not V2.
        if family == "oss":
            # Alibaba's guide to AWS SDKs (help.aliyun.com/zh/oss/developer-reference/
            # use-aws-sdks-to-access-oss, Python): boto3 with signature_version "s3".
            config_kwargs["signature_version"] = "s3"
        exchange = identity.exchange_for(family, sts_endpoint_url, region)
        session = identity.session_with(exchange, identity.PLATFORM[family])
        if family == "tos":
            session.register("before-sign.s3.DeleteObjects", content_md5_for_delete_objects)
    try:
        import s3fs
    except ImportError as e:  # missing, or broken by a mismatched botocore/aiobotocore pair
        raise UserError(
            f"{scheme}:// checkpoints need a working s3fs ({e}); see requirements.txt"
        ) from None
    client_kwargs: dict[str, Any] = {}
    if endpoint_url:
        client_kwargs["endpoint_url"] = endpoint_url
    if region:
        client_kwargs["region_name"] = region
    if addressing_style != "auto":
        config_kwargs["s3"] = {"addressing_style": addressing_style}
    # No key/secret arguments: s3:// takes botocore's default chain, oss:// and cosn:// the
    # session holding the pod identity's temporary credentials.
    fs_kwargs: dict[str, Any] = {
        "session": session,
        "client_kwargs": client_kwargs,
        "config_kwargs": config_kwargs,
        "skip_instance_cache": True,
    }
    fs = s3fs.S3FileSystem(**fs_kwargs)
    return FsspecStorage(f"{scheme}://{parts.netloc}{parts.path}", fs, staging_dir, fs_kwargs)
