"""Kubernetes workload rules: restartable training Jobs, resource limits, pinned images."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..planview import Resource, StackView
from ..trainer_args import INTERVAL_FLAG, STEPS_FLAG, checkpoints_periodically, pod_arguments
from .model import Finding, Rule, rule

GPU_RESOURCE = "nvidia.com/gpu"
TRAINING_COMPONENT = "training"
"""`app.kubernetes.io/component` of training Jobs."""


def _kind(resource: Resource) -> str:
    """`kubernetes:batch/v1:Job` -> `Job`; '' for anything that is not a Kubernetes object."""
    if not resource.type.startswith("kubernetes:") or resource.type.count(":") != 2:
        return ""
    return resource.type.rsplit(":", 1)[1]


def pod_spec(resource: Resource) -> Mapping[str, Any] | None:
    kind = _kind(resource)
    spec = resource.inputs.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job"):
        return (spec.get("template") or {}).get("spec") or {}
    if kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") or {}
        return (job.get("template") or {}).get("spec") or {}
    return None


def containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield from spec.get("initContainers") or []
    yield from spec.get("containers") or []


def _gpu_limit(spec: Mapping[str, Any]) -> bool:
    return any(
        GPU_RESOURCE in ((c.get("resources") or {}).get("limits") or {}) for c in containers(spec)
    )


def _asks_gpu(spec: Mapping[str, Any]) -> bool:
    return any(
        GPU_RESOURCE in ((c.get("resources") or {}).get(part) or {})
        for c in containers(spec)
        for part in ("limits", "requests")
    )


def is_training_job(resource: Resource, view: StackView) -> bool:
    if _kind(resource) != "Job":
        return False
    meta = resource.inputs.get("metadata") or {}
    labels = meta.get("labels") or {}
    namespace = view.setting("trainingNamespace") or "training"
    spec = pod_spec(resource) or {}
    return (
        labels.get("app.kubernetes.io/component") == TRAINING_COMPONENT
        or meta.get("namespace") == namespace
        or _asks_gpu(spec)
    )


def _ignores_disruption(job_spec: Mapping[str, Any]) -> bool:
    for r in (job_spec.get("podFailurePolicy") or {}).get("rules") or []:
        if r.get("action") != "Ignore":
            continue
        for condition in r.get("onPodConditions") or []:
            if (
                condition.get("type") == "DisruptionTarget"
                and str(condition.get("status", "True")) == "True"
            ):
                return True
    return False


@rule(
    "training-job-restartable",
    "mandatory",
    "Training Jobs ignore preemptions (podFailurePolicy: Ignore on DisruptionTarget, so a "
    "reclaimed spot node does not count toward backoffLimit) and set GPU limits.",
)
def training_job_restartable(self: Rule, view: StackView) -> list[Finding]:
    findings = []
    for job in view.resources:
        if not is_training_job(job, view):
            continue
        if not _ignores_disruption(job.inputs.get("spec") or {}):
            findings.append(
                self.finding(job, "no podFailurePolicy rule that Ignores DisruptionTarget", view)
            )
        if not _gpu_limit(pod_spec(job) or {}):
            findings.append(self.finding(job, f"no container sets a {GPU_RESOURCE} limit", view))
    return findings


@rule(
    "training-job-checkpoints-periodically",
    "advisory",
    "Training Jobs checkpoint periodically, so a node lost without a drain costs at most "
    "one checkpoint interval, not the whole run.",
)
def training_job_checkpoints_periodically(self: Rule, view: StackView) -> list[Finding]:
    return [
        self.finding(
            job,
            f"its arguments set neither {INTERVAL_FLAG} nor {STEPS_FLAG} (the reference "
            "trainer's flags): a spot node lost without a drain loses the whole run so far",
            view,
        )
        for job in view.resources
        if is_training_job(job, view)
        and not checkpoints_periodically(pod_arguments(pod_spec(job) or {}))
    ]


@rule(
    "container-resource-limits",
    "mandatory",
    "Every container sets resource limits (at least memory), so one pod cannot starve a node.",
)
def container_resource_limits(self: Rule, view: StackView) -> list[Finding]:
    findings = []
    for resource in view.resources:
        spec = pod_spec(resource)
        for c in containers(spec or {}):
            limits = (c.get("resources") or {}).get("limits") or {}
            if "memory" not in limits:
                findings.append(
                    self.finding(resource, f"container '{c.get('name')}' has no memory limit", view)
                )
    return findings


def image_problem(image: str) -> str | None:
    """None for `repo:tag` (tag not latest) or `repo@sha256:...`; else what is wrong."""
    if "@" in image:
        return None if image.split("@", 1)[1].startswith("sha256:") else "malformed digest"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag (means :latest)"
    if last.rsplit(":", 1)[1] == "latest":
        return "uses :latest"
    return None


@rule(
    "image-pinned",
    "mandatory",
    "Container images are pinned by tag or digest: no `:latest`, no untagged image.",
)
def image_pinned(self: Rule, view: StackView) -> list[Finding]:
    findings = []
    for resource in view.resources:
        for c in containers(pod_spec(resource) or {}):
            image = str(c.get("image") or "")
            problem = image_problem(image) if image else "has no image"
            if problem:
                findings.append(
                    self.finding(
                        resource, f"container '{c.get('name')}' image {image!r} {problem}", view
                    )
                )
    return findings
