"""What one spot preemption costs each training Job: the work it has to redo, priced at the
rate of the GPU pool the Job runs on (its node selector picks the pool).

A preempted Job resumes from its newest complete checkpoint, so the loss is the work done
since then, on every GPU of the Job (one lost node restarts the whole gang). Two cases:

- drained: the pod gets SIGTERM and its grace period (a node drain, a spot notice acted on).
  The reference trainer then writes an emergency checkpoint and exits 75, so only the step
  in flight is lost, provided the checkpoint is written within the grace period.
- hard kill: the node disappears without a drain. Everything since the last periodic
  checkpoint is lost: up to `--checkpoint-every-seconds`, half of it on average.

The time a replacement takes (a new node, the image pull, loading the checkpoint) comes on
top and is not counted: nodes are not billed while they do not exist, and it depends on the
cloud's capacity at that moment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .cost import Assumptions, gpu_hour_price
from .planview import StackView
from .policy_rules.workloads import gpus_per_pod, is_training_job, pod_spec
from .trainer_args import INTERVAL_FLAG, checkpoint_interval, pod_arguments

DRAINER_DAEMONSET = "spot-reclaim-drainer"
"""The GPU layer's drain agent (components/kubernetes/spot_reclaim_drainer.py, ACK and TKE)."""


@dataclass(frozen=True)
class JobExposure:
    job: str
    gpus: int
    """Every GPU of every pod (nodes x GPUs per pod)."""
    checkpoint_every_seconds: float | None
    """None: the Job's arguments set no `--checkpoint-every-seconds`."""
    grace_seconds: int
    drained_by: str | None
    """What drains a GPU node before its spot instance is reclaimed; None: nothing here."""
    lost_gpu_hours_worst: float | None
    lost_gpu_hours_mean: float | None
    usd_per_gpu_hour: float | None
    lost_usd_worst: float | None
    note: str
    pool: str = ""
    """The GPU pool the Job's node selector picks (`gpuinfra.io/pool`); "" where unknown."""
    spot: bool | None = None
    """Whether that pool is spot; None where no pool of the plan was found."""
    currency: str = "USD"
    """Of `usd_per_gpu_hour` and `lost_usd_worst` (the GPU pool's price's currency)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def drained_by(view: StackView) -> str | None:
    if view.cloud == "aws":
        # EKS managed node groups cordon and drain spot nodes on a rebalance recommendation
        # or the two-minute notice (EKS user guide, "Managed node group capacity types").
        return "EKS managed node group"
    for daemonset in view.of_type("kubernetes:apps/v1:DaemonSet"):
        if (daemonset.inputs.get("metadata") or {}).get("name") == DRAINER_DAEMONSET:
            return "gpuinfra spot-reclaim-drainer"
    return None


def exposures(view: StackView, a: Assumptions) -> list[JobExposure]:
    """One entry per training Job of the plan, by name."""
    drainer = drained_by(view)
    found = []
    jobs = [r for r in view.resources if is_training_job(r, view)]
    for job in sorted(jobs, key=lambda r: r.name):
        pod = pod_spec(job) or {}
        # Priced at the rate of the pool the Job's node selector picks (each pool its own).
        selector = pod.get("nodeSelector") or {}
        price = gpu_hour_price(view, a, selector if isinstance(selector, Mapping) else None)
        pods = int((job.inputs.get("spec") or {}).get("parallelism") or 1)
        gpus = gpus_per_pod(pod) * pods
        args = pod_arguments(pod)
        interval = checkpoint_interval(args)
        grace = int(pod.get("terminationGracePeriodSeconds") or 30)  # Kubernetes' default
        notes = []
        worst = mean = None
        if interval is None:
            notes.append(f"no {INTERVAL_FLAG} in the Job's arguments: a hard kill loses all work")
        else:
            worst = gpus * interval / 3600
            mean = worst / 2
            if "--async-checkpoint" in args:
                notes.append("plus the seconds an async checkpoint takes to finish writing")
        usd = price.usd if price is not None else None
        if price is None:
            notes.append("no GPU pool in this stack to price the GPUs")
        elif price.usd is None:
            notes.append(f"{price.instance_type} has no price in the catalog")
        else:
            notes.append(f"{price.instance_type}: {price.note}" if price.note else "")
        if price is not None and not price.spot:
            notes.append(
                f"pool {price.pool or price.instance_type} is on-demand: no spot reclaim; a node "
                "lost otherwise (a fault, a drain) costs the same"
            )
        found.append(
            JobExposure(
                job=job.name,
                gpus=gpus,
                checkpoint_every_seconds=interval,
                grace_seconds=grace,
                drained_by=drainer,
                lost_gpu_hours_worst=worst,
                lost_gpu_hours_mean=mean,
                usd_per_gpu_hour=usd,
                lost_usd_worst=None if worst is None or usd is None else worst * usd,
                note="; ".join(n for n in notes if n),
                pool=price.pool if price is not None else "",
                spot=price.spot if price is not None else None,
                currency=price.currency if price is not None else "USD",
            )
        )
    return found
