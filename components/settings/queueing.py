"""Settings of Kueue, the queue training Jobs wait in (issue 19): install it, its GPU quota."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from .reader import ConfigReader

KueueMode = Literal["install", "existing", "off"]
MIN_PODS_READY_MINUTES = 5
"""Below this a GPU node cannot be added and its image pulled before Kueue gives up."""


@dataclass(frozen=True)
class QueueSettings:
    mode: KueueMode = "install"
    """install: gpuinfra installs Kueue (pinned); existing: the cluster runs Kueue v0.15 or
    newer already (v1beta2 API), gpuinfra adds only its queue; off: no queue, Jobs start at once."""
    gpu_quota: int = 0
    """The most GPUs the training queue admits on each GPU pool (each pool's own maximum
    caps it); 0: each pool's maximum, `max_nodes x gpus_per_node` of the ClusterHandle's pools
    (together, the pools' maxima, at most `maxGpus`)."""
    pods_ready_timeout_minutes: int = 20


def parse_queueing(r: ConfigReader) -> QueueSettings:
    mode = cast(KueueMode, r.one_of("kueue", ("install", "existing", "off")))
    quota = r.integer("kueueGpuQuota")
    if quota < 0:
        r.problem(
            "kueueGpuQuota",
            quota,
            "must be 0 (each GPU pool's maximum: maxNodes x GPUs per node) or more",
        )
    minutes = r.integer("kueuePodsReadyTimeoutMinutes")
    if not MIN_PODS_READY_MINUTES <= minutes <= 24 * 60:
        r.problem(
            "kueuePodsReadyTimeoutMinutes",
            minutes,
            f"must be between {MIN_PODS_READY_MINUTES} and 1440: the time every pod of an "
            "admitted Job has to start (a GPU node added, the image pulled) before Kueue "
            "suspends the Job and frees what it holds",
        )
    return QueueSettings(mode=mode, gpu_quota=max(quota, 0), pods_ready_timeout_minutes=minutes)


QUOTA_REQUIRED = (
    "required on a `cloud: kubernetes` stack without clusterStack while gpuinfra:kueue is not "
    "off: the GPUs the training queue may admit at once (this stack knows no GPU pools and "
    "their maxima); or set gpuinfra:kueue to off"
)


def resolve_quota(r: ConfigReader, queue: QueueSettings, *, pools_known: bool) -> QueueSettings:
    """`kueueGpuQuota` as given; 0 stays 0 (the GPU layer takes each pool's maximum off the
    ClusterHandle) where the handle has GPU pools (`pools_known`: a cloud stack, or a GPU-layer
    stack of a cluster stack). An existing cluster's handle knows none: there it is required."""
    if queue.mode != "off" and queue.gpu_quota == 0 and not pools_known:
        r.problem("kueueGpuQuota", 0, QUOTA_REQUIRED)
    return queue
