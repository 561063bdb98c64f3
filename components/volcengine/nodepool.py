"""VKE node pools: a scaling group of ECS instances per pool, spot or pay-as-you-go.

Sources: volcengine/terraform-provider-volcenginecc@v0.0.53
internal/volcengine/vke/node_pool_resource_gen.go and Volcengine_VKE_NodePool.json.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_volcenginecc as volcenginecc

from components.cluster_handle import Taint
from components.settings.model import PoolSize

from .tags import tag_list

DISK_TYPE = "ESSD_PL0"
"""System and data disks: ESSD PL0 (system volume: ESSD_PL0 or ESSD_FlexPL,
node_pool_resource_gen.go:1743-1747)."""
SYSTEM_DISK_GB = 60
"""System volume, 40 to 2048 GiB for ESSD (node_pool_resource_gen.go:1722)."""
CONTAINER_DIR = "/var/lib/containerd"
RESERVED_NAME = "vke-default-nodepool"
"""The default pool's name, which no other pool may take (NodePool `name` description)."""


@dataclass(frozen=True)
class VkeNodePoolArgs:
    pool_name: str
    cluster_id: pulumi.Input[str]
    subnet_ids: Sequence[pulumi.Input[str]]
    instance_type: str
    spot: bool
    size: PoolSize
    data_disk_gb: int
    labels: Mapping[str, str]
    taints: Sequence[Taint]
    security_group_ids: Sequence[pulumi.Input[str]]
    tags: Mapping[str, str]


class VkeNodePool(pulumi.ComponentResource):
    node_pool_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: VkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:VkeNodePool", name, None, opts)
        if args.pool_name == RESERVED_NAME or not 2 <= len(args.pool_name) <= 64:
            raise ValueError(f"VKE node pool name {args.pool_name!r} is not allowed")
        node_config: dict[str, Any] = {
            "instance_type_ids": [args.instance_type],
            "subnet_ids": list(args.subnet_ids),
            "instance_charge_type": "PostPaid",
            # SpotAsPriceGo bids the market price, at most the pay-as-you-go price; spot needs
            # PostPaid (Volcengine_VKE_NodePool.json, SpotStrategy). RequiresReplace.
            "spot_strategy": "SpotAsPriceGo" if args.spot else "NoSpot",
            "security": {
                "security_group_ids": list(args.security_group_ids),
                "security_strategies": ["Hids"],
            },
            "system_volume": {"type": DISK_TYPE, "size": SYSTEM_DISK_GB},
            # The first data disk becomes the container storage (images, writable layers).
            "data_volumes": [
                {"type": DISK_TYPE, "size": args.data_disk_gb, "mount_point": CONTAINER_DIR}
            ],
            "additional_container_storage_enabled": True,
            "public_access_enabled": False,
            "tags": tag_list(args.tags),
        }
        if args.spot:
            # A reclaimed spot node is replaced ahead of time where VKE can (capacity
            # rebalance), and never silently by a pay-as-you-go one (the price would change).
            node_config["instances_distribution"] = {
                "capacity_rebalance": True,
                "compensate_with_on_demand": False,
            }
        pool = volcenginecc.vke.NodePool(
            f"{name}-pool",
            name=args.pool_name,
            cluster_id=args.cluster_id,
            auto_scaling={
                "enabled": True,
                "min_replicas": args.size.min_nodes,
                "desired_replicas": args.size.desired_nodes,
                "max_replicas": args.size.max_nodes,
                "subnet_policy": "ZoneBalance",
            },
            node_config=node_config,
            kubernetes_config={
                "labels": [{"key": k, "value": v} for k, v in sorted(args.labels.items())],
                "taints": [
                    {"key": t.key, "value": t.value, "effect": t.effect} for t in args.taints
                ],
                "cordon": False,
            },
            tags=tag_list(args.tags),
            # The autoscaler moves the desired count; Pulumi must not move it back.
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["autoScaling.desiredReplicas"]
            ),
        )
        self.node_pool_id = pool.node_pool_id
        self.register_outputs({"node_pool_id": self.node_pool_id})
