"""The contract between a provider stack and the cloud-agnostic Kubernetes layer.

Each provider stack ends in one `ClusterHandle`; `components/kubernetes/` consumes
only this and never imports a cloud SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import pulumi

from components.autoscaler_spec import AutoscalerSpec

GPU_NODE_LABEL = "gpuinfra.io/accelerator"
"""Node label carrying the GPU model (e.g. `A10G`); the GPU DaemonSets select on it."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


GPU_TAINT = Taint(key="nvidia.com/gpu", value="true", effect="NoSchedule")
"""Keeps pods that do not ask for a GPU off expensive GPU nodes."""


@dataclass(frozen=True)
class BucketRef:
    name: pulumi.Output[str]
    region: str
    endpoint: str
    """S3-compatible endpoint URL for clients that need one (OSS, COS, TOS); AWS's own for S3."""
    scheme: Literal["s3", "oss", "cosn", "tos"]

    @property
    def uri(self) -> pulumi.Output[str]:
        return self.name.apply(lambda name: f"{self.scheme}://{name}")


@dataclass(frozen=True)
class SpotReclaimNotice:
    """Where a spot node reads that its instance is about to be reclaimed (instance
    metadata), for clouds whose clusters do not drain such nodes themselves."""

    termination_time_url: str
    """Answers 404 (or nothing) until a reclaim is scheduled, then its time."""
    token_url: str = ""
    """Hardened metadata: PUT here first for a session token (empty: none needed)."""
    token_ttl_header: str = ""
    token_header: str = ""


@dataclass(frozen=True)
class ClusterHandle:
    cloud: str
    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str] | None
    """Secret. None: the Kubernetes provider's own configuration (existing clusters)."""
    gpu_node_labels: Mapping[str, str]
    """Labels every GPU node carries (includes `GPU_NODE_LABEL`)."""
    gpu_taint: Taint
    platform_runs_device_plugin: bool
    """True where the platform installs the NVIDIA device plugin itself (ACK)."""
    bucket: BucketRef
    training_namespace: str
    training_service_account: str
    service_account_annotations: Mapping[str, pulumi.Output[str]]
    """Annotations that give the training ServiceAccount access to the bucket."""
    training_namespace_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the training namespace needs for workload identity (ACK's RRSA webhook only
    injects credentials into namespaces labelled for it)."""
    autoscaler: AutoscalerSpec | None = None
    """A Cluster Autoscaler for the GPU layer to install (EKS). None: the platform scales its
    own node pools (ACK, TKE) or the cluster's owner does (existing clusters)."""
    spot_reclaim_notice: SpotReclaimNotice | None = None
    """Set where GPU nodes are spot and the platform does not drain them before a reclaim
    (ACK, TKE): the GPU layer then runs a drain agent on them. None: on-demand nodes, EKS
    (managed node groups drain spot nodes), or an existing cluster."""
