"""A training Job's dataset: where it lies in object storage and how it reaches the pod.

One `dataset` mapping per `trainingJobs` entry, each problem named
`trainingJobs[i].dataset.<field>`:

- `source`: a path in the stack's bucket (`datasets/imagenet`), or a URI of any bucket the
  Job's identity can read (`s3://other-bucket/imagenet`, the scheme of the stack's platform);
- `access`: `mount` (read-only through the platform's object-storage CSI driver, where one
  works with pod identity), `stage` (copied once per node by an init container, then read from
  the node's disk) or `stream` (the trainer reads tar shards from the bucket itself);
- `mountPath` (default `/data`) and, for `stage`, `nodeCachePath` (the node folder the copies
  live in, default `/var/lib/gpuinfra/datasets`).

Which access each platform offers is `PLATFORMS` (why not, where it does not), checked here for
cloud stacks and against the cluster stack's handle for a `clusterStack` GPU-layer stack.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

DatasetAccess = Literal["mount", "stage", "stream"]
ACCESS: tuple[DatasetAccess, ...] = ("mount", "stage", "stream")
SCHEMES = ("s3", "oss", "cosn", "tos")
"""The object-storage schemes the stacks' buckets use (`ClusterHandle.bucket.scheme`)."""
DEFAULT_MOUNT_PATH = "/data"
DEFAULT_NODE_CACHE_PATH = "/var/lib/gpuinfra/datasets"
FIELDS = ("source", "access", "mountPath", "nodeCachePath")

_KEY_PART = re.compile(r"^[A-Za-z0-9._\-=+@,]+$")
"""Characters of a key segment this accepts: the S3 "safe" set plus a few; spaces and other
characters that need URL-encoding in a CSI mount option or an init container's argument are
left out on purpose."""
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")


@dataclass(frozen=True)
class DatasetSettings:
    source: str
    """A key prefix in the stack's bucket (no scheme), or a full `<scheme>://bucket/prefix`."""
    access: DatasetAccess
    mount_path: str = DEFAULT_MOUNT_PATH
    node_cache_path: str = DEFAULT_NODE_CACHE_PATH

    @property
    def in_stack_bucket(self) -> bool:
        return "://" not in self.source

    @property
    def scheme(self) -> str | None:
        """The URI's scheme; None for a path in the stack's bucket."""
        return None if self.in_stack_bucket else self.source.split("://", 1)[0]


@dataclass(frozen=True)
class DatasetPlatform:
    """What one platform offers a dataset."""

    scheme: str
    mount_driver: str | None
    """The CSI driver that mounts the bucket read-only with pod identity; None: none does."""
    no_mount: str = ""
    """Why `mount` is refused, where `mount_driver` is None."""


PLATFORMS: Mapping[str, DatasetPlatform] = {
    "aws": DatasetPlatform("s3", "Mountpoint for Amazon S3 CSI driver (EKS add-on)"),
    "alicloud": DatasetPlatform("oss", "ACK's OSS CSI driver (ossfs, csi-plugin) with RRSA"),
    "tencentcloud": DatasetPlatform(
        "cosn",
        None,
        "TKE's COS CSI driver (cosfs) authenticates only with a SecretId/SecretKey Secret "
        "(TencentCloud/kubernetes-csi-tencentcloud driver/cosfs/config.go: getSecretCredential), "
        "a static key this project never creates",
    ),
    "volcengine": DatasetPlatform(
        "tos",
        None,
        "VKE's TOS volumes (csi-tos, csi-fsx) authenticate with an AK/SK Secret, not IRSA "
        "(volcengine.com/docs/6460/1462760), a static key this project never creates",
    ),
}
"""Per cloud stack. An existing cluster (`cloud: kubernetes` without clusterStack) gets no CSI
driver from this project: its scheme is `existingBucketUri`'s and `mount` is refused."""
EXISTING_CLUSTER_NO_MOUNT = (
    "this stack installs no CSI driver on an existing cluster; mount the bucket with a "
    "PersistentVolumeClaim of your own, or use stage or stream"
)


def _key_prefix_problem(prefix: str) -> str | None:
    if not prefix or prefix.startswith("/") or "//" in prefix:
        return "a key prefix such as datasets/imagenet (no leading '/', no empty segment)"
    parts = prefix.rstrip("/").split("/")
    if any(p in (".", "..") for p in parts):
        return "no '.' or '..' segments: object keys are not file paths"
    if not all(_KEY_PART.match(p) for p in parts):
        return "letters, digits and . _ - = + @ , per segment (no spaces or other characters)"
    return None


def source_problem(source: object) -> str | None:
    """None when `source` is a key prefix in the stack's bucket or a usable bucket URI."""
    if not isinstance(source, str) or not source:
        return (
            "required: a path in the stack's bucket (datasets/imagenet) or a URI "
            "(s3://bucket/prefix, oss://, cosn://, tos://)"
        )
    if "://" not in source:
        return _key_prefix_problem(source)
    scheme, rest = source.split("://", 1)
    if scheme not in SCHEMES:
        return f"scheme {scheme}:// is not one of {', '.join(s + '://' for s in SCHEMES)}"
    bucket, _, prefix = rest.partition("/")
    if "@" in bucket or ":" in bucket:
        return "no credentials or port in the URI: the Job's pod identity reads the bucket"
    if not _BUCKET.match(bucket):
        return f"{bucket!r} is not a bucket name (3-63 lowercase letters, digits, '.' and '-')"
    if prefix:
        return _key_prefix_problem(prefix)
    return None


def path_problem(path: object, *, what: str) -> str | None:
    if not isinstance(path, str) or not posixpath.isabs(path):
        return f"an absolute path for {what}"
    normal = posixpath.normpath(path)
    if normal != path.rstrip("/") or normal == "/":
        return f"a normalised absolute path other than '/' for {what} (no '..', '//' or '.')"
    return None


def parse(raw: object) -> tuple[DatasetSettings | None, list[tuple[str, object, str]]]:
    """The dataset of one Job, and its problems as (field, value, allowed)."""
    if not isinstance(raw, Mapping):
        return None, [("dataset", raw, "must be a mapping with source and access")]
    problems: list[tuple[str, object, str]] = [
        (f"dataset.{k}", raw[k], "unknown field; allowed: " + ", ".join(FIELDS))
        for k in sorted(set(map(str, raw)) - set(FIELDS))
    ]
    source = raw.get("source")
    problem = source_problem(source)
    if problem:
        problems.append(("dataset.source", source, problem))
    access = raw.get("access", "stage")
    if access not in ACCESS:
        problems.append(("dataset.access", access, "allowed: " + ", ".join(ACCESS)))
    mount_path = raw.get("mountPath", DEFAULT_MOUNT_PATH)
    problem = path_problem(mount_path, what="the dataset inside the trainer container")
    if problem is None and str(mount_path).startswith(("/dev", "/proc", "/sys", "/tmp")):
        problem = "not under /dev, /proc, /sys or /tmp (the pod mounts its own volumes there)"
    if problem:
        problems.append(("dataset.mountPath", mount_path, problem))
    cache = raw.get("nodeCachePath")
    if cache is not None:
        if access != "stage":
            problems.append(
                ("dataset.nodeCachePath", cache, "only with access: stage (where copies live)")
            )
        elif problem := path_problem(cache, what="the node folder staged copies live in"):
            problems.append(("dataset.nodeCachePath", cache, problem))
    if isinstance(source, str) and "://" in source and access == "mount":
        problems.append(
            (
                "dataset.source",
                source,
                "mount reads the stack's bucket only (the CSI driver's role is limited to "
                "it): give a path in it, or use access stage or stream for another bucket",
            )
        )
    if problems:
        return None, problems
    return (
        DatasetSettings(
            source=cast(str, source),
            access=cast(DatasetAccess, access),
            mount_path=str(mount_path).rstrip("/"),
            node_cache_path=str(cache or DEFAULT_NODE_CACHE_PATH).rstrip("/"),
        ),
        [],
    )


def platform_problems(
    dataset: DatasetSettings, *, scheme: str, mount_driver: str | None, no_mount: str
) -> list[tuple[str, object, str]]:
    """What the platform the Job runs on cannot do with this dataset."""
    problems: list[tuple[str, object, str]] = []
    if dataset.access == "mount" and mount_driver is None:
        problems.append(("dataset.access", "mount", f"{no_mount}; use stage or stream"))
    if dataset.scheme is not None and dataset.scheme != scheme:
        problems.append(
            (
                "dataset.source",
                dataset.source,
                f"this platform's pod identity reads {scheme}:// buckets; give a {scheme}:// "
                "URI or a path in the stack's bucket",
            )
        )
    return problems
