"""The contract between a provider stack and the cloud-agnostic Kubernetes layer.

Each provider stack ends in one `ClusterHandle`; `components/kubernetes/` consumes
only this and never imports a cloud SDK. With `gpuLayer: separate` the cluster stack exports
it serialised (`handle_document`, the stack output `clusterHandle`) and a `cloud: kubernetes`
stack rebuilds it (`handle_from_document`) from a `pulumi.StackReference`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import pulumi

from components.autoscaler_spec import AutoscalerSpec

if TYPE_CHECKING:
    from components.settings.model import GpuPoolSettings

HANDLE_VERSION = 2
"""Version of the serialised handle this program writes. 2 added `gpuPools` (issue 20): a
reader of version 1 only would place every Job on `gpuNodeLabels` without the pools' taints,
so it refuses a version-2 handle instead of leaving Jobs Pending."""
READABLE_VERSIONS = (1, 2)
"""A version-1 handle (one GPU pool, no `gpuPools`) still reads: its Jobs go where they went."""

GPU_NODE_LABEL = "gpuinfra.io/accelerator"
"""Node label carrying the GPU model (e.g. `A10G`); the GPU DaemonSets select on it."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


GPU_TAINT = Taint(key="nvidia.com/gpu", value="true", effect="NoSchedule")
"""Keeps pods that do not ask for a GPU off expensive GPU nodes."""

POOL_LABEL = "gpuinfra.io/pool"
"""Node label carrying the node's pool name (`system`, or a GPU pool's)."""
POOL_TAINT_KEY = POOL_LABEL
"""A `gpuPools` pool's own taint (`gpuinfra.io/pool=<pool>:NoSchedule`): only pods that chose
the pool land on it, so a Job meant for the small pool never starts an 8-GPU node."""
GPU_NODE_MARK = {"gpuinfra.io/gpu": "true"}
"""The label every node of a `gpuPools` pool carries: what the GPU layer's DaemonSets select
when the pools have different GPU models."""
CAPACITY_LABEL = "gpuinfra.io/capacity-type"
"""`spot` or `onDemand` on the nodes of a `gpuPools` pool: the drain agent selects spot ones."""


@dataclass(frozen=True)
class GpuPool:
    """One GPU node pool as the Kubernetes layer sees it: where a Job that chose it runs (and
    where a Kueue ResourceFlavor would point)."""

    name: str
    gpu_model: str
    gpus_per_node: int
    capacity_type: Literal["spot", "onDemand"]
    instance_types: tuple[str, ...]
    min_nodes: int
    max_nodes: int
    """The autoscaler's limit (after `maxGpus`)."""
    node_labels: Mapping[str, str]
    """Every label the stack gives the pool's nodes (cloud-specific ones aside)."""
    taints: tuple[Taint, ...]
    """Every taint the pool's nodes carry; a pod on them tolerates each."""

    @property
    def selector(self) -> dict[str, str]:
        """The node selector of a pod meant for this pool (the labels single-pool stacks'
        Jobs always selected on, so their Jobs stay as they are)."""
        return {GPU_NODE_LABEL: self.gpu_model, POOL_LABEL: self.name}


def gpu_pool_nodes(
    *,
    name: str,
    gpu_model: str,
    capacity_type: Literal["spot", "onDemand"],
    labels: Mapping[str, str],
    flat: bool,
) -> tuple[dict[str, str], tuple[Taint, ...]]:
    """(node labels, taints) of a GPU pool's nodes.

    `flat`: the one pool of the `gpuPool*` keys, whose nodes keep what single-pool stacks
    always gave them (model and pool labels, the GPU taint), so an update changes no node.
    A `gpuPools` pool's nodes also carry `GPU_NODE_MARK`, `CAPACITY_LABEL` and the pool's own
    taint."""
    node_labels = {**labels, GPU_NODE_LABEL: gpu_model, POOL_LABEL: name}
    if flat:
        return node_labels, (GPU_TAINT,)
    node_labels.update({**GPU_NODE_MARK, CAPACITY_LABEL: capacity_type})
    return node_labels, (GPU_TAINT, Taint(key=POOL_TAINT_KEY, value=name, effect="NoSchedule"))


def gpu_pool_of(pool: GpuPoolSettings) -> GpuPool:
    """The handle's view of a settings pool (its size already capped by `maxGpus`)."""
    labels, taints = gpu_pool_nodes(
        name=pool.name,
        gpu_model=pool.gpu_model,
        capacity_type=pool.capacity_type,
        labels=pool.labels,
        flat=pool.flat,
    )
    return GpuPool(
        name=pool.name,
        gpu_model=pool.gpu_model,
        gpus_per_node=pool.gpus_per_node,
        capacity_type=pool.capacity_type,
        instance_types=pool.instance_types,
        min_nodes=pool.size.min_nodes,
        max_nodes=pool.size.max_nodes,
        node_labels=labels,
        taints=taints,
    )


def common_labels(pools: Sequence[GpuPool]) -> dict[str, str]:
    """The labels every node of every one of `pools` carries: a node selector for all of
    them (a `gpuPools` pool's nodes share `GPU_NODE_MARK`; a spot pool's `CAPACITY_LABEL`)."""
    if not pools:
        return {}
    first, *rest = pools
    return {
        key: value
        for key, value in first.node_labels.items()
        if all(p.node_labels.get(key) == value for p in rest)
    }


def tolerated(taints: Sequence[Taint]) -> tuple[Taint, ...]:
    """`taints` with one per key and effect (a toleration is by key and effect)."""
    seen: dict[tuple[str, str], Taint] = {}
    for taint in taints:
        seen.setdefault((taint.key, taint.effect), taint)
    return tuple(seen.values())


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
    """GPUs on one node of the GPU pool, where the stack knows it and there is one kind (an
    existing cluster); with `gpu_pools`, each pool says its own."""
    gpu_pools: tuple[GpuPool, ...] = ()
    """The stack's GPU pools (cloud stacks); empty: GPU nodes are `gpu_node_labels`' (an
    existing cluster, or a cluster stack of a gpuinfra version before several pools)."""
    dataset_mount: DatasetMount | None = None
    """Where training Jobs may mount a dataset (`access: mount`); None: stage or stream only."""
    nodes: Sequence[pulumi.Resource] = ()
    """Node pools the GPU layer waits for (same `pulumi up` only): pulumi-kubernetes awaits a
    Deployment until its pods are ready, which needs a node to run them. Not serialised: in a
    separate GPU-layer stack the cluster stack's pools exist already."""

    def pool(self, name: str) -> GpuPool | None:
        return next((p for p in self.gpu_pools if p.name == name), None)

    def gpu_node_taints(self) -> tuple[Taint, ...]:
        """The taints of every GPU node, one per key and effect: what a pod that must run on
        every GPU node (the GPU layer's DaemonSets) tolerates."""
        return tolerated([self.gpu_taint, *(t for p in self.gpu_pools for t in p.taints)])

    def spot_pools(self) -> tuple[GpuPool, ...]:
        return tuple(p for p in self.gpu_pools if p.capacity_type == "spot")

    def spot_node_labels(self) -> dict[str, str]:
        """A node selector for the spot GPU nodes (all GPU nodes where no pools are known)."""
        spot = self.spot_pools()
        return common_labels(spot) if spot else dict(self.gpu_node_labels)

    def spot_node_taints(self) -> tuple[Taint, ...]:
        spot = self.spot_pools()
        if not spot:
            return self.gpu_node_taints()
        return tolerated([self.gpu_taint, *(t for p in spot for t in p.taints)])


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
        "gpuTaint": _taint_document(handle.gpu_taint),
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
        "gpuPools": [
            {
                "name": p.name,
                "gpuModel": p.gpu_model,
                "gpusPerNode": p.gpus_per_node,
                "capacityType": p.capacity_type,
                "instanceTypes": list(p.instance_types),
                "minNodes": p.min_nodes,
                "maxNodes": p.max_nodes,
                "nodeLabels": dict(p.node_labels),
                "taints": [_taint_document(t) for t in p.taints],
            }
            for p in handle.gpu_pools
        ],
        "datasetMount": (
            None
            if handle.dataset_mount is None
            else {
                "driver": handle.dataset_mount.driver,
                "attributes": dict(known["mount_attributes"]),
            }
        ),
    }


def _taint_document(taint: Taint) -> dict[str, str]:
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


def _taint(doc: Mapping[str, Any]) -> Taint:
    return Taint(key=str(doc["key"]), value=str(doc["value"]), effect=doc["effect"])


def _pool(doc: Mapping[str, Any]) -> GpuPool:
    return GpuPool(
        name=str(doc["name"]),
        gpu_model=str(doc["gpuModel"]),
        gpus_per_node=int(doc["gpusPerNode"]),
        capacity_type=doc["capacityType"],
        instance_types=tuple(str(t) for t in doc["instanceTypes"]),
        min_nodes=int(doc["minNodes"]),
        max_nodes=int(doc["maxNodes"]),
        node_labels={str(k): str(v) for k, v in dict(doc["nodeLabels"]).items()},
        taints=tuple(_taint(t) for t in doc["taints"]),
    )


class HandleDocumentError(ValueError):
    """A `clusterHandle` output this program cannot read (missing, or another version)."""


def handle_from_document(doc: Mapping[str, Any]) -> ClusterHandle:
    """The `ClusterHandle` a cluster stack exported (`handle_document`); kubeconfig secret."""
    if doc.get("version") not in READABLE_VERSIONS:
        raise HandleDocumentError(
            f"clusterHandle version {doc.get('version')!r}; this program reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}: run the same gpuinfra version on both "
            "stacks"
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
        gpu_taint=_taint(taint),
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
        # Absent in a handle written before several pools: its GPU nodes are gpuNodeLabels'.
        gpu_pools=tuple(_pool(p) for p in doc.get("gpuPools") or ()),
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
