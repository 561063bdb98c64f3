"""One module per provider; each composes that provider's components into a ClusterHandle."""

from __future__ import annotations

from collections.abc import Callable

from components.cluster_handle import ClusterHandle
from components.settings import Settings


def _aws(settings: Settings) -> ClusterHandle:
    from stacks import aws  # imported on demand: each provider SDK costs seconds to load

    return aws.build(settings)


def _alicloud(settings: Settings) -> ClusterHandle:
    from stacks import alicloud

    return alicloud.build(settings)


def _tencentcloud(settings: Settings) -> ClusterHandle:
    from stacks import tencentcloud

    return tencentcloud.build(settings)


def _volcengine(settings: Settings) -> ClusterHandle:
    from stacks import volcengine

    return volcengine.build(settings)


def _existing_cluster(settings: Settings) -> ClusterHandle:
    from stacks import kubernetes

    return kubernetes.build(settings)


BUILDERS: dict[str, Callable[[Settings], ClusterHandle]] = {
    "aws": _aws,
    "alicloud": _alicloud,
    "tencentcloud": _tencentcloud,
    "volcengine": _volcengine,
    "kubernetes": _existing_cluster,
}


def build_stack(settings: Settings) -> ClusterHandle:
    """The provider's resources, then the GPU layer on the cluster they end in."""
    from components.kubernetes.gpu_layer import GpuLayer, GpuLayerArgs

    handle = BUILDERS[settings.cloud](settings)
    GpuLayer(settings.name_prefix, GpuLayerArgs(handle=handle, settings=settings.gpu_layer))
    return handle
