"""What every cloud stack derives from the settings the same way: its tags, its GPU pools' views,
its bucket's protection, its training service account and the cloud-agnostic part of its
ClusterHandle. What differs per cloud stays in that cloud's stack module."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypedDict

import pulumi

from components.cluster_handle import (
    GPU_TAINT,
    ClusterHandle,
    GpuPool,
    Taint,
    common_labels,
    gpu_pool_of,
)
from components.settings import Settings
from components.tags import stack_tags


def tagger(settings: Settings) -> Callable[[str], dict[str, str]]:
    """The stack's tags for one component (`tags("network")`)."""
    return functools.partial(stack_tags, settings.stack)


def gpu_pool_views(settings: Settings) -> tuple[GpuPool, ...]:
    """The stack's GPU pools as the Kubernetes layer sees them, in settings order."""
    return tuple(gpu_pool_of(pool) for pool in settings.require_gpu_pools())


class BucketProtection(TypedDict):
    """The bucket arguments every cloud's bucket component takes alike."""

    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int
    tags: dict[str, str]


def bucket_protection(settings: Settings) -> BucketProtection:
    """Protection and lifecycle of the stack's bucket, from `storage`; the name is per cloud."""
    storage = settings.storage
    return BucketProtection(
        protect=storage.protect,
        noncurrent_version_expiration_days=storage.noncurrent_version_expiration_days,
        abort_incomplete_upload_days=storage.abort_incomplete_upload_days,
        tags=stack_tags(settings.stack, "storage"),
    )


class TrainingServiceAccount(TypedDict):
    """The arguments every cloud's training-role component takes alike."""

    namespace: str
    service_account: str
    tags: dict[str, str]


def training_service_account(settings: Settings) -> TrainingServiceAccount:
    """The Kubernetes service account the training role trusts, from `identity`."""
    return TrainingServiceAccount(
        namespace=settings.identity.namespace,
        service_account=settings.identity.service_account,
        tags=stack_tags(settings.stack, "identity"),
    )


class HandleBasics(TypedDict):
    """The ClusterHandle fields every cloud stack fills alike."""

    gpu_node_labels: dict[str, str]
    gpu_taint: Taint
    gpu_pools: tuple[GpuPool, ...]
    training_namespace: str
    training_service_account: str


def handle_basics(settings: Settings, pools: tuple[GpuPool, ...]) -> HandleBasics:
    """GPU nodes (labels, taint, pools) and the training service account of the handle."""
    return HandleBasics(
        gpu_node_labels=common_labels(pools),
        gpu_taint=GPU_TAINT,
        gpu_pools=pools,
        training_namespace=settings.identity.namespace,
        training_service_account=settings.identity.service_account,
    )


def export_cluster(settings: Settings, handle: ClusterHandle) -> None:
    """The first stack outputs of every cloud stack: cloud, region, cluster name."""
    pulumi.export("cloud", handle.cloud)
    pulumi.export("region", settings.region)
    pulumi.export("clusterName", handle.cluster_name)
