"""`cloud: kubernetes`: the GPU layer on a cluster this stack does not create.

Either an existing cluster described by the `existing*` keys and a kubeconfig (`build`), or a
gpuinfra cluster stack deployed with `gpuLayer: separate`, named by `clusterStack` and read
through a `pulumi.StackReference` (`build_from_cluster_stack`). The GPU layer itself is added
by `stacks.build_stack`, as for every other stack.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

import pulumi

from components.cluster_handle import (
    GPU_TAINT,
    BucketRef,
    ClusterHandle,
    HandleDocumentError,
    handle_from_document,
)
from components.deploy_from import deploy_from
from components.settings import Problem, Settings, SettingsError
from components.settings.datasets import PLATFORMS, DatasetPlatform, platform_problems
from components.settings.gpu_layer import Misfit, TrainingJobSettings, place_job

CLUSTER_HANDLE_OUTPUT = "clusterHandle"


def build(settings: Settings) -> ClusterHandle:
    existing = settings.existing_cluster
    if existing is None:
        raise ValueError("cloud kubernetes needs the existingCluster settings")
    bucket_uri = existing.bucket_uri or "s3://unset-existingBucketUri"
    scheme, _, rest = bucket_uri.partition("://")
    bucket = BucketRef(
        name=pulumi.Output.from_input(rest.rstrip("/")),
        region=existing.bucket_region,
        endpoint=existing.bucket_endpoint,
        scheme=cast(Literal["s3", "oss", "cosn"], scheme),  # checked in settings
    )
    handle = ClusterHandle(
        cloud="kubernetes",
        cluster_name=pulumi.Output.from_input(existing.cluster_name),
        kubeconfig=(
            pulumi.Output.secret(existing.kubeconfig) if existing.kubeconfig is not None else None
        ),
        gpu_node_labels=existing.gpu_node_labels,
        gpu_taint=GPU_TAINT,
        platform_runs_device_plugin=existing.platform_runs_device_plugin,
        bucket=bucket,
        training_namespace=settings.identity.namespace,
        training_service_account=settings.identity.service_account,
        service_account_annotations={
            key: pulumi.Output.from_input(value)
            for key, value in existing.service_account_annotations.items()
        },
        gpus_per_node=existing.gpus_per_node,
    )
    pulumi.export("cloud", "kubernetes")
    pulumi.export("clusterName", existing.cluster_name)
    pulumi.export("bucketUri", bucket.uri)
    # Scaling GPU nodes is the cluster owner's business here: nothing to autoscale.
    pulumi.export("gpuNodeScaling", "managed by the cluster's owner")
    return handle


def _datasets_fit(settings: Settings, handle: ClusterHandle) -> list[Problem]:
    """Datasets the cluster stack's platform cannot serve (settings knew only `kubernetes`)."""
    mount = handle.dataset_mount
    no_mount = PLATFORMS.get(handle.cloud, DatasetPlatform("", None, "")).no_mount
    return [
        Problem(f"gpuinfra:trainingJobs[{i}].{field}", value, allowed)
        for i, job in enumerate(settings.gpu_layer.training_jobs)
        if job.dataset is not None
        for field, value, allowed in platform_problems(
            job.dataset,
            scheme=handle.bucket.scheme,
            mount_driver=mount.driver if mount else None,
            no_mount=no_mount or f"the cluster stack ({handle.cloud}) has no dataset CSI driver",
        )
    ]


NO_POOLS_FOR_QUOTA = (
    "required: the cluster stack's clusterHandle lists no GPU pools (written by a gpuinfra "
    "version before several pools) to take the training queue's GPU quota from; run its "
    "`pulumi up` with this version first, or set the GPUs the queue may admit at once, or set "
    "gpuinfra:kueue to off"
)


def _jobs_fit(settings: Settings, handle: ClusterHandle) -> Settings:
    """The settings with each Job placed on one of the cluster stack's GPU pools.

    Jobs were checked against 1-16 GPUs per node and no pools; the cluster stack's handle knows
    its pools (or, written before several pools, one lot of GPU nodes of `gpus_per_node`)."""
    problems: list[Problem] = []
    placed: list[TrainingJobSettings] = []
    for i, job in enumerate(settings.gpu_layer.training_jobs):
        key = f"gpuinfra:trainingJobs[{i}]"
        if handle.gpu_pools:
            where = place_job(
                handle.gpu_pools,
                job=job.name,
                pool=job.pool,
                gpu_model=job.gpu_model,
                gpus_per_node=job.gpus_per_node,
            )
            if isinstance(where, Misfit):
                value = {"pool": job.pool, "gpuModel": job.gpu_model}.get(
                    where.field, job.gpus_per_node
                )
                problems.append(Problem(f"{key}.{where.field}", value, where.message))
            else:
                placed.append(dataclasses.replace(job, pool=where.name))
            continue
        for field, value in (("pool", job.pool), ("gpuModel", job.gpu_model)):
            if value is not None:
                problems.append(
                    Problem(
                        f"{key}.{field}",
                        value,
                        "the cluster stack's clusterHandle lists no GPU pools (written by a "
                        "gpuinfra version before several pools): run its `pulumi up` with this "
                        "version first, or remove it",
                    )
                )
        have = handle.gpus_per_node
        if have is not None and job.gpus_per_node > have:
            problems.append(
                Problem(
                    f"{key}.gpusPerNode",
                    job.gpus_per_node,
                    f"must be between 1 and {have} (a node of the cluster stack's GPU pool has "
                    f"{have} GPU{'s' * (have != 1)})",
                )
            )
        placed.append(job)
    problems += _datasets_fit(settings, handle)
    queue = settings.gpu_layer.queueing
    if queue.mode != "off" and queue.gpu_quota == 0 and not handle.gpu_pools:
        # Caught here, before any resource: the queue's quota defaults to the pools' maxima.
        problems.append(Problem("gpuinfra:kueueGpuQuota", 0, NO_POOLS_FOR_QUOTA))
    if problems:
        raise SettingsError(settings.stack, problems)
    layer = dataclasses.replace(settings.gpu_layer, training_jobs=tuple(placed))
    if handle.gpu_pools:
        # The idle-node alert spares the nodes the cluster stack's pools keep at their minima.
        kept = sum(p.min_nodes for p in handle.gpu_pools)
        layer = dataclasses.replace(
            layer, alerts=dataclasses.replace(layer.alerts, min_gpu_nodes=kept)
        )
    return dataclasses.replace(settings, gpu_layer=layer)


def handle_of(
    settings: Settings, cluster_stack: str, doc: Mapping[str, Any] | None
) -> ClusterHandle:
    """The cluster stack's handle, or an error that says what to do."""
    if doc is None:
        raise SettingsError(
            settings.stack,
            [
                Problem(
                    "gpuinfra:clusterStack",
                    cluster_stack,
                    f"that stack has no {CLUSTER_HANDLE_OUTPUT} output: set "
                    "gpuinfra:gpuLayer to separate on it and run its `pulumi up` first",
                )
            ],
        )
    try:
        handle = handle_from_document(doc)
    except (HandleDocumentError, KeyError, TypeError) as error:
        raise SettingsError(
            settings.stack,
            [Problem("gpuinfra:clusterStack", cluster_stack, f"unreadable clusterHandle: {error}")],
        ) from error
    return handle


def build_from_cluster_stack(
    settings: Settings,
    cluster_stack: str,
    deploy: Callable[[Settings, ClusterHandle], None],
) -> None:
    """Deploy the GPU layer onto `cluster_stack`'s cluster, from its `clusterHandle` output.

    The GPU layer's shape (which DaemonSets, their selectors, the Jobs' env) follows the
    handle, so it is built once the referenced output is known: in an `apply`, which Pulumi
    runs at preview too, because a StackReference's outputs are those of the referenced
    stack's last update.
    """
    reference = pulumi.StackReference(f"{settings.name_prefix}-cluster", stack_name=cluster_stack)
    document = reference.get_output(CLUSTER_HANDLE_OUTPUT)

    def build_layer(doc: Mapping[str, Any] | None) -> str:
        handle = handle_of(settings, cluster_stack, doc)
        deploy(_jobs_fit(settings, handle), handle)
        return deploy_from(settings, handle.api_access).sentence

    deploy_from_sentence = document.apply(build_layer)
    pulumi.export("cloud", "kubernetes")
    pulumi.export("clusterStack", cluster_stack)
    pulumi.export("deployFrom", pulumi.Output.unsecret(deploy_from_sentence))
    pulumi.export(
        "clusterName",
        pulumi.Output.unsecret(document.apply(lambda d: (d or {}).get("clusterName"))),
    )
    pulumi.export(
        "bucketUri",
        pulumi.Output.unsecret(
            document.apply(
                lambda d: f"{d['bucket']['scheme']}://{d['bucket']['name']}" if d else None
            )
        ),
    )
