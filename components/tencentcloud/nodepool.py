"""TKE node pools: an auto-scaling group of CVMs per pool, spot or pay-as-you-go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from components.catalog.tencentcloud_gpu_drivers import GpuDriverCombo
from components.cluster_handle import SpotReclaimNotice, Taint
from components.settings.model import PoolSize

SPOT_RECLAIM_NOTICE = SpotReclaimNotice(
    termination_time_url="http://metadata.tencentyun.com/latest/meta-data/spot/termination-time"
)
"""CVM answers 404 here until a spot instance is scheduled for reclaim, then its time (CVM
docs 213/32487, "Querying the repossession status of a spot instance", 2024-01-08). TKE
does not drain reclaimed nodes, so the GPU layer does."""
NODE_OS = "tlinux3.1x86_64"
"""TencentOS Server 3.1, the OS TKE's GPU driver install supports (DescribeGPUInfo's
example uses it: https://cloud.tencent.com/document/api/457/129269)."""
CONTAINERD_DIR = "/var/lib/containerd"
SYSTEM_DISK_GB = 50
DISK_TYPE = "CLOUD_PREMIUM"


@dataclass(frozen=True)
class GpuSoftware:
    """What TKE installs on each GPU node (`node_config.gpu_args`)."""

    combo: GpuDriverCombo
    install_cuda: bool
    install_cudnn: bool


@dataclass(frozen=True)
class TkeNodePoolArgs:
    cluster_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    subnet_ids: Sequence[pulumi.Input[str]]
    instance_type: str
    charge_type: Literal["SPOTPAID", "POSTPAID_BY_HOUR"]
    spot_max_price: str | None
    size: PoolSize
    data_disk_gb: int
    """Encrypted data disk holding container images and pod scratch space."""
    labels: Mapping[str, str]
    taints: Sequence[Taint]
    security_group_ids: Sequence[pulumi.Input[str]]
    gpu: GpuSoftware | None
    tags: Mapping[str, str]


class TkeNodePool(pulumi.ComponentResource):
    node_pool_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: TkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:TkeNodePool", name, None, opts)
        spot = args.charge_type == "SPOTPAID"
        # The launch configuration can encrypt data disks but not the system disk; the
        # encrypted data disk is mounted where containerd keeps images and pod data.
        launch: dict[str, Any] = {
            "instance_type": args.instance_type,
            "instance_charge_type": args.charge_type,
            "system_disk_type": DISK_TYPE,
            "system_disk_size": SYSTEM_DISK_GB,
            "data_disks": [
                {
                    "disk_type": DISK_TYPE,
                    "disk_size": args.data_disk_gb,
                    "encrypt": True,
                    "delete_with_instance": True,
                }
            ],
            "security_group_ids": list(args.security_group_ids),
            "public_ip_assigned": False,
            "internet_max_bandwidth_out": 0,
            "enhanced_security_service": True,
            "enhanced_monitor_service": True,
            "host_name_style": "UNIQUE",
            "instance_name": name,
        }
        if spot:
            # One-time spot: a reclaimed instance is not restarted; the group replaces it.
            launch["spot_instance_type"] = "one-time"
            if args.spot_max_price is not None:
                launch["spot_max_price"] = args.spot_max_price
        node_config: dict[str, Any] = {
            "data_disks": [
                {
                    "disk_type": DISK_TYPE,
                    "disk_size": args.data_disk_gb,
                    "auto_format_and_mount": True,
                    "file_system": "ext4",
                    "mount_target": CONTAINERD_DIR,
                }
            ],
        }
        if args.gpu is not None:
            node_config["gpu_args"] = gpu_args(args.gpu)
        pool = tencentcloud.kubernetes.NodePool(
            f"{name}-pool",
            name=name,
            cluster_id=args.cluster_id,
            vpc_id=args.vpc_id,
            subnet_ids=list(args.subnet_ids),
            node_os=NODE_OS,
            min_size=args.size.min_nodes,
            desired_capacity=args.size.desired_nodes,
            max_size=args.size.max_nodes,
            enable_auto_scale=True,
            multi_zone_subnet_policy="EQUALITY",
            retry_policy="INCREMENTAL_INTERVALS",
            # Scale-in and pool deletion terminate the CVMs instead of leaving them billed.
            delete_keep_instance=False,
            auto_scaling_config=launch,
            node_config=node_config,
            labels=dict(args.labels),
            taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in args.taints],
            tags=dict(args.tags),
            # The autoscaler moves the desired count; Pulumi must not move it back.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["desiredCapacity"]),
        )
        self.node_pool_id = pool.id
        self.register_outputs({"node_pool_id": self.node_pool_id})


def gpu_args(software: GpuSoftware) -> dict[str, Any]:
    combo = software.combo
    args: dict[str, Any] = {
        "mig_enable": False,
        "driver": {"version": combo.driver, "name": combo.driver_name},
    }
    if software.install_cuda:
        args["cuda"] = {"version": combo.cuda, "name": combo.cuda_name}
    if software.install_cudnn:
        args["cudnn"] = {"version": combo.cudnn, "name": combo.cudnn_name}
    return args
