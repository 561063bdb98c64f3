"""Kubernetes workload rules: restartable training Jobs, resource limits, pinned images, and
Helm releases, whose objects the provider renders only at deploy time."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..planview import Resource, StackView, known
from ..trainer_args import INTERVAL_FLAG, STEPS_FLAG, checkpoints_periodically, pod_arguments
from .model import rule

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


def gpus_per_pod(pod: Mapping[str, Any]) -> int:
    """GPUs a pod's app containers are limited to (an unreadable limit counts 0): what the
    queue's quota and the preemption estimate charge per pod."""
    total = 0
    for container in pod.get("containers") or []:
        limits = (container.get("resources") or {}).get("limits") or {}
        try:
            total += int(limits.get(GPU_RESOURCE) or 0)
        except (TypeError, ValueError):
            continue
    return total


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
def training_job_restartable(job: Resource, view: StackView) -> Iterator[str]:
    if not is_training_job(job, view):
        return
    if not _ignores_disruption(job.inputs.get("spec") or {}):
        yield "no podFailurePolicy rule that Ignores DisruptionTarget"
    if not _gpu_limit(pod_spec(job) or {}):
        yield f"no container sets a {GPU_RESOURCE} limit"


@rule(
    "training-job-checkpoints-periodically",
    "advisory",
    "Training Jobs checkpoint periodically, so a node lost without a drain costs at most "
    "one checkpoint interval, not the whole run.",
)
def training_job_checkpoints_periodically(job: Resource, view: StackView) -> Iterator[str]:
    if is_training_job(job, view) and not checkpoints_periodically(
        pod_arguments(pod_spec(job) or {})
    ):
        yield (
            f"its arguments set neither {INTERVAL_FLAG} nor {STEPS_FLAG} (the reference "
            "trainer's flags): a spot node lost without a drain loses the whole run so far"
        )


@rule(
    "container-resource-limits",
    "mandatory",
    "Every container sets resource limits (at least memory), so one pod cannot starve a node.",
)
def container_resource_limits(resource: Resource, view: StackView) -> Iterator[str]:
    for c in containers(pod_spec(resource) or {}):
        limits = (c.get("resources") or {}).get("limits") or {}
        if "memory" not in set(limits):  # the keys only: a limit's value may be unknown
            yield f"container '{c.get('name')}' has no memory limit"


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
def image_pinned(resource: Resource, view: StackView) -> Iterator[str]:
    for c in containers(pod_spec(resource) or {}):
        image = str(c.get("image") or "")
        problem = image_problem(image) if image else "has no image"
        if problem:
            yield f"container '{c.get('name')}' image {image!r} {problem}"


HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
_RANGE = re.compile(r"[\^~*xX<>=|, ]|^$")


def _unpinned_values(values: Any, path: str = "values") -> Iterator[str]:
    """Image overrides in a release's values that undo the chart's pinning: a `tag` of
    latest (or empty), or an `image` string without a tag or digest."""
    if isinstance(values, Mapping):
        for key in values:
            # An unknown value under another key cannot unpin an image: walk past it. An
            # unknown `tag` or `image` is read plainly, so the pack says it cannot decide.
            value = values.get(key) if key in ("tag", "image") else known(values, key)
            where = f"{path}.{key}"
            if key == "tag" and isinstance(value, str) and value in ("", "latest"):
                yield f"{where} is {value!r}"
            elif key == "image" and isinstance(value, str) and image_problem(value):
                yield f"{where} {value!r} {image_problem(value)}"
            else:
                yield from _unpinned_values(value, where)
    elif isinstance(values, Sequence) and not isinstance(values, str):
        for i in range(len(values)):
            yield from _unpinned_values(known(values, i), f"{path}[{i}]")


@rule(
    "helm-release-pinned",
    "mandatory",
    "Helm releases pin an exact chart version (its default images are pinned with it) and "
    "their values do not unpin an image.",
)
def helm_release_pinned(resource: Resource, view: StackView) -> Iterator[str]:
    if resource.type != HELM_RELEASE:
        return
    version = str(resource.inputs.get("version") or "")
    if _RANGE.search(version):
        yield f"chart version {version or '(none: the newest)'} is not one exact version"
    yield from _unpinned_values(resource.inputs.get("values") or {})


@rule(
    "helm-release-contents-unchecked",
    "advisory",
    "The objects a Helm release installs are rendered by the provider at deploy time: "
    "container-resource-limits and image-pinned cannot see them.",
)
def helm_release_contents_unchecked(resource: Resource, view: StackView) -> Iterator[str]:
    if resource.type == HELM_RELEASE:
        chart = resource.inputs.get("chart")
        yield (
            f"chart {chart!r}: its containers' limits and images are not checked here; set "
            "resources in its values and review `helm template` output for the pinned version"
        )
