"""The training queue a stack gets (Kueue, issue 19), read from its plan: the GPU quota, which
training Jobs fit it and together, and what each Job waits for before it starts.

Kueue admits a Job whole: every pod's GPUs within the ClusterQueue's quota of one flavor
(a GPU pool), and, where the queue has the ProvisioningRequest admission check, once the
autoscaler has added all of the Job's nodes at once. Until then the Job stays suspended and
holds nothing. Jobs are taken in order (here: the plan's, by name); one that does not fit
next to those before it waits for them to finish, while smaller ones may pass it
(BestEffortFIFO).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .planview import StackView
from .policy_rules.workloads import GPU_RESOURCE, gpus_per_pod, is_training_job, pod_spec

CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
RESOURCE_FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass(frozen=True)
class QueuedJob:
    job: str
    gpus: int
    fits_quota: bool
    """Its GPUs fit the quota of one flavor at all (else it never starts)."""
    starts_with_first: bool
    """It fits next to the Jobs before it: all of them can run at once."""
    waits_for: str


@dataclass(frozen=True)
class QueueReport:
    cluster_queue: str
    gpu_quota: Mapping[str, int]
    """Flavor (GPU pool) -> nominal GPU quota."""
    admission_checks: tuple[str, ...]
    jobs: tuple[QueuedJob, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def queue_report(view: StackView) -> QueueReport | None:
    """None where the stack has no training queue (`kueue: off`)."""
    queues = view.of_type(CLUSTER_QUEUE)
    if not queues:
        return None
    spec = queues[0].inputs.get("spec") or {}
    name = str((queues[0].inputs.get("metadata") or {}).get("name") or "")
    quota: dict[str, int] = {}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                if resource.get("name") == GPU_RESOURCE:
                    quota[str(flavor.get("name"))] = int(str(resource.get("nominalQuota")))
    checks = tuple(
        str(c.get("name"))
        for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    )
    node_labels = {
        str((f.inputs.get("metadata") or {}).get("name")): dict(
            (f.inputs.get("spec") or {}).get("nodeLabels") or {}
        )
        for f in view.of_type(RESOURCE_FLAVOR)
    }
    used = dict.fromkeys(quota, 0)
    jobs: list[QueuedJob] = []
    for resource in sorted(
        (r for r in view.resources if is_training_job(r, view)), key=lambda r: r.name
    ):
        job_spec = resource.inputs.get("spec") or {}
        labels = (resource.inputs.get("metadata") or {}).get("labels") or {}
        pods = int(job_spec.get("parallelism") or 1)
        pod = pod_spec(resource) or {}
        gpus = pods * gpus_per_pod(pod)
        job_name = str((resource.inputs.get("metadata") or {}).get("name") or resource.name)
        if QUEUE_LABEL not in labels:
            jobs.append(QueuedJob(job_name, gpus, True, True, "nothing: not in the queue"))
            continue
        # Kueue considers only the flavors whose node labels the pods' nodeSelector agrees
        # with (kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:1246-1254),
        # in the ClusterQueue's order: a Job pinned to a pool gets that pool's quota only.
        selector = pod.get("nodeSelector") or {}
        candidates = [
            f
            for f in quota
            if all(
                node_labels.get(f, {})[k] == v
                for k, v in selector.items()
                if k in node_labels.get(f, {})
            )
        ]
        largest = max((quota[f] for f in candidates), default=0)
        fits = gpus <= largest
        room = next((f for f in candidates if used[f] + gpus <= quota[f]), None)
        together = fits and room is not None
        if room is not None and together:
            used[room] += gpus
        jobs.append(
            QueuedJob(
                job_name, gpus, fits, together, _waits_for(gpus, pods, largest, together, checks)
            )
        )
    return QueueReport(name, quota, checks, tuple(jobs))


def _waits_for(gpus: int, pods: int, quota: int, together: bool, checks: Sequence[str]) -> str:
    if gpus > quota:
        return (
            f"never admitted: needs {gpus} GPUs, the quota is {quota}; raise kueueGpuQuota "
            "(and maxGpus) or shrink the Job"
        )
    whole = f"all {pods} pods' {gpus} GPUs at once" if pods > 1 else f"its {gpus} GPU(s)"
    parts = [f"{whole} free in the quota"]
    if not together:
        parts[0] += " (the Jobs before it first finish)"
    if checks:
        parts.append(
            "the autoscaler to add every node it needs in one scale-up (ProvisioningRequest)"
        )
    else:
        parts.append("nodes for its pods (the cluster's autoscaler, node by node)")
    return "; then ".join(parts)


QUEUE_NOTE = (
    "Kueue admits a Job whole or not at all and keeps it suspended until then, holding no "
    "GPU; once admitted, every pod must be running within kueuePodsReadyTimeoutMinutes, or "
    "Kueue suspends it again, frees its GPUs and requeues it."
)


def queue_rows(report: QueueReport) -> list[list[str]]:
    return [
        [
            j.job,
            str(j.gpus),
            "yes" if j.starts_with_first else ("later" if j.fits_quota else "never"),
            j.waits_for,
        ]
        for j in report.jobs
    ]


QUEUE_HEADER = ("training Job", "GPUs", "starts with the first", "waits for")


def queue_title(report: QueueReport) -> str:
    quota = ", ".join(f"{flavor} {gpus} GPUs" for flavor, gpus in report.gpu_quota.items())
    checks = (
        f"; admission checks: {', '.join(report.admission_checks)}"
        if report.admission_checks
        else ""
    )
    return f"Training queue (Kueue ClusterQueue {report.cluster_queue}): quota {quota}{checks}"
