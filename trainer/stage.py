"""``python -m trainer.stage --source URI --dest DIR``: copy a dataset prefix to the node once.

A training Job with ``dataset.access: stage`` runs this as its init container, with the Job's
own identity, into a per-node cache folder; the trainer then reads ``--data-dir`` from local
disk. What it guarantees:

* **Copied once per node.** ``DIR/.gpuinfra-stage.json`` records every object copied, with the
  size and ETag the bucket reported. A later pod on the same node (a retry after a preemption,
  the next Job of the same dataset) copies only objects that are new or changed since, and
  deletes local files whose object is gone. A copy cut short by a kill resumes: finished
  objects are recorded as they land (the record is replaced atomically).
* **Verified before training.** Each object is downloaded to a temporary name, its size checked
  and, where the ETag is an MD5 (single-part uploads on S3, OSS, COS), its MD5 too, then renamed
  into place; at the end every file's size is checked against the listing again. A mismatch is
  downloaded once more, then fails the pod (exit 1: the Job retries). ``--verify size`` skips
  the MD5 for buckets whose ETags are not MD5s (SSE-KMS).
* **One stager at a time.** Pods staging the same dataset on one node wait on a lock
  (``flock``) instead of copying it twice; a killed stager's lock goes with its process.
* **Honest failures.** No objects under the URI, access denied, no such bucket, missing pod
  identity, or too little disk for what must be copied: exit 64 with one line (the Job fails
  at once: a retry cannot help). Outages: exit 1, retried by the Job.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from trainer import exit_codes
from trainer.errors import UserError
from trainer.remote import RemoteOptions, open_remote, refused

log = logging.getLogger("trainer.stage")

RECORD = ".gpuinfra-stage.json"
LOCK = ".gpuinfra-stage.lock"
PARTS = ".gpuinfra-stage-parts"
_MD5 = re.compile(r"^[0-9a-fA-F]{32}$")
_CHUNK = 8 << 20
_RECORD_EVERY_S = 5.0


@dataclass(frozen=True)
class RemoteObject:
    key: str
    """Relative to the source prefix, '/'-separated."""
    size: int
    etag: str
    """Without quotes; empty when the store gave none."""


@dataclass(frozen=True)
class StageResult:
    objects: int
    bytes: int
    copied: int
    copied_bytes: int
    deleted: int
    seconds: float


def _etag(info: Mapping[str, Any]) -> str:
    value = info.get("ETag") or info.get("etag") or ""
    return str(value).strip('"')


def list_objects(fs: Any, base: str) -> list[RemoteObject]:
    """Every object under ``base`` (a prefix: ``bucket/datasets/x``), keys relative to it."""
    fs.invalidate_cache()
    found = fs.find(base, detail=True)
    objects = []
    prefix = base.rstrip("/") + "/"
    for path, info in sorted(found.items()):
        if info.get("type") == "directory" or path.endswith("/"):
            continue
        key = path[len(prefix) :] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
        if not key or key.startswith((RECORD, LOCK, PARTS)):
            continue
        objects.append(RemoteObject(key, int(info["size"]), _etag(info)))
    return objects


def _safe_local(dest: str, key: str) -> str:
    """The local path of ``key``, refused if it would land outside ``dest``."""
    path = os.path.normpath(os.path.join(dest, *key.split("/")))
    if os.path.commonpath([path, dest]) != dest or path == dest:
        raise UserError(f"object key {key!r} does not name a file under --dest")
    return path


def _md5(path: str) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _read_record(dest: str, source: str) -> dict[str, dict[str, Any]]:
    try:
        with open(os.path.join(dest, RECORD)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or record.get("source") != source:
        return {}
    objects = record.get("objects")
    return objects if isinstance(objects, dict) else {}


def _write_record(
    dest: str, source: str, objects: Mapping[str, Mapping[str, Any]], complete: bool
) -> None:
    path = os.path.join(dest, RECORD)
    with open(path + ".tmp", "w") as f:
        json.dump({"source": source, "complete": complete, "objects": objects}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


@contextlib.contextmanager
def _locked(dest: str) -> Iterator[None]:
    with open(os.path.join(dest, LOCK), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another pod is staging into %s on this node: waiting for it", dest)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _still_valid(path: str, obj: RemoteObject, recorded: Mapping[str, Any] | None) -> bool:
    if not recorded or recorded.get("size") != obj.size or recorded.get("etag") != obj.etag:
        return False
    try:
        return os.path.getsize(path) == obj.size
    except OSError:
        return False


class Stager:
    def __init__(self, fs: Any, base: str, source: str, dest: str, verify: str, workers: int):
        self.fs, self.base, self.source = fs, base.rstrip("/"), source
        self.dest = os.path.abspath(dest)
        self.verify, self.workers = verify, workers
        self.parts = os.path.join(self.dest, PARTS)

    def _fetch(self, obj: RemoteObject) -> None:
        """Download one object beside its place, check it, move it into place."""
        final = _safe_local(self.dest, obj.key)
        part = os.path.join(self.parts, hashlib.sha256(obj.key.encode()).hexdigest())
        for attempt in (1, 2):
            self.fs.get_file(f"{self.base}/{obj.key}", part)
            problem = self._check(part, obj)
            if problem is None:
                os.makedirs(os.path.dirname(final), exist_ok=True)
                os.replace(part, final)
                return
            log.warning("%s: %s (attempt %d)", obj.key, problem, attempt)
        raise OSError(f"{self.source}/{obj.key}: {problem} after a second download")

    def _check(self, path: str, obj: RemoteObject) -> str | None:
        size = os.path.getsize(path)
        if size != obj.size:
            return f"{size} bytes downloaded, the bucket lists {obj.size}"
        if self.verify == "etag" and _MD5.match(obj.etag):
            digest = _md5(path)
            if digest.lower() != obj.etag.lower():
                return (
                    f"MD5 {digest} differs from the ETag {obj.etag} (use --verify size for "
                    "buckets whose ETags are not MD5s, e.g. SSE-KMS)"
                )
        return None

    def run(self) -> StageResult:
        started = time.monotonic()
        objects = list_objects(self.fs, self.base)
        if not objects:
            raise UserError(f"--source {self.source} holds no objects")
        recorded = _read_record(self.dest, self.source)
        wanted = {o.key: o for o in objects}
        todo = [
            o
            for o in objects
            if not _still_valid(_safe_local(self.dest, o.key), o, recorded.get(o.key))
        ]
        copying = {o.key for o in todo}
        kept = {k: v for k, v in recorded.items() if k in wanted and k not in copying}
        deleted = 0
        for key in sorted(set(recorded) - set(wanted)):  # gone from the bucket
            with contextlib.suppress(OSError, UserError):
                os.unlink(_safe_local(self.dest, key))
                deleted += 1
        need = sum(o.size for o in todo)
        free = shutil.disk_usage(self.dest).free
        if need > free:
            raise UserError(
                f"--dest {self.dest} has {free / 2**30:.1f} GiB free, the copy needs "
                f"{need / 2**30:.1f} GiB: give the GPU nodes a bigger disk, or set "
                "dataset.nodeCachePath to a larger volume"
            )
        shutil.rmtree(self.parts, ignore_errors=True)
        os.makedirs(self.parts, exist_ok=True)
        _write_record(self.dest, self.source, kept, complete=False)
        log.info(
            "%s -> %s: %d objects (%.1f MB); %d to copy (%.1f MB), %d already on this node",
            self.source,
            self.dest,
            len(objects),
            sum(o.size for o in objects) / 1e6,
            len(todo),
            need / 1e6,
            len(objects) - len(todo),
        )
        last_write = time.monotonic()
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            for obj in pool.map(lambda o: (self._fetch(o), o)[1], todo):
                kept[obj.key] = {"size": obj.size, "etag": obj.etag}
                if time.monotonic() - last_write > _RECORD_EVERY_S:
                    _write_record(self.dest, self.source, kept, complete=False)
                    last_write = time.monotonic()
        for obj in objects:  # the whole dataset, as listed, is here before training starts
            path = _safe_local(self.dest, obj.key)
            if not os.path.isfile(path) or os.path.getsize(path) != obj.size:
                raise OSError(f"{path} is not the {obj.size} bytes of {obj.key} after staging")
        _write_record(self.dest, self.source, kept, complete=True)
        shutil.rmtree(self.parts, ignore_errors=True)
        seconds = time.monotonic() - started
        result = StageResult(
            objects=len(objects),
            bytes=sum(o.size for o in objects),
            copied=len(todo),
            copied_bytes=need,
            deleted=deleted,
            seconds=seconds,
        )
        log.info(
            "staged %s: %d objects verified, %d copied (%.1f MB in %.1f s, %.0f MB/s), "
            "%d reused, %d deleted",
            self.source,
            result.objects,
            result.copied,
            result.copied_bytes / 1e6,
            seconds,
            result.copied_bytes / 1e6 / max(seconds, 1e-9),
            result.objects - result.copied,
            deleted,
        )
        return result


def stage(
    source: str,
    dest: str,
    options: RemoteOptions | None = None,
    verify: str = "etag",
    workers: int = 8,
) -> StageResult:
    """Copy ``source`` (a bucket prefix URI) into the folder ``dest`` (see the module doc)."""
    fs, base = open_remote(source.rstrip("/"), "--source", options or RemoteOptions.from_env())
    os.makedirs(dest, exist_ok=True)
    with _locked(os.path.abspath(dest)):
        try:
            return Stager(fs, base, source.rstrip("/"), dest, verify, workers).run()
        except UserError:
            raise
        except Exception as e:
            if refused(e):
                reason = str(e).splitlines()[0] if str(e) else ""
                raise UserError(
                    f"--source {source} cannot be read: {type(e).__name__}: {reason}"
                ) from None
            raise


def main(argv: list[str] | None = None) -> int:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s [stage] %(levelname)s %(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False
    env = RemoteOptions.from_env()
    p = argparse.ArgumentParser(prog="python -m trainer.stage", description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True, help="s3://, oss://, cosn:// or tos:// bucket/prefix")
    p.add_argument("--dest", required=True, help="local folder (the node's cache)")
    p.add_argument("--storage-endpoint-url", default=env.endpoint_url)
    p.add_argument("--storage-region", default=env.region)
    p.add_argument("--sts-endpoint-url", default=env.sts_endpoint_url)
    p.add_argument("--s3-addressing-style", choices=("auto", "virtual", "path"), default="auto")
    p.add_argument("--verify", choices=("etag", "size"), default="etag")
    p.add_argument("--workers", type=int, default=8, help="parallel downloads")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return exit_codes.OK if e.code == 0 else exit_codes.USER_ERROR
    options = RemoteOptions(
        args.storage_endpoint_url,
        args.storage_region,
        args.sts_endpoint_url,
        args.s3_addressing_style,
    )
    try:
        stage(args.source, args.dest, options, args.verify, max(1, args.workers))
    except UserError as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"trainer.stage: error: {msg}", file=sys.stderr, flush=True)
        return exit_codes.USER_ERROR
    except Exception:
        log.exception("staging failed")
        return exit_codes.UNEXPECTED_ERROR
    return exit_codes.OK


if __name__ == "__main__":
    sys.exit(main())
