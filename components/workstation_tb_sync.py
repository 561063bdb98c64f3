"""Copies every training Job's TensorBoard folder from the bucket to the GPU workstation.

Shipped to the workstation by its cloud-init and run there by the `gpuinfra-tb-sync` service.
Jobs write event files to `<bucket>/<job>/tb/` (the Job's CHECKPOINT_URI is
`<bucket URI>/<job>/`, the trainer adds `tb/`). Each round lists the bucket's top-level
folders (one request per 1000, not the whole bucket, which holds checkpoints and datasets)
and copies each `<job>/tb/` to `<dest>/<job>/`: TensorBoard over `<dest>` shows one run per
Job, new Jobs included.

A copy replaces a grown event file with a new one (a temporary file renamed over the old),
so TensorBoard must read files by path, not through a handle it keeps open (its
`--load_fast=false`, see workstation_cloud_init.TENSORBOARD_FLAGS).

One backend per cloud, each with the cloud's own tool and the instance's role, no keys:
- `s3`: boto3 (in the workstation's venv), credentials from the instance profile (IMDSv2).
- `oss`: ossutil 1.x. Its `--mode EcsRamRole` reads the role's credentials without a
  metadata session token (lib/ecs_role.go at v1.7.19), which the hardened metadata mode
  refuses, so this asks for a token first (ECS docs, "instance metadata", hardened mode: PUT
  /latest/api/token, then the `X-aliyun-ecs-metadata-token` header) and hands the temporary
  credentials to ossutil in a config file only its user can read, never on a command line.
- `cos`: coscli, which takes the CVM role from its config file (`cos.base.mode: CvmRole`).

Only the standard library (boto3 for `s3`): it runs on the image's Python 3.10 or newer.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

TB_FOLDER = "tb/"
"""What the trainer adds to the Job's checkpoint URI (trainer/tblog.py TB_DIR)."""
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A folder name this copies: a Job name, nothing that leaves `dest` (`..`, `/`)."""
ALIBABA_METADATA_URL = "http://100.100.100.200"
TOKEN_TTL_SECONDS = 300
"""Long enough for two requests; the hardened mode accepts 1 to 21600."""
TIMEOUT_SECONDS = 5


class SyncError(Exception):
    """A round failed (no credentials yet, a tool error); the next round tries again."""


def split_bucket_uri(uri: str, scheme: str) -> str:
    """The bucket of `<scheme>://<bucket>[/]`; the Jobs' folders are at its root."""
    prefix = f"{scheme}://"
    bucket = uri.removeprefix(prefix).strip("/")
    if not uri.startswith(prefix) or not bucket or "/" in bucket:
        raise SyncError(f"expected {prefix}<bucket>/, got {uri!r}")
    return bucket


def job_names(prefixes: list[str]) -> list[str]:
    """The Job folder names among top-level prefixes (`job-a/`), unsafe names left out."""
    names = {p.strip("/") for p in prefixes}
    return sorted(n for n in names if _SAFE_NAME.match(n) and n not in (".", ".."))


def safe_relative(key: str) -> Path | None:
    """`key` as a path below a folder, or None when it would leave it or names a folder."""
    parts = key.split("/")
    if not key or key.endswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    return Path(*parts)


# --- s3 (AWS) ---------------------------------------------------------------------------


def s3_round(bucket: str, dest: Path, region: str, client: Any = None) -> list[str]:
    """One round on S3: every Job's `tb/` copied. Returns the top-level folders looked at."""
    if client is None:
        import boto3  # in the venv; only this backend needs it

        client = boto3.client("s3", region_name=region)
    pages = client.get_paginator("list_objects_v2")
    prefixes = [
        p["Prefix"]
        for page in pages.paginate(Bucket=bucket, Delimiter="/")
        for p in page.get("CommonPrefixes", [])
    ]
    jobs = job_names(prefixes)
    for job in jobs:
        source = f"{job}/{TB_FOLDER}"
        for page in pages.paginate(Bucket=bucket, Prefix=source):
            for item in page.get("Contents", []):
                relative = safe_relative(item["Key"][len(source) :])
                if relative is None:
                    continue
                target = dest / job / relative
                modified = item["LastModified"].timestamp()
                if _is_current(target, item["Size"], modified):
                    continue
                _replace(target, functools.partial(client.download_file, bucket, item["Key"]))
                os.utime(target, (modified, modified))
    return jobs


def _is_current(target: Path, size: int, modified: float) -> bool:
    """Like `aws s3 sync`: the local copy has the object's size and is not older."""
    try:
        stat = target.stat()
    except FileNotFoundError:
        return False
    return stat.st_size == size and stat.st_mtime >= modified


def _replace(target: Path, download: Callable[[str], None]) -> None:
    """Downloads next to `target`, then renames over it: a reader never sees half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        download(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# --- oss (Alibaba Cloud) --------------------------------------------------------------


def role_credentials(role: str, base_url: str = ALIBABA_METADATA_URL) -> dict[str, str]:
    """AccessKeyId, AccessKeySecret and SecurityToken of the ECS instance's RAM role."""
    # The metadata service is link-local: never through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    token_request = urllib.request.Request(
        f"{base_url}/latest/api/token",
        method="PUT",
        headers={"X-aliyun-ecs-metadata-token-ttl-seconds": str(TOKEN_TTL_SECONDS)},
    )
    try:
        with opener.open(token_request, timeout=TIMEOUT_SECONDS) as response:
            token = response.read().decode().strip()
        credentials_request = urllib.request.Request(
            f"{base_url}/latest/meta-data/ram/security-credentials/{role}",
            headers={"X-aliyun-ecs-metadata-token": token},
        )
        with opener.open(credentials_request, timeout=TIMEOUT_SECONDS) as response:
            body = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise SyncError(f"metadata service: {error}") from None
    if not isinstance(body, dict) or body.get("Code", "Success") != "Success":
        raise SyncError(f"metadata service refused role {role!r}: {body}")
    try:
        return {k: str(body[k]) for k in ("AccessKeyId", "AccessKeySecret", "SecurityToken")}
    except KeyError as missing:
        raise SyncError(f"metadata service answer for {role!r} lacks {missing}") from None


def ossutil_config(endpoint: str, credentials: dict[str, str]) -> str:
    """ossutil 1.x config: its [Credentials] section (lib/config_helper.go at v1.7.19)."""
    return (
        "[Credentials]\n"
        f"endpoint={endpoint}\n"
        f"accessKeyID={credentials['AccessKeyId']}\n"
        f"accessKeySecret={credentials['AccessKeySecret']}\n"
        f"stsToken={credentials['SecurityToken']}\n"
    )


def oss_top_level(listing: str, bucket: str) -> list[str]:
    """Folders in `ossutil ls oss://<bucket>/ -d` output: one `oss://<bucket>/<name>/` line
    per common prefix (lib/ls.go showDirectories at v1.7.19), objects without the slash."""
    head = f"oss://{bucket}/"
    return [
        line[len(head) :]
        for line in (raw.strip() for raw in listing.splitlines())
        if line.startswith(head) and line.endswith("/") and line.count("/") == 4
    ]


def oss_round(
    bucket: str, dest: Path, role: str, endpoint: str, ossutil: str, metadata_url: str
) -> list[str]:
    credentials = role_credentials(role, metadata_url)
    # mkstemp creates the file readable and writable by its owner only.
    fd, config = tempfile.mkstemp(prefix="ossutil-", suffix=".conf")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(ossutil_config(endpoint, credentials))
        listing = _run([ossutil, "ls", f"oss://{bucket}/", "-d", "-c", config])
        jobs = job_names(oss_top_level(listing, bucket))
        for job in jobs:
            (dest / job).mkdir(parents=True, exist_ok=True)
            # -f: no prompts; -u: only objects newer than the local copy (ossutil sync --help).
            source = f"oss://{bucket}/{job}/{TB_FOLDER}"
            _run([ossutil, "sync", source, f"{dest / job}/", "-f", "-u", "-c", config])
        return jobs
    finally:
        os.unlink(config)


# --- cos (Tencent Cloud) ----------------------------------------------------------------


def cos_top_level(listing: str) -> list[str]:
    """Folders in `coscli ls cos://<bucket>/` output: a table whose rows for common prefixes
    read `<prefix> | DIR | ...` (util/list.go ListObjects at v1.0.6)."""
    found = []
    for line in listing.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 2 and cells[1] == "DIR" and cells[0].endswith("/"):
            found.append(cells[0])
    return found


def cos_round(bucket: str, dest: Path, config: str, coscli: str) -> list[str]:
    listing = _run([coscli, "ls", f"cos://{bucket}/", "-c", config])
    jobs = job_names(cos_top_level(listing))
    for job in jobs:
        (dest / job).mkdir(parents=True, exist_ok=True)
        # A destination ending in / receives each object under its key relative to the
        # source (util/path.go DownloadPathFixed at v1.0.6).
        source = f"cos://{bucket}/{job}/{TB_FOLDER}"
        _run([coscli, "sync", source, f"{dest / job}/", "-r", "-c", config])
    return jobs


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SyncError(f"{command[0]} {command[1]}: {error}") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SyncError(f"{command[0]} {command[1]} exited {done.returncode}: {detail[0]}")
    return done.stdout


# --- command line -------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0, help="seconds between rounds; 0: once")
    backends = parser.add_subparsers(dest="backend", required=True)
    s3 = backends.add_parser("s3", help="AWS S3, as the instance profile")
    s3.add_argument("--region", required=True)
    oss = backends.add_parser("oss", help="Alibaba Cloud OSS, as the instance's RAM role")
    oss.add_argument("--role", required=True, help="the instance's RAM role name")
    oss.add_argument("--endpoint", required=True, help="OSS endpoint, e.g. the internal one")
    oss.add_argument("--ossutil", default="ossutil")
    oss.add_argument("--metadata-url", default=ALIBABA_METADATA_URL)
    cos = backends.add_parser("cos", help="Tencent Cloud COS, as the CVM role (coscli config)")
    cos.add_argument("--config", required=True, help="coscli config naming the CVM role")
    cos.add_argument("--coscli", default="coscli")
    for backend in (s3, oss, cos):
        backend.add_argument("bucket", help="<scheme>://<bucket>/")
        backend.add_argument("dest", help="local folder TensorBoard reads")
    return parser


def one_round(args: argparse.Namespace) -> list[str]:
    dest = Path(args.dest)
    if args.backend == "s3":
        return s3_round(split_bucket_uri(args.bucket, "s3"), dest, args.region)
    if args.backend == "oss":
        bucket = split_bucket_uri(args.bucket, "oss")
        return oss_round(bucket, dest, args.role, args.endpoint, args.ossutil, args.metadata_url)
    return cos_round(split_bucket_uri(args.bucket, "cos"), dest, args.config, args.coscli)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    while True:
        try:
            jobs = one_round(args)
            print(f"tb sync: {len(jobs)} folder(s): {' '.join(jobs)}", flush=True)
            status = 0
        except SyncError as error:
            print(f"tb sync: {error}", file=sys.stderr, flush=True)
            status = 1
        except Exception as error:  # a cloud SDK error: report it, try again next round
            print(f"tb sync: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            status = 1
        if not args.every:
            return status
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main())
