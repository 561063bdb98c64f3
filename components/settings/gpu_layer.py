"""Settings of the GPU layer every cluster gets: device plugin, DCGM exporter, training Jobs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from .queueing import QueueSettings, parse_queueing
from .reader import ConfigReader

DevicePluginMode = Literal["auto", "always", "never"]
MigStrategy = Literal["none", "single", "mixed"]
GpuLayerMode = Literal["inline", "separate"]

PREEMPTED_EXIT_CODE = 75
"""The reference trainer's "preempted, checkpoint written, retry me" (trainer/exit_codes.py)."""
USER_ERROR_EXIT_CODE = 64
"""The reference trainer's "bad arguments or data, a retry cannot help"."""
MIN_GRACE_SECONDS = 30

_JOB_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
_QUANTITY_FACTOR = {
    None: 1, "m": 0.001, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
}  # fmt: skip
GIB = 2**30
SHM_MAX_SHARE = 0.5
"""Most of a Job's memory limit `/dev/shm` may take. A memory-backed emptyDir's files count
against the container's memory limit (kubernetes.io/docs/concepts/storage/volumes/#emptydir:
"files you write count against your container's memory limit"), so a full /dev/shm sized like
the limit leaves the trainer nothing: it is OOM-killed. Half leaves the other half to the
process (model, optimizer, pinned batches)."""
RESERVED_ENV = (
    "CHECKPOINT_URI",
    "STORAGE_ENDPOINT_URL",
    "STORAGE_REGION",
    "MASTER_ADDR",
    "MASTER_PORT",
    "NNODES",
    "NODE_RANK",
)
"""Set on every training Job by gpuinfra (the Job -> trainer contract, and torchrun's)."""


def quantity_bytes(quantity: str) -> float | None:
    """A Kubernetes memory quantity (`16Gi`, `16G`, `500Mi`) in bytes; None if not one."""
    match = _QUANTITY.match(quantity)
    if not match:
        return None
    return float(match.group(1)) * _QUANTITY_FACTOR[match.group(2)]


_JOB_FIELDS = (
    "name",
    "image",
    "command",
    "args",
    "env",
    "gpusPerNode",
    "nodes",
    "backoffLimit",
    "nonRetryableExitCodes",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "ttlSecondsAfterFinished",
    "shmSizeGi",
    "cpu",
    "memory",
)


@dataclass(frozen=True)
class TrainingJobSettings:
    name: str
    image: str
    command: tuple[str, ...] | None
    """None: the image's entrypoint (the reference trainer's torchrun wrapper)."""
    args: tuple[str, ...] | None
    """None: a default torchrun command line for `nodes` x `gpus_per_node`."""
    env: Mapping[str, str]
    gpus_per_node: int
    nodes: int
    backoff_limit: int
    """Failures that are neither preemptions nor non-retryable exits, before the Job fails."""
    non_retryable_exit_codes: tuple[int, ...]
    termination_grace_period_seconds: int
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int
    shm_size_gi: int
    cpu: str
    memory: str


@dataclass(frozen=True)
class GpuLayerSettings:
    device_plugin: DevicePluginMode
    time_slicing_replicas: int
    mig_strategy: MigStrategy
    dcgm_profiling_metrics: bool
    prometheus_operator: bool
    kube_prometheus_stack: bool
    trainer_image: str
    training_jobs: tuple[TrainingJobSettings, ...]
    mode: GpuLayerMode = "inline"
    """inline: this stack deploys the layer; separate: a `clusterStack` stack does."""
    prometheus_release: str = "kube-prometheus-stack"
    """`release` label of the ServiceMonitor ("" for none)."""
    queueing: QueueSettings = dataclasses.field(default_factory=QueueSettings)
    """Kueue (issue 19); its GPU quota is resolved against maxGpus in validate.py."""


def parse_mode(r: ConfigReader, *, cloud: str, api_endpoint_public: bool) -> GpuLayerMode:
    """`gpuLayer`, refused where its `pulumi up` could not reach the cluster's API endpoint.

    inline on a cloud stack deploys Kubernetes objects in the same `pulumi up` that creates
    the cluster, through the kubeconfig of the endpoint the stack chose: a private endpoint
    answers only inside the VPC, so such an update fails at the first object (or hangs).
    """
    mode = cast(GpuLayerMode, r.one_of("gpuLayer", ("inline", "separate")))
    if cloud == "kubernetes":
        if mode == "separate":
            r.problem(
                "gpuLayer",
                mode,
                "cloud kubernetes deploys only the GPU layer, so there is nothing to separate "
                "it from; remove it (a cluster stack sets gpuLayer: separate, and this stack "
                "names it with gpuinfra:clusterStack)",
            )
        return mode
    if mode == "inline" and not api_endpoint_public:
        r.problem(
            "gpuLayer",
            mode,
            "inline deploys the GPU layer in the same `pulumi up` that creates the cluster, "
            "which must then reach its API endpoint, but gpuinfra:apiEndpointPublic is false "
            "(a private endpoint answers only inside the VPC). Either set "
            "gpuinfra:apiEndpointPublic to true (reachable from gpuinfra:adminCidrs only) and run "
            "`pulumi up` from a network in adminCidrs, or set gpuinfra:gpuLayer to separate and "
            "deploy the GPU layer from inside the VPC with a `cloud: kubernetes` stack whose "
            "gpuinfra:clusterStack names this one",
        )
    return mode


def image_problem(image: str) -> str | None:
    """Images must be pinned: a tag other than `latest`, or a digest."""
    if "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag; pin a version (e.g. repo/image:1.2.3) or a digest"
    if last.endswith(":latest"):
        return "uses :latest; pin a version or a digest"
    return None


def parse_gpu_layer(
    r: ConfigReader,
    *,
    gpus_per_node: int | None,
    cloud: str = "kubernetes",
    api_endpoint_public: bool = False,
) -> GpuLayerSettings:
    """`gpus_per_node`: GPUs one node of the GPU pool has (None when unknown)."""
    mode = parse_mode(r, cloud=cloud, api_endpoint_public=api_endpoint_public)
    release = r.string("monitoringPrometheusRelease")
    if release and (len(release) > 63 or not _LABEL_VALUE.match(release)):
        r.problem(
            "monitoringPrometheusRelease",
            release,
            "must be a label value (at most 63 letters, digits, '-', '_' or '.'), the Helm "
            "release name of your kube-prometheus-stack, or empty",
        )
    replicas = r.integer("devicePluginTimeSlicingReplicas")
    if not 1 <= replicas <= 64:
        r.problem("devicePluginTimeSlicingReplicas", replicas, "must be between 1 and 64")
    trainer_image = r.string("trainerImage")
    problem = image_problem(trainer_image)
    if problem:
        r.problem("trainerImage", trainer_image, problem)
    jobs = tuple(
        job
        for index, raw in enumerate(r.objects("trainingJobs"))
        if (job := _job(r, index, raw, trainer_image, gpus_per_node)) is not None
    )
    names = [job.name for job in jobs]
    for name in sorted({n for n in names if names.count(n) > 1}):
        r.problem("trainingJobs", name, "job names must be unique")
    return GpuLayerSettings(
        device_plugin=cast(DevicePluginMode, r.one_of("devicePlugin", ("auto", "always", "never"))),
        time_slicing_replicas=replicas,
        mig_strategy=cast(
            MigStrategy, r.one_of("devicePluginMigStrategy", ("none", "single", "mixed"))
        ),
        dcgm_profiling_metrics=r.boolean("dcgmProfilingMetrics"),
        prometheus_operator=r.boolean("monitoringPrometheusOperator"),
        kube_prometheus_stack=r.boolean("monitoringKubePrometheusStack"),
        trainer_image=trainer_image,
        training_jobs=jobs,
        mode=mode,
        prometheus_release=release,
        queueing=parse_queueing(r),
    )


class _JobReader:
    """Typed access to one `trainingJobs` entry; problems name `trainingJobs[i].field`."""

    def __init__(self, r: ConfigReader, index: int, raw: Mapping[str, object]) -> None:
        self.r, self.index, self.raw = r, index, raw
        self.ok = True

    def key(self, field: str) -> str:
        return f"gpuinfra:trainingJobs[{self.index}].{field}"

    def problem(self, field: str, value: object, allowed: str) -> None:
        self.ok = False
        self.r.problem(self.key(field), value, allowed)

    def integer(self, field: str, default: int, low: int, high: int, why: str = "") -> int:
        value = self.optional_integer(field, low, high, why)
        return default if value is None else value

    def optional_integer(self, field: str, low: int, high: int, why: str = "") -> int | None:
        value = self.raw.get(field)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(field, value, "must be a whole number")
            return None
        if not low <= value <= high:
            self.problem(field, value, f"must be between {low} and {high}{why}")
        return value

    def strings(self, field: str) -> tuple[str, ...] | None:
        value = self.raw.get(field)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(field, value, "must be a list of strings")
            return None
        return tuple(value)

    def text(self, field: str, default: str) -> str:
        value = self.raw.get(field, default)
        if not isinstance(value, str) or not value:
            self.problem(field, value, "must be a non-empty string")
            return default
        return value


def _exit_code(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 255


def _job(
    r: ConfigReader,
    index: int,
    raw: Mapping[str, object],
    trainer_image: str,
    gpus_per_node: int | None,
) -> TrainingJobSettings | None:
    j = _JobReader(r, index, raw)
    for field in sorted(set(raw) - set(_JOB_FIELDS)):
        j.problem(field, raw[field], "unknown field; allowed: " + ", ".join(_JOB_FIELDS))

    name = raw.get("name")
    if not isinstance(name, str) or len(name) > 52 or not _JOB_NAME.match(name):
        j.problem(
            "name",
            name,
            "required: lowercase letters, digits and '-', starting with a letter, at most 52 "
            "characters (pod names add a suffix)",
        )
        name = f"job-{index}"

    image = j.text("image", trainer_image)
    problem = image_problem(image)
    if problem:
        j.problem("image", image, problem)

    if gpus_per_node is None:
        gpus = j.integer("gpusPerNode", 1, 1, 16)
    else:
        gpus = j.integer(
            "gpusPerNode",
            gpus_per_node,
            1,
            gpus_per_node,
            f" (a node of the GPU pool has {gpus_per_node} GPU{'s' * (gpus_per_node != 1)})",
        )
    nodes = j.integer("nodes", 1, 1, 512)
    grace = j.integer(
        "terminationGracePeriodSeconds",
        120,
        MIN_GRACE_SECONDS,
        3600,
        " (the trainer needs time to write its emergency checkpoint)",
    )
    backoff = j.integer("backoffLimit", 3, 0, 100)
    deadline = j.optional_integer("activeDeadlineSeconds", 60, 60 * 60 * 24 * 60)
    ttl = j.integer("ttlSecondsAfterFinished", 7 * 24 * 3600, 0, 365 * 24 * 3600)
    shm = j.integer("shmSizeGi", 8, 1, 1024)

    codes_raw = raw.get("nonRetryableExitCodes", [USER_ERROR_EXIT_CODE])
    codes: tuple[int, ...] = (USER_ERROR_EXIT_CODE,)
    valid = [c for c in codes_raw if _exit_code(c)] if isinstance(codes_raw, list) else []
    if not isinstance(codes_raw, list) or not codes_raw or len(valid) != len(codes_raw):
        j.problem("nonRetryableExitCodes", codes_raw, "must be a non-empty list of codes 1-255")
    elif PREEMPTED_EXIT_CODE in valid:
        j.problem(
            "nonRetryableExitCodes",
            codes_raw,
            f"must not contain {PREEMPTED_EXIT_CODE}: the trainer exits with it after a "
            "preemption checkpoint, and such a pod must be retried",
        )
    else:
        codes = tuple(int(c) for c in valid)

    env_raw = raw.get("env", {})
    env: dict[str, str] = {}
    if not isinstance(env_raw, dict):
        j.problem("env", env_raw, "must be a mapping of NAME: value")
    else:
        for key, value in env_raw.items():
            if not isinstance(key, str) or not _ENV_NAME.match(key):
                j.problem("env", key, "variable names are letters, digits and '_'")
            elif key in RESERVED_ENV:
                j.problem("env", key, "is set by gpuinfra; choose another name")
            else:
                env[key] = str(value)

    cpu = j.text("cpu", "4")
    memory = j.text("memory", "16Gi")
    for field, quantity in (("cpu", cpu), ("memory", memory)):
        if not _QUANTITY.match(quantity):
            j.problem(field, quantity, "must be a Kubernetes quantity such as 4, 500m or 16Gi")
    limit = quantity_bytes(memory)
    if limit is not None and shm * GIB > limit * SHM_MAX_SHARE:
        most = int(limit * SHM_MAX_SHARE // GIB)
        j.problem(
            "shmSizeGi",
            shm,
            f"/dev/shm is memory-backed: what it holds counts against the Job's memory limit "
            f"(memory: {memory}), so it may take at most half of it ({most} GiB) and leave the "
            "rest to the trainer; lower shmSizeGi or raise memory",
        )

    command, args = j.strings("command"), j.strings("args")
    if not j.ok:
        return None
    return TrainingJobSettings(
        name=str(name),
        image=image,
        command=command,
        args=args,
        env=env,
        gpus_per_node=gpus,
        nodes=nodes,
        backoff_limit=backoff,
        non_retryable_exit_codes=codes,
        termination_grace_period_seconds=grace,
        active_deadline_seconds=deadline,
        ttl_seconds_after_finished=ttl,
        shm_size_gi=shm,
        cpu=cpu,
        memory=memory,
    )
