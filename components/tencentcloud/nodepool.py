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
"""Where the encrypted data disk is mounted, and the node's container directory
(`docker_graph_path`): images and containers' writable layers live on the encrypted disk. The
provider sends `docker_graph_path` on every create, `/var/lib/docker` unless set
(terraform-provider-tencentcloud@v1.82.42
tencentcloud/services/tke/resource_tc_kubernetes_node_pool.go:151-157, schema default;
resource_tc_kubernetes_cluster_attachment_extension.go:537-539 sends it as
`InstanceAdvancedSettings.DockerGraphPath`), so it is set to the mount point: whether TKE
reads it as containerd's root or not, containerd's data is on the data disk."""
SYSTEM_DISK_GB = 50
DISK_TYPE = "CLOUD_PREMIUM"
SPOT_INSTANCE_TYPE = "one-time"
"""The only spot type the launch configuration takes (resource_tc_kubernetes_node_pool.go:384-389,
validator `one-time`): a reclaimed instance is not restarted; the group replaces it."""
POOL_NAME_MAX = 25
"""TKE node pool names: at most 25 characters (resource_tc_kubernetes_node_pool.go:42-46)."""


@dataclass(frozen=True)
class GpuSoftware:
    """What TKE installs on each GPU node (`node_config.gpu_args`)."""

    combo: GpuDriverCombo
    install_cuda: bool
    install_cudnn: bool


@dataclass(frozen=True)
class TkeNodePoolArgs:
    pool_name: str
    """The pool's name in TKE (unique within the cluster, at most `POOL_NAME_MAX`)."""
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
    """In order: the first is the instances' primary group."""
    key_id: pulumi.Input[str]
    """The CVM key pair nodes accept for SSH: Create needs a key or a password
    (resource_tc_kubernetes_node_pool_extension.go:1025-1049) and a key is never in the
    launch configuration in plain text."""
    gpu: GpuSoftware | None
    tags: Mapping[str, str]


class TkeNodePool(pulumi.ComponentResource):
    node_pool_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: TkeNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:TkeNodePool", name, None, opts)
        if len(args.pool_name) > POOL_NAME_MAX:
            raise ValueError(f"TKE node pool name {args.pool_name!r} exceeds {POOL_NAME_MAX}")
        spot = args.charge_type == "SPOTPAID"
        if spot and not args.spot_max_price:
            raise ValueError("a SPOTPAID pool needs spot_max_price (settings require it)")
        # The launch configuration can encrypt data disks but not the system disk (its
        # SystemDisk takes a type and a size only); the encrypted data disk holds containerd's
        # images and containers. Pod volumes (emptyDir) and logs stay on the system disk.
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
            # `security_group_ids` is refused at Create (an unordered set):
            # resource_tc_kubernetes_node_pool_extension.go:1051-1056.
            "orderly_security_group_ids": list(args.security_group_ids),
            "key_ids": [args.key_id],
            "public_ip_assigned": False,
            "internet_max_bandwidth_out": 0,
            "enhanced_security_service": True,
            "enhanced_monitor_service": True,
            "host_name_style": "UNIQUE",
            "instance_name": name,
        }
        if spot:
            launch["spot_instance_type"] = SPOT_INSTANCE_TYPE
            launch["spot_max_price"] = args.spot_max_price
        node_config: dict[str, Any] = {
            "docker_graph_path": CONTAINERD_DIR,
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
            name=args.pool_name,
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
