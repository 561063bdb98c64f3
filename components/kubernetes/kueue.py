"""Kueue: training Jobs wait in a queue until all of their GPUs are free, then start whole.

Two components:
- `KueueInstall`: the pinned release's objects (kueue_release.py) as Pulumi resources, CRDs
  first; the controller runs on the system pool.
- `TrainingQueue`: a ResourceFlavor per GPU pool (its node labels and taints), one
  ClusterQueue with the GPU quota, a LocalQueue in the training namespace, and on clusters
  whose autoscaler gpuinfra runs (EKS) a ProvisioningRequest admission check, so the
  autoscaler adds a Job's nodes all at once or not at all.

A Job joins the queue by its `kueue.x-k8s.io/queue-name` label and is created suspended;
Kueue unsuspends it once the quota (and the admission check) admit every pod of it. Its
priority is its pods' PriorityClass (Kueue v0.19.2 pkg/util/priority/priority.go:91), so the
training PriorityClass orders the queue as it orders the scheduler.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import ClusterHandle, Taint
from components.settings.errors import Problem, SettingsError
from components.settings.gpu_layer import TrainingJobSettings, quantity_bytes
from components.settings.queueing import QueueSettings

from .kueue_release import KUEUE_API, adapted_objects
from .labels import app_labels

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
LOCAL_QUEUE = "training"
CLUSTER_QUEUE = "gpuinfra-training"
GPU_RESOURCE = "nvidia.com/gpu"
PROVISIONING_CHECK = "gpuinfra-provisioning"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""kueue v0.19.2 apis/kueue/v1beta2/provisioningrequestconfig_types.go:29."""
ATOMIC_SCALE_UP = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
"""kubernetes/autoscaler cluster-autoscaler-1.31.2 cluster-autoscaler/apis/
provisioningrequest/autoscaling.x-k8s.io/v1/types.go:203: the autoscaler adds the nodes of
every pod of the request in one scale-up, or none."""
CPU_PER_GPU = 32.0
MEMORY_PER_GPU_GI = 256.0
"""CPU and memory the queue admits per GPU of its quota, unless a configured Job asks for more
per GPU: Kueue admits only requests its ClusterQueue covers, so CPU and memory are covered
too, generously; GPUs are what the queue rations."""


@dataclass(frozen=True)
class QueuePool:
    """A GPU pool as Kueue sees it: a ResourceFlavor."""

    name: str
    node_labels: Mapping[str, str]
    """What the pool's Jobs select (and Kueue puts into an admitted pod's nodeSelector)."""
    taints: tuple[Taint, ...]
    gpus_per_node: int | None
    max_gpus: int | None = None
    """The pool's GPU maximum where the handle knows it (None: it does not)."""


def queue_pools(handle: ClusterHandle) -> list[QueuePool]:
    """A flavor per `handle.gpu_pools` pool; the handle's single GPU node labels and taint
    where it has no pools (an existing cluster, or a cluster stack of a gpuinfra before pools).

    A flavor's node labels are its pool's `selector`, the node selector its Jobs carry
    (`job_nodes`), not every label of the pool's nodes:
    - Kueue picks a flavor only where the pod's nodeSelector agrees with the flavor's
      nodeLabels on the flavor's keys (kueue v0.19.2 pkg/scheduler/flavorassigner/
      flavorassigner.go:1227,1246-1254, `checkFlavorForPodSets`): a Job pinned to a pool
      selects its pool label and so fits that pool's flavor only.
    - On admission Kueue copies the flavor's nodeLabels into the Job's pod template
      (pkg/podset/podset.go:87): labels the Job already selects change nothing in it, so
      what Pulumi reads back of an admitted Job is what it wrote.
    - At most 8 nodeLabels (apis/kueue/v1beta2/resourceflavor_types.go:62-65); a pool's own
      labels could be more."""
    if not handle.gpu_pools:
        return [
            QueuePool(
                name="gpu",
                node_labels=dict(handle.gpu_node_labels),
                taints=(handle.gpu_taint,),
                gpus_per_node=handle.gpus_per_node,
            )
        ]
    return [
        QueuePool(
            name=pool.name,
            node_labels=pool.selector,
            taints=pool.taints,
            gpus_per_node=pool.gpus_per_node,
            max_gpus=pool.max_nodes * pool.gpus_per_node,
        )
        for pool in handle.gpu_pools
    ]


QUOTA_UNKNOWN = (
    "required here: the cluster's handle lists no GPU pools to take the queue's quota from (an "
    "existing cluster, or a cluster stack deployed by a gpuinfra before several pools); set "
    "the GPUs the training queue may admit at once, or gpuinfra:kueue to off"
)


def flavor_gpu_quota(queue: QueueSettings, pool: QueuePool) -> int:
    """The GPUs the queue admits on one pool: `kueueGpuQuota` where set, at most what the pool
    can hold; else the pool's maximum (so the flavors together admit the pools' maxima, what
    the autoscalers may reach under `maxGpus`). Kueue quotas are per flavor: a Job runs on
    one pool, and one beyond its pool's maximum would be admitted and never scheduled."""
    if queue.gpu_quota > 0:
        return queue.gpu_quota if pool.max_gpus is None else min(queue.gpu_quota, pool.max_gpus)
    if pool.max_gpus is not None:
        return pool.max_gpus
    raise SettingsError(pulumi.get_stack(), [Problem("gpuinfra:kueueGpuQuota", 0, QUOTA_UNKNOWN)])


def gpu_quota(queue: QueueSettings, pools: Sequence[QueuePool]) -> int:
    """The GPUs the queue admits on all pools together (the flavors' quotas summed)."""
    return sum(flavor_gpu_quota(queue, pool) for pool in pools)


def flavor_name(pool: QueuePool) -> str:
    return f"gpuinfra-{pool.name}"


def per_gpu(jobs: Sequence[TrainingJobSettings]) -> tuple[float, float]:
    """(CPU, memory GiB) per GPU the ClusterQueue covers: the most any configured Job asks
    per GPU, at least `CPU_PER_GPU` and `MEMORY_PER_GPU_GI`. Then every set of Jobs that fits
    the GPU quota fits the CPU and memory quota as well."""
    cpu, memory = CPU_PER_GPU, MEMORY_PER_GPU_GI
    for job in jobs:
        cpu = max(cpu, (quantity_bytes(job.cpu) or 0) / job.gpus_per_node)
        memory = max(memory, (quantity_bytes(job.memory) or 0) / 2**30 / job.gpus_per_node)
    return cpu, memory


def cluster_queue_spec(
    pools: Sequence[QueuePool],
    queue: QueueSettings,
    *,
    namespace: str,
    jobs: Sequence[TrainingJobSettings],
    provisioning: bool,
) -> dict[str, Any]:
    """The ClusterQueue: one resource group, every flavor (pool) in it with its own quota of
    every covered resource (Kueue requires each flavor of a group to list all of the group's
    resources, in order: apis/kueue/v1beta2/clusterqueue_types.go:254,271-272)."""
    cpu, memory = per_gpu(jobs)

    def quotas(gpus: int) -> list[dict[str, str]]:
        return [
            {"name": "cpu", "nominalQuota": str(math.ceil(cpu * gpus))},
            {"name": "memory", "nominalQuota": f"{math.ceil(memory * gpus)}Gi"},
            {"name": GPU_RESOURCE, "nominalQuota": str(gpus)},
        ]

    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        # A Job that does not fit yet does not block smaller ones behind it.
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", GPU_RESOURCE],
                "flavors": [
                    {
                        "name": flavor_name(pool),
                        "resources": quotas(flavor_gpu_quota(queue, pool)),
                    }
                    for pool in pools
                ],
            }
        ],
    }
    if provisioning:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": PROVISIONING_CHECK}]}
    return spec


def flavor_spec(pool: QueuePool) -> dict[str, Any]:
    return {
        "nodeLabels": dict(pool.node_labels),
        "nodeTaints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints],
    }


_TOP_LEVEL = {
    "metadata": "metadata",
    "spec": "spec",
    "data": "data",
    "rules": "rules",
    "aggregationRule": "aggregation_rule",
    "roleRef": "role_ref",
    "subjects": "subjects",
    "webhooks": "webhooks",
}
_MODULES = {
    "v1": k8s.core.v1,
    "apps/v1": k8s.apps.v1,
    "rbac.authorization.k8s.io/v1": k8s.rbac.v1,
    "apiextensions.k8s.io/v1": k8s.apiextensions.v1,
    "admissionregistration.k8s.io/v1": k8s.admissionregistration.v1,
    "apiregistration.k8s.io/v1": k8s.apiregistration.v1,
}


def _resource(
    name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    """The SDK's typed resource for a manifest object (its type token and secret handling)."""
    cls = getattr(_MODULES[obj["apiVersion"]], obj["kind"])
    fields = {_TOP_LEVEL[k]: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    resource: pulumi.CustomResource = cls(name, opts=opts, **fields)
    return resource


@dataclass(frozen=True)
class KueueInstallArgs:
    queue: QueueSettings
    unmanaged_namespaces: Sequence[str]
    """Namespaces whose pods Kueue's webhooks must leave alone (the GPU layer's own)."""
    gpu_node_labels: Mapping[str, str]
    """Labels every GPU node carries: the controller stays off such nodes."""
    after: Sequence[pulumi.Resource] = ()
    """The ProvisioningRequest CRD where the autoscaler serves them: Kueue v0.19.2 sets up its
    ProvisioningRequest controller only if the API serves them when it starts
    (cmd/kueue/main.go:513-516), so it must start after that CRD."""


class KueueInstall(pulumi.ComponentResource):
    """Kueue's release objects. `ready`: what a custom resource or a queued Job must wait for
    (the CRDs, and the controller whose webhooks admit them)."""

    ready: list[pulumi.Resource]

    def __init__(
        self, name: str, args: KueueInstallArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:KueueInstall", name, None, opts)
        objects = adapted_objects(
            pods_ready_timeout_minutes=args.queue.pods_ready_timeout_minutes,
            unmanaged_namespaces=args.unmanaged_namespaces,
            gpu_node_labels=args.gpu_node_labels,
        )
        first: list[pulumi.Resource] = list(args.after)
        self.ready = []
        for obj in objects:
            kind, meta = obj["kind"], obj["metadata"]
            resource_name = f"{name}-kueue-{kind.lower()}-{meta['name']}"
            if kind in ("CustomResourceDefinition", "Namespace"):
                resource = _resource(
                    resource_name,
                    obj,
                    pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
                )
                first.append(resource)
                self.ready.append(resource)
                continue
            resource = _resource(
                resource_name, obj, pulumi.ResourceOptions(parent=self, depends_on=list(first))
            )
            if kind in (
                "Deployment",
                "MutatingWebhookConfiguration",
                "ValidatingWebhookConfiguration",
            ):
                self.ready.append(resource)
        self.register_outputs({})


@dataclass(frozen=True)
class TrainingQueueArgs:
    pools: Sequence[QueuePool]
    queue: QueueSettings
    namespace: str
    jobs: Sequence[TrainingJobSettings]
    provisioning: bool
    """Add the ProvisioningRequest admission check (a cluster autoscaler that serves them)."""
    after: Sequence[pulumi.Resource]
    """The Kueue install (CRDs, controller) and the training namespace."""


class TrainingQueue(pulumi.ComponentResource):
    local_queue: pulumi.Resource

    def __init__(
        self, name: str, args: TrainingQueueArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:TrainingQueue", name, None, opts)
        labels = app_labels(CLUSTER_QUEUE, "queue")

        def custom(resource: str, kind: str, obj_name: str, spec: Any, **extra: Any) -> Any:
            return k8s.apiextensions.CustomResource(
                f"{name}-{resource}",
                api_version=KUEUE_API,
                kind=kind,
                metadata={"name": obj_name, "labels": labels, **extra},
                spec=spec,
                # Each waits for the ones before it: the queue for its flavors and check.
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.after, *made]),
            )

        made: list[pulumi.Resource] = []
        for pool in args.pools:
            made.append(
                custom(
                    f"flavor-{pool.name}", "ResourceFlavor", flavor_name(pool), flavor_spec(pool)
                )
            )
        if args.provisioning:
            config = custom(
                "provisioning-config",
                "ProvisioningRequestConfig",
                PROVISIONING_CHECK,
                {"provisioningClassName": ATOMIC_SCALE_UP, "managedResources": [GPU_RESOURCE]},
            )
            made.append(config)
            made.append(
                custom(
                    "provisioning-check",
                    "AdmissionCheck",
                    PROVISIONING_CHECK,
                    {
                        "controllerName": PROVISIONING_CONTROLLER,
                        "parameters": {
                            "apiGroup": "kueue.x-k8s.io",
                            "kind": "ProvisioningRequestConfig",
                            "name": PROVISIONING_CHECK,
                        },
                    },
                )
            )
        cluster_queue = custom(
            "cluster-queue",
            "ClusterQueue",
            CLUSTER_QUEUE,
            cluster_queue_spec(
                args.pools,
                args.queue,
                namespace=args.namespace,
                jobs=args.jobs,
                provisioning=args.provisioning,
            ),
        )
        made.append(cluster_queue)
        self.local_queue = custom(
            "local-queue",
            "LocalQueue",
            LOCAL_QUEUE,
            {"clusterQueue": CLUSTER_QUEUE},
            namespace=args.namespace,
        )
        self.register_outputs({})
