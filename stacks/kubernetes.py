"""Bring-your-own-cluster stack: no cloud resources, only a ClusterHandle from config.

The GPU layer (device plugin, DCGM exporter, training Jobs) is added by `build_stack`, as
for every other stack.
"""

from __future__ import annotations

import pulumi

from components.cluster_handle import GPU_TAINT, BucketRef, ClusterHandle
from components.settings import Settings


def build(settings: Settings) -> ClusterHandle:
    existing = settings.existing_cluster
    if existing is None:
        raise ValueError("cloud kubernetes needs the existingCluster settings")
    bucket_uri = existing.bucket_uri or "s3://unset-existingBucketUri"
    scheme, _, rest = bucket_uri.partition("://")
    bucket = BucketRef(
        name=pulumi.Output.from_input(rest.rstrip("/")),
        region="",
        endpoint=existing.bucket_endpoint,
        scheme=scheme,  # type: ignore[arg-type]  # checked against BUCKET_SCHEMES in settings
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
    )
    pulumi.export("cloud", "kubernetes")
    pulumi.export("clusterName", existing.cluster_name)
    pulumi.export("bucketUri", bucket.uri)
    # Scaling GPU nodes is the cluster owner's business here: nothing to autoscale.
    pulumi.export("gpuNodeScaling", "managed by the cluster's owner")
    return handle
