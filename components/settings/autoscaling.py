"""GPU autoscaling settings: how long an idle GPU node lives and how many GPUs a stack may hold.

`maxGpus` is enforced where every cloud's autoscaler already stops: each GPU pool's maximum
size. It lowers each maximum to the whole nodes that fit in the budget, and the pools' maxima
must add up to no more than it, so the autoscaler (Cluster Autoscaler on EKS, ACK's, TKE's and
VKE's own) can never add GPUs beyond it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from components.autoscaler_spec import CLUSTER_AUTOSCALER_TAGS

from .reader import ConfigReader

MAX_SCALE_DOWN_DELAY_MINUTES = 1440
"""A day: an idle GPU node kept longer than that is a cost, not a delay."""
SCALE_DOWN_DELAY_RANGE: dict[str, tuple[int, int]] = {"alicloud": (1, 60)}
"""Clouds whose autoscaler takes a narrower range than ours. ACK's (`cs.AutoscalingConfig`
`unneeded_duration`/`cool_down_duration`) takes 1 to 60 minutes, as the review of issue 14
reports from ACK's "Enable node autoscaling" guide; the provider itself has no validator
(aliyun/terraform-provider-alicloud@ace5bcf8
alicloud/resource_alicloud_cs_autoscaling_config.go:41-50)."""


@dataclass(frozen=True)
class PoolScaling:
    """How far the autoscaler may move one GPU pool."""

    name: str
    min_nodes: int
    max_nodes: int
    """The pool's maximum after the budget: what the autoscaler may reach."""
    gpus_per_node: int

    @property
    def max_gpus(self) -> int:
        return self.max_nodes * self.gpus_per_node


@dataclass(frozen=True)
class AutoscalingSettings:
    scale_down_delay_minutes: int
    """How long a GPU node must be unneeded (and how long after a scale-up) before removal."""
    max_gpus: int
    """The stack's GPU budget (`maxGpus`, or the pools' maxima together when 0)."""
    pools: tuple[PoolScaling, ...]

    def pool(self, name: str) -> PoolScaling:
        return next(p for p in self.pools if p.name == name)

    def summary(self, autoscaler: str, delay: str | None = None) -> str:
        """One line for the stack outputs and the preview; `delay`: how idle nodes go, where
        the stack does not set it."""
        pools = ", ".join(
            f"{p.name} {p.min_nodes} to {p.max_nodes} nodes x {p.gpus_per_node} GPU"
            + "s" * (p.gpus_per_node != 1)
            for p in self.pools
        )
        most = sum(p.max_gpus for p in self.pools)
        removed = delay or f"after {self.scale_down_delay_minutes} min"
        return (
            f"{autoscaler}: GPU pool{'s' * (len(self.pools) != 1)} {pools} (at most {most} GPUs; "
            f"maxGpus {self.max_gpus}), idle GPU nodes removed {removed}"
        )


@dataclass(frozen=True)
class PoolLimits:
    """What the budget check needs of one pool, and the keys its problems are named by."""

    name: str
    gpus_per_node: int
    min_nodes: int
    desired_nodes: int
    max_nodes: int
    keys: dict[str, str]
    """Field (`minNodes`, `desiredNodes`, `maxNodes`) -> the config key it came from."""


def parse_autoscaling(
    r: ConfigReader,
    *,
    cloud: str,
    kubernetes_version: str,
    pools: Sequence[PoolLimits],
) -> AutoscalingSettings:
    """Validate the autoscaling keys against the GPU pools the catalog resolved.

    `maxGpus` caps the GPUs of all pools together, where every cloud's autoscaler stops: at
    each pool's maximum size (none of them knows a sum across pools). Each pool's maximum is
    lowered to the whole nodes the budget holds on its own, and the pools' maxima together
    must then fit in it; with one pool the first step is all there is.
    """
    # EKS runs our Cluster Autoscaler, whose release must match the cluster's minor.
    # (A malformed or too old version is reported by the cluster settings already.)
    minor = re.fullmatch(r"1\.(\d+)", kubernetes_version)
    oldest = min(int(v.split(".")[1]) for v in CLUSTER_AUTOSCALER_TAGS)
    if (
        cloud == "aws"
        and minor is not None
        and int(minor.group(1)) >= oldest
        and kubernetes_version not in CLUSTER_AUTOSCALER_TAGS
    ):
        r.problem(
            "kubernetesVersion",
            kubernetes_version,
            "has no Cluster Autoscaler release pinned; pinned minors: "
            + ", ".join(CLUSTER_AUTOSCALER_TAGS),
        )
    delay = r.integer("gpuPoolScaleDownDelayMinutes")
    low, high = SCALE_DOWN_DELAY_RANGE.get(cloud, (1, MAX_SCALE_DOWN_DELAY_MINUTES))
    if not low <= delay <= high:
        where = f" on {cloud}" if cloud in SCALE_DOWN_DELAY_RANGE else ""
        r.problem(
            "gpuPoolScaleDownDelayMinutes",
            delay,
            f"must be between {low} and {high}{where} (minutes an empty GPU node is kept before "
            "the autoscaler removes it)",
        )
        delay = max(low, min(delay, high))

    single = len(pools) == 1
    capacity = sum(p.max_nodes * p.gpus_per_node for p in pools)
    smallest = min(p.gpus_per_node for p in pools)
    given = r.integer("maxGpus")
    max_gpus = given or capacity
    if given < 0 or 0 < given < smallest:
        one = "the GPU pool" if single else "the smallest GPU pool"
        r.problem(
            "maxGpus",
            given,
            f"must be at least {smallest} (the GPUs of one node of {one}), or 0 for "
            + ("gpuPoolMaxNodes x GPUs per node" if single else "the pools' maxima together"),
        )
        max_gpus = capacity
    elif given > capacity:
        held = " + ".join(
            f"{p.keys['maxNodes'].removeprefix('gpuinfra:')} {p.max_nodes} x {p.gpus_per_node} "
            "GPUs per node"
            for p in pools
        )
        r.problem(
            "maxGpus",
            given,
            f"is more than the GPU pool{'s' * (not single)} can ever hold: {held} = {capacity}; "
            "raise the maximum or lower maxGpus",
        )
        max_gpus = capacity
    scaling = tuple(
        PoolScaling(
            name=p.name,
            min_nodes=p.min_nodes,
            max_nodes=min(p.max_nodes, max_gpus // p.gpus_per_node),
            gpus_per_node=p.gpus_per_node,
        )
        for p in pools
    )
    if given > 0:
        for p, s in zip(pools, scaling, strict=True):
            for field, nodes in (("minNodes", p.min_nodes), ("desiredNodes", p.desired_nodes)):
                if nodes * p.gpus_per_node > max_gpus:
                    r.problem(
                        p.keys[field],
                        nodes,
                        f"{nodes} nodes x {p.gpus_per_node} GPUs exceed maxGpus {max_gpus}; at "
                        f"most {s.max_nodes} nodes",
                    )
        together = sum(s.max_gpus for s in scaling)
        if together > max_gpus:
            held = ", ".join(f"{s.name} {s.max_nodes} x {s.gpus_per_node}" for s in scaling)
            r.problem(
                "maxGpus",
                given,
                f"the GPU pools could hold {together} GPUs together ({held} nodes x GPUs), more "
                "than maxGpus: every autoscaler stops at each pool's maximum, never at a sum "
                f"across pools, so lower the pools' maxNodes to add up to at most {max_gpus} GPUs",
            )
        floor = sum(p.min_nodes * p.gpus_per_node for p in pools)
        if not single and floor > max_gpus:
            r.problem(
                "maxGpus",
                given,
                f"the pools' minNodes hold {floor} GPUs together, more than maxGpus",
            )
    return AutoscalingSettings(scale_down_delay_minutes=delay, max_gpus=max_gpus, pools=scaling)
