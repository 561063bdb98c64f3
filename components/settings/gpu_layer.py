"""Settings of the GPU layer every cluster gets: device plugin, DCGM exporter, training Jobs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from components import catalog

from . import datasets
from .datasets import DatasetSettings
from .gpu_alerts import DEFAULT_ALERTS, GpuAlertSettings
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
TRAINER_DEFAULT_BATCH = 64
"""The reference trainer's default `--batch-size` per GPU (trainer/config.py)."""
SHARDINGS = ("ddp", "fsdp")

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
    "DATASET_DIR",
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
    "pool",
    "gpuModel",
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
    "sharding",
    "globalBatchSize",
    "microBatchSize",
    "dataset",
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
    sharding: str | None = None
    """`--sharding` of the default trainer arguments: ddp, or fsdp (then the GPT model)."""
    global_batch_size: int | None = None
    """`--global-batch-size`: kept when a retry gets fewer or more GPUs (accumulation)."""
    micro_batch_size: int | None = None
    """`--batch-size` per GPU and accumulation round."""
    pool: str | None = None
    """The GPU pool the Job runs on: placed by `place_job` where the pools are known (a cloud
    stack), as given where they come later (a GPU-layer stack: its cluster stack's handle),
    None on an existing cluster's GPU nodes."""
    gpu_model: str | None = None
    """The GPU model the Job asked for (`gpuModel`), matched to a pool; None: any."""
    dataset: DatasetSettings | None = None
    """Where the Job's data comes from and how it reaches the pod; None: the image's own."""


class PoolShape(Protocol):
    """What placing a Job needs of a GPU pool (settings' and the ClusterHandle's pools)."""

    @property
    def name(self) -> str: ...

    @property
    def gpu_model(self) -> str: ...

    @property
    def gpus_per_node(self) -> int: ...


def describe_pools(pools: Sequence[PoolShape]) -> str:
    """`spot-a10g (1 x A10G per node), big (8 x A100-80GB per node)`."""
    return ", ".join(f"{p.name} ({p.gpus_per_node} x {p.gpu_model} per node)" for p in pools)


@dataclass(frozen=True)
class Misfit:
    """Why a Job fits no GPU pool: the Job field to blame and what would fit."""

    field: str
    message: str


def place_job(
    pools: Sequence[PoolShape],
    *,
    job: str,
    pool: str | None,
    gpu_model: str | None,
    gpus_per_node: int | None,
) -> PoolShape | Misfit:
    """The pool a Job runs on: the one it names, else the first (in `gpuPools` order) of the
    given GPU model, else the first, whose nodes have at least `gpus_per_node` GPUs (None:
    any count; the Job then takes the whole node).

    The order is the user's: list the pool a Job should land on by default first.
    """
    gpus = gpus_per_node or 1
    listed = f"GPU pools: {describe_pools(pools)}"
    if pool is not None:
        chosen = next((p for p in pools if p.name == pool), None)
        if chosen is None:
            return Misfit("pool", f"job {job!r} names no GPU pool of this stack; {listed}")
        if gpu_model is not None and not catalog.matches_model(chosen.gpu_model, gpu_model):
            return Misfit(
                "gpuModel",
                f"job {job!r}: pool {pool} has {chosen.gpu_model} GPUs; drop gpuModel or name a "
                f"pool of that model ({listed})",
            )
        if chosen.gpus_per_node < gpus:
            return Misfit(
                "gpusPerNode",
                f"job {job!r} asks {gpus} GPUs per node, but a node of pool {pool} has "
                f"{chosen.gpus_per_node}; {listed}. Lower gpusPerNode, or name a pool with "
                f"{gpus} GPUs per node",
            )
        return chosen
    candidates = [
        p for p in pools if gpu_model is None or catalog.matches_model(p.gpu_model, gpu_model)
    ]
    if not candidates:
        return Misfit(
            "gpuModel",
            f"job {job!r} asks for {gpu_model} GPUs, which no GPU pool has; {listed}. Add a "
            "pool with them to gpuinfra:gpuPools, or change gpuModel",
        )
    for candidate in candidates:
        if candidate.gpus_per_node >= gpus:
            return candidate
    kind = f"{gpu_model} " if gpu_model else ""
    return Misfit(
        "gpusPerNode",
        f"job {job!r} fits no GPU pool: it asks {gpus} GPUs per node and no {kind}pool has "
        f"that many; {listed}. Add a pool with {gpus} GPUs per node to gpuinfra:gpuPools, or "
        "lower gpusPerNode",
    )


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
    """`release` label of the ServiceMonitor and the PrometheusRule ("" for none)."""
    alerts: GpuAlertSettings = DEFAULT_ALERTS
    """The GPU alerts' thresholds (`gpuAlert*`), resolved once the autoscaling is known."""
    queueing: QueueSettings = dataclasses.field(default_factory=QueueSettings)
    """Kueue (issue 19); its GPU quota is resolved in validate.py."""


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
    pools: Sequence[PoolShape] | None = (),
    cloud: str = "kubernetes",
    api_endpoint_public: bool = False,
) -> GpuLayerSettings:
    """`pools`: the stack's GPU pools, each Job placed on one; empty: a cluster whose GPU nodes
    are one lot of `gpus_per_node` GPUs each (None: unknown); None: pools not known yet (a
    GPU-layer stack: `stacks/kubernetes.py` places the Jobs on its cluster stack's pools)."""
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
        if (job := _job(r, index, raw, trainer_image, gpus_per_node, pools)) is not None
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

    def optional_text(self, field: str) -> str | None:
        """A non-empty string, or None when the field is not given."""
        value = self.raw.get(field)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            self.problem(field, value, "must be a non-empty string")
            return None
        return value.strip()

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
    pools: Sequence[PoolShape] | None,
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

    requested_pool = j.optional_text("pool")
    requested_model = j.optional_text("gpuModel")
    placed: str | None = requested_pool
    if pools is None or not pools:
        if pools is not None:  # an existing cluster: its GPU nodes are one lot
            for field, value in (("pool", requested_pool), ("gpuModel", requested_model)):
                if value is not None:
                    j.problem(
                        field,
                        value,
                        "an existing cluster's GPU nodes are the ones existingGpuNodeLabels "
                        "selects, with no GPU pools gpuinfra knows of; remove it",
                    )
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
    else:
        asked = j.optional_integer("gpusPerNode", 1, 64)
        where = place_job(
            pools,
            job=str(name),
            pool=requested_pool,
            gpu_model=requested_model,
            gpus_per_node=asked,
        )
        if isinstance(where, Misfit):
            field = where.field
            j.problem(field, raw.get(field, asked or 1), where.message)
            gpus = asked or 1
        else:
            placed = where.name
            gpus = asked or where.gpus_per_node
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

    dataset = None
    if "dataset" in raw:
        dataset, problems = datasets.parse(raw["dataset"])
        for key, got, allowed in problems:
            j.problem(key, got, allowed)

    command, args = j.strings("command"), j.strings("args")
    sharding, global_batch, micro_batch = _batching(j, nodes * gpus, args is not None)
    if sharding == "fsdp" and dataset is not None and args is None:
        j.problem(
            "sharding",
            sharding,
            "with a dataset is refused: sharding fsdp runs the GPT decoder on synthetic tokens, "
            "and a dataset holds images (tar shards or an image folder) that only the image "
            "models read; use sharding ddp, or your own args",
        )
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
        sharding=sharding,
        global_batch_size=global_batch,
        micro_batch_size=micro_batch,
        pool=placed,
        gpu_model=requested_model,
        dataset=dataset,
    )


def _batching(
    j: _JobReader, world: int, own_args: bool
) -> tuple[str | None, int | None, int | None]:
    """`sharding`, `globalBatchSize`, `microBatchSize`: arguments of the reference trainer."""
    sharding = j.raw.get("sharding")
    if sharding is not None and sharding not in SHARDINGS:
        j.problem("sharding", sharding, "must be ddp or fsdp (FSDP2: states sharded over GPUs)")
        sharding = None
    micro = j.optional_integer("microBatchSize", 1, 1_000_000)
    global_batch = j.optional_integer("globalBatchSize", 1, 100_000_000)
    per_round = (micro or TRAINER_DEFAULT_BATCH) * world
    if global_batch is not None and global_batch % per_round:
        j.problem(
            "globalBatchSize",
            global_batch,
            f"must be a multiple of microBatchSize {micro or TRAINER_DEFAULT_BATCH} x {world} "
            f"GPU(s) = {per_round}; gradient accumulation makes up the rest",
        )
    if own_args:
        for field, value in (
            ("sharding", sharding),
            ("globalBatchSize", global_batch),
            ("microBatchSize", micro),
        ):
            if value is not None:
                j.problem(
                    field,
                    value,
                    "sets an argument of the default trainer command; with `args` set, pass "
                    "--sharding, --global-batch-size or --batch-size in `args` instead",
                )
    return sharding, global_batch, micro
