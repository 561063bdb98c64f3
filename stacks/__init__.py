"""One module per provider; each composes that provider's components into a ClusterHandle."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import pulumi

from components.cluster_handle import ClusterHandle, GpuPool, handle_document
from components.deploy_from import api_access, deploy_from
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


def gpu_pools_output(pools: Sequence[GpuPool]) -> dict[str, dict[str, object]]:
    """The `gpuPools` stack output: per pool, what it runs and how far it scales."""
    return {
        pool.name: {
            "instanceTypes": list(pool.instance_types),
            "gpus": f"{pool.gpus_per_node} x {pool.gpu_model}",
            "capacityType": pool.capacity_type,
            "nodes": f"{pool.min_nodes} to {pool.max_nodes}",
            "nodeSelector": pool.selector,
            "taints": [f"{t.key}={t.value}:{t.effect}" for t in pool.taints],
        }
        for pool in pools
    }


def deploy_gpu_layer(settings: Settings, handle: ClusterHandle) -> None:
    """The GPU layer (device plugin, DCGM exporter, training Jobs) on `handle`'s cluster."""
    from components.kubernetes.gpu_layer import GpuLayer, GpuLayerArgs

    GpuLayer(settings.name_prefix, GpuLayerArgs(handle=handle, settings=settings.gpu_layer))


def build_stack(settings: Settings) -> ClusterHandle | None:
    """The provider's resources, then the GPU layer on the cluster they end in.

    `gpuLayer: separate`: no Kubernetes object here; the handle is exported (secret, it holds
    the kubeconfig) for the `cloud: kubernetes` stack that deploys the layer. That stack
    (`clusterStack`) gets its handle from a StackReference, so it returns None: the layer is
    built once the referenced outputs arrive.
    """
    existing = settings.existing_cluster
    if existing is not None and existing.cluster_stack is not None:
        from stacks import kubernetes

        kubernetes.build_from_cluster_stack(settings, existing.cluster_stack, deploy_gpu_layer)
        return None
    handle = BUILDERS[settings.cloud](settings)
    if existing is None:  # a cloud stack: from where its endpoint answers, its GPU pools
        pools = settings.require_gpu_pools()
        handle = dataclasses.replace(
            handle,
            api_access=api_access(settings),
            gpus_per_node=max(pool.gpus_per_node for pool in pools),
        )
        pulumi.export("gpuInstanceType", pools[0].instance.instance_type)
        pulumi.export("gpuPools", gpu_pools_output(handle.gpu_pools))
    pulumi.export("deployFrom", deploy_from(settings).sentence)
    if settings.gpu_layer.mode == "separate":
        pulumi.export("clusterHandle", pulumi.Output.secret(handle_document(handle)))
    else:
        deploy_gpu_layer(settings, handle)
    return handle
