"""GPU autoscaling settings: how long an idle GPU node lives and how many GPUs a stack may hold.

`maxGpus` is enforced where every cloud's autoscaler already stops: the GPU pool's maximum
size. It lowers that maximum to the whole nodes that fit in the budget, so the autoscaler
(Cluster Autoscaler on EKS, ACK's and TKE's own) can never add GPUs beyond it.
"""

from __future__ import annotations

import re
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
class AutoscalingSettings:
    scale_down_delay_minutes: int
    """How long a GPU node must be unneeded (and how long after a scale-up) before removal."""
    max_gpus: int
    """The stack's GPU budget (`maxGpus`, or `gpuPoolMaxNodes` x GPUs per node when 0)."""
    max_gpu_nodes: int
    """The GPU pool's maximum size after the budget: what the autoscaler may reach."""
    gpus_per_node: int
    min_gpu_nodes: int

    def summary(self, autoscaler: str) -> str:
        """One line for the stack outputs and the preview."""
        return (
            f"{autoscaler}: GPU pool {self.min_gpu_nodes} to {self.max_gpu_nodes} nodes "
            f"(at most {self.max_gpu_nodes * self.gpus_per_node} GPUs; maxGpus "
            f"{self.max_gpus}), idle GPU nodes removed after {self.scale_down_delay_minutes} min"
        )


def parse_autoscaling(
    r: ConfigReader,
    *,
    cloud: str,
    kubernetes_version: str,
    gpus_per_node: int,
    min_nodes: int,
    desired_nodes: int,
    max_nodes: int,
) -> AutoscalingSettings:
    """Validate the autoscaling keys against the GPU pool the catalog resolved."""
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

    pool_gpus = max_nodes * gpus_per_node
    given = r.integer("maxGpus")
    max_gpus = given or pool_gpus
    if given < 0 or 0 < given < gpus_per_node:
        r.problem(
            "maxGpus",
            given,
            f"must be at least {gpus_per_node} (the GPUs of one node of the GPU pool), or 0 for "
            f"gpuPoolMaxNodes x {gpus_per_node}",
        )
        max_gpus = pool_gpus
    elif given > pool_gpus:
        r.problem(
            "maxGpus",
            given,
            f"is more than the GPU pool can ever hold: gpuPoolMaxNodes {max_nodes} x "
            f"{gpus_per_node} GPUs per node = {pool_gpus}; raise gpuPoolMaxNodes or lower maxGpus",
        )
        max_gpus = pool_gpus
    max_gpu_nodes = min(max_nodes, max_gpus // gpus_per_node)
    for key, nodes in (("gpuPoolMinNodes", min_nodes), ("gpuPoolDesiredNodes", desired_nodes)):
        if given > 0 and nodes * gpus_per_node > max_gpus:
            r.problem(
                key,
                nodes,
                f"{nodes} nodes x {gpus_per_node} GPUs exceed maxGpus {max_gpus}; at most "
                f"{max_gpu_nodes} nodes",
            )
    return AutoscalingSettings(
        scale_down_delay_minutes=delay,
        max_gpus=max_gpus,
        max_gpu_nodes=max_gpu_nodes,
        gpus_per_node=gpus_per_node,
        min_gpu_nodes=min_nodes,
    )
