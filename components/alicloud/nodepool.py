"""ACK node pools: a fixed-size CPU system pool and an autoscaled, tainted GPU pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_alicloud as alicloud

from components.cluster_handle import SpotReclaimNotice, Taint
from components.settings.model import PoolSize, SpotStrategy

SPOT_RECLAIM_NOTICE = SpotReclaimNotice(
    termination_time_url="http://100.100.100.200/latest/meta-data/instance/spot/termination-time",
    token_url="http://100.100.100.200/latest/api/token",
    token_ttl_header="X-aliyun-ecs-metadata-token-ttl-seconds",
    token_header="X-aliyun-ecs-metadata-token",
)
"""ECS announces a spot reclaim about 5 minutes ahead in this metadata item (ECS docs "What
are preemptible instances", 2025-01-20; "Instance metadata": the release time, UTC). ACK
only notifies (ack-node-problem-detector), it does not drain, so the GPU layer does."""
IMAGE_TYPE = "AliyunLinux3"
"""Alibaba Cloud Linux 3: ACK installs the NVIDIA driver on it for GPU types."""
RUNTIME = "containerd"
DISK_CATEGORY = "cloud_essd"


@dataclass(frozen=True)
class SpotSettings:
    strategy: SpotStrategy
    price_limit: str | None = None
    """Per instance-hour; only with `SpotWithPriceLimit`."""
    on_demand_fallback: bool = True


@dataclass(frozen=True)
class AckNodePoolArgs:
    cluster_id: pulumi.Input[str]
    vswitch_ids: Sequence[pulumi.Input[str]]
    instance_types: Sequence[str]
    """Types the pool may use. A spot pool buys the cheapest per vCPU first, not in this
    order (see `multi_az_policy` below)."""
    size: PoolSize
    autoscale: bool
    """True: the cluster autoscaler moves the pool between min and max (min 0 allowed).
    False: a fixed pool of `size.desired_nodes`."""
    scaling_type: str
    """ACK's instance class for autoscaling: `cpu` or `gpu`."""
    disk_size_gb: int
    labels: Mapping[str, str]
    taints: Sequence[Taint]
    security_group_ids: Sequence[pulumi.Input[str]]
    """ACK's cluster security group alone: nodes need nothing the admin group opens."""
    tags: Mapping[str, str]
    spot: SpotSettings = field(default_factory=lambda: SpotSettings(strategy="NoSpot"))


class AckNodePool(pulumi.ComponentResource):
    node_pool_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: AckNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:AckNodePool", name, None, opts)
        spot = args.spot
        is_spot = spot.strategy != "NoSpot"
        pool = alicloud.cs.NodePool(
            f"{name}-pool",
            node_pool_name=name,
            cluster_id=args.cluster_id,
            vswitch_ids=list(args.vswitch_ids),
            instance_types=list(args.instance_types),
            instance_charge_type="PostPaid",
            scaling_config=(
                {
                    "enable": True,
                    "min_size": args.size.min_nodes,
                    "max_size": args.size.max_nodes,
                    "type": args.scaling_type,
                }
                if args.autoscale
                else None
            ),
            desired_size=None if args.autoscale else str(args.size.desired_nodes),
            image_type=IMAGE_TYPE,
            runtime_name=RUNTIME,
            system_disk_category=DISK_CATEGORY,
            system_disk_size=args.disk_size_gb,
            system_disk_encrypted=True,
            system_disk_encrypt_algorithm="aes-256",
            # Hardened metadata mode (tokens required), the ECS counterpart of IMDSv2.
            instance_metadata_options={"http_tokens": "required"},
            # Required by CreateClusterNodePool (`security_group_ids` or the deprecated
            # `security_group_id`); all of one type (basic or advanced), or ECS refuses.
            security_group_ids=list(args.security_group_ids),
            labels=[{"key": k, "value": v} for k, v in args.labels.items()],
            taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in args.taints],
            spot_strategy=spot.strategy,
            spot_price_limits=(
                [{"instance_type": t, "price_limit": spot.price_limit} for t in args.instance_types]
                if spot.strategy == "SpotWithPriceLimit"
                else None
            ),
            # COST_OPTIMIZED creates instances "based on the vCPU unit price in ascending
            # order", spot first (CreateClusterNodePool `multi_az_policy`,
            # alibabacloud-go/cs-20151215@v7.6.0 client/create_cluster_node_pool_request_model.go:
            # 1644-1661): the listed type with the cheapest vCPU wins, not the first listed, so
            # with [gn7i-c8g1.2xlarge, gn7i-c16g1.4xlarge] the larger node may come first. It is
            # the only policy under which on-demand compensation works (same file, :1528), and
            # PRIORITY orders vSwitches, not types. Settings therefore only allow extra types
            # with the pool's GPUs, and the README says what the order really is.
            multi_az_policy="COST_OPTIMIZED" if is_spot else "BALANCE",
            # Sent only when true: Create reads it with GetOk
            # (resource_alicloud_cs_kubernetes_node_pool.go:1252), so a false never reaches
            # the API; leaving it out says the same thing without pretending otherwise.
            compensate_with_on_demand=True if is_spot and spot.on_demand_fallback else None,
            spot_instance_remedy=True if is_spot else None,
            spot_instance_pools=min(len(args.instance_types), 10) if is_spot else None,
            on_demand_base_capacity="0" if is_spot else None,
            on_demand_percentage_above_base_capacity="0" if is_spot else None,
            install_cloud_monitor=True,
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.node_pool_id = pool.node_pool_id
        self.register_outputs({"node_pool_id": self.node_pool_id})
