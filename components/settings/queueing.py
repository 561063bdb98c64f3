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
    """GPUs the training queue may admit at once; 0 until resolved (`resolve_quota`)."""
    pods_ready_timeout_minutes: int = 20


def parse_queueing(r: ConfigReader) -> QueueSettings:
    mode = cast(KueueMode, r.one_of("kueue", ("install", "existing", "off")))
    quota = r.integer("kueueGpuQuota")
    if quota < 0:
        r.problem("kueueGpuQuota", quota, "must be 0 (the stack's maxGpus) or more")
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
    "required on a `cloud: kubernetes` stack while gpuinfra:kueue is not off: the GPUs the "
    "training queue may admit at once (this stack knows no maxGpus); or set gpuinfra:kueue to off"
)


def resolve_quota(
    r: ConfigReader, queue: QueueSettings, max_gpus: int | None, *, cluster_stack: bool = False
) -> QueueSettings:
    """`kueueGpuQuota`, or the stack's `maxGpus` when 0. A stack that deploys onto a cluster
    it did not create (`cloud: kubernetes`) knows no maxGpus: there the key is required,
    except where a cluster stack's handle may know its pools' (left 0: the GPU layer decides)."""
    if queue.mode == "off" or queue.gpu_quota > 0:
        return queue
    if max_gpus is None and cluster_stack:
        return queue
    if max_gpus is None:
        r.problem("kueueGpuQuota", 0, QUOTA_REQUIRED)
        return queue
    return QueueSettings(queue.mode, max_gpus, queue.pods_ready_timeout_minutes)
