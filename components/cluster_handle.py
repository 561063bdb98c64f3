"""The contract between a provider stack and the cloud-agnostic Kubernetes layer.

Each provider stack ends in one `ClusterHandle`; `components/kubernetes/` consumes
only this and never imports a cloud SDK. With `gpuLayer: separate` the cluster stack exports
it serialised (`handle_document`, the stack output `clusterHandle`) and a `cloud: kubernetes`
stack rebuilds it (`handle_from_document`) from a `pulumi.StackReference`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import pulumi

from components.autoscaler_spec import AutoscalerSpec

HANDLE_VERSION = 1
"""Version of the serialised handle; a reader refuses documents of another version."""

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


MOUNTPOINT_S3_DRIVER = "s3.csi.aws.com"
"""Mountpoint for Amazon S3 CSI driver (awslabs/mountpoint-s3-csi-driver@v2.7.0)."""
OSSFS_DRIVER = "ossplugin.csi.alibabacloud.com"
"""ACK's OSS CSI driver, `csi-plugin` (kubernetes-sigs/alibaba-cloud-csi-driver@v1.37.1)."""


@dataclass(frozen=True)
class DatasetMount:
    """The platform's object-storage CSI driver that mounts the stack's bucket read-only with
    an identity of its own (no static keys); the GPU layer writes one static PV per dataset
    in that driver's format (components/kubernetes/datasets.py)."""

    driver: str
    """The CSI driver's name (`s3.csi.aws.com`, `ossplugin.csi.alibabacloud.com`)."""
    attributes: Mapping[str, pulumi.Output[str]] = field(default_factory=dict)
    """Platform values every such PV carries (ACK: the RAM role its ossfs pods assume)."""
    ready: Sequence[pulumi.Resource] = ()
    """What a pod mounting it waits for in the same `pulumi up` (the EKS add-on). Not
    serialised: a separate GPU-layer stack runs after the cluster stack made them."""


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
class ApiAccess:
    """From where the cluster's API endpoint answers: what `deployFrom` is made of."""

    public: bool
    """True: a public endpoint that admits only `admin_cidrs`. False: private, VPC only."""
    admin_cidrs: tuple[str, ...]
    vpc_cidr: str


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
    api_access: ApiAccess | None = None
    """From where the API endpoint answers (cloud stacks). None: unknown (an existing
    cluster reached through a kubeconfig)."""
    gpus_per_node: int | None = None
    """GPUs on one node of the GPU pool, where the stack knows it."""
    dataset_mount: DatasetMount | None = None
    """Where training Jobs may mount a dataset (`access: mount`); None: stage or stream only."""
    nodes: Sequence[pulumi.Resource] = ()
    """Node pools the GPU layer waits for (same `pulumi up` only): pulumi-kubernetes awaits a
    Deployment until its pods are ready, which needs a node to run them. Not serialised: in a
    separate GPU-layer stack the cluster stack's pools exist already."""


def handle_document(handle: ClusterHandle) -> pulumi.Output[dict[str, Any]]:
    """The handle as plain data (camelCase keys) once its outputs are known; holds the
    kubeconfig, so export it as a secret."""
    annotations = dict(handle.service_account_annotations)
    autoscaler = handle.autoscaler
    scaler_annotations = dict(autoscaler.service_account_annotations) if autoscaler else {}
    mount = handle.dataset_mount
    mount_attributes = dict(mount.attributes) if mount else {}
    return pulumi.Output.all(
        cluster_name=handle.cluster_name,
        kubeconfig=handle.kubeconfig,
        bucket_name=handle.bucket.name,
        annotations=pulumi.Output.all(**annotations) if annotations else {},
        scaler_annotations=(pulumi.Output.all(**scaler_annotations) if scaler_annotations else {}),
        mount_attributes=(pulumi.Output.all(**mount_attributes) if mount_attributes else {}),
    ).apply(lambda known: _document(handle, known))


def _document(handle: ClusterHandle, known: Mapping[str, Any]) -> dict[str, Any]:
    notice = handle.spot_reclaim_notice
    autoscaler = handle.autoscaler
    access = handle.api_access
    return {
        "version": HANDLE_VERSION,
        "cloud": handle.cloud,
        "clusterName": known["cluster_name"],
        "kubeconfig": known["kubeconfig"],
        "gpuNodeLabels": dict(handle.gpu_node_labels),
        "gpuTaint": {
            "key": handle.gpu_taint.key,
            "value": handle.gpu_taint.value,
            "effect": handle.gpu_taint.effect,
        },
        "platformRunsDevicePlugin": handle.platform_runs_device_plugin,
        "bucket": {
            "name": known["bucket_name"],
            "region": handle.bucket.region,
            "endpoint": handle.bucket.endpoint,
            "scheme": handle.bucket.scheme,
        },
        "trainingNamespace": handle.training_namespace,
        "trainingServiceAccount": handle.training_service_account,
        "serviceAccountAnnotations": dict(known["annotations"]),
        "trainingNamespaceLabels": dict(handle.training_namespace_labels),
        "autoscaler": (
            None
            if autoscaler is None
            else {
                "image": autoscaler.image,
                "args": list(autoscaler.args),
                "serviceAccountAnnotations": dict(known["scaler_annotations"]),
                "env": dict(autoscaler.env),
            }
        ),
        "spotReclaimNotice": (
            None
            if notice is None
            else {
                "terminationTimeUrl": notice.termination_time_url,
                "tokenUrl": notice.token_url,
                "tokenTtlHeader": notice.token_ttl_header,
                "tokenHeader": notice.token_header,
            }
        ),
        "apiAccess": (
            None
            if access is None
            else {
                "public": access.public,
                "adminCidrs": list(access.admin_cidrs),
                "vpcCidr": access.vpc_cidr,
            }
        ),
        "gpusPerNode": handle.gpus_per_node,
        "datasetMount": (
            None
            if handle.dataset_mount is None
            else {
                "driver": handle.dataset_mount.driver,
                "attributes": dict(known["mount_attributes"]),
            }
        ),
    }


class HandleDocumentError(ValueError):
    """A `clusterHandle` output this program cannot read (missing, or another version)."""


def handle_from_document(doc: Mapping[str, Any]) -> ClusterHandle:
    """The `ClusterHandle` a cluster stack exported (`handle_document`); kubeconfig secret."""
    if doc.get("version") != HANDLE_VERSION:
        raise HandleDocumentError(
            f"clusterHandle version {doc.get('version')!r}; this program reads version "
            f"{HANDLE_VERSION}: run the same gpuinfra version on both stacks"
        )
    taint = doc["gpuTaint"]
    bucket = doc["bucket"]
    scaler = doc.get("autoscaler")
    notice = doc.get("spotReclaimNotice")
    access = doc.get("apiAccess")
    mount = doc.get("datasetMount")  # absent in documents of gpuinfra before datasets
    return ClusterHandle(
        cloud=str(doc["cloud"]),
        cluster_name=pulumi.Output.from_input(str(doc["clusterName"])),
        kubeconfig=pulumi.Output.secret(str(doc["kubeconfig"])),
        gpu_node_labels=dict(doc["gpuNodeLabels"]),
        gpu_taint=Taint(key=taint["key"], value=taint["value"], effect=taint["effect"]),
        platform_runs_device_plugin=bool(doc["platformRunsDevicePlugin"]),
        bucket=BucketRef(
            name=pulumi.Output.from_input(str(bucket["name"])),
            region=str(bucket["region"]),
            endpoint=str(bucket["endpoint"]),
            scheme=cast(Literal["s3", "oss", "cosn", "tos"], bucket["scheme"]),
        ),
        training_namespace=str(doc["trainingNamespace"]),
        training_service_account=str(doc["trainingServiceAccount"]),
        service_account_annotations={
            k: pulumi.Output.from_input(str(v))
            for k, v in dict(doc["serviceAccountAnnotations"]).items()
        },
        training_namespace_labels=dict(doc.get("trainingNamespaceLabels") or {}),
        autoscaler=(
            None
            if scaler is None
            else AutoscalerSpec(
                image=str(scaler["image"]),
                args=tuple(scaler["args"]),
                service_account_annotations={
                    k: pulumi.Output.from_input(str(v))
                    for k, v in dict(scaler["serviceAccountAnnotations"]).items()
                },
                env=dict(scaler.get("env") or {}),
            )
        ),
        spot_reclaim_notice=(
            None
            if notice is None
            else SpotReclaimNotice(
                termination_time_url=notice["terminationTimeUrl"],
                token_url=notice.get("tokenUrl", ""),
                token_ttl_header=notice.get("tokenTtlHeader", ""),
                token_header=notice.get("tokenHeader", ""),
            )
        ),
        api_access=(
            None
            if access is None
            else ApiAccess(
                public=bool(access["public"]),
                admin_cidrs=tuple(access["adminCidrs"]),
                vpc_cidr=str(access["vpcCidr"]),
            )
        ),
        gpus_per_node=doc.get("gpusPerNode"),
        dataset_mount=(
            None
            if mount is None
            else DatasetMount(
                driver=str(mount["driver"]),
                attributes={
                    k: pulumi.Output.from_input(str(v))
                    for k, v in dict(mount.get("attributes") or {}).items()
                },
            )
        ),
    )
