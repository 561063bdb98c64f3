"""Tencent Cloud stack: VPC -> TKE -> node pools -> COS -> pod identity, ending in a
ClusterHandle."""

from __future__ import annotations

from typing import Literal

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

from components.cluster_handle import (
    GPU_TAINT,
    BucketRef,
    ClusterHandle,
    common_labels,
    gpu_pool_of,
)
from components.settings import Settings
from components.settings.model import GpuPoolSettings
from components.tags import stack_tags
from components.tencentcloud.cluster import (
    TkeAutoscaler,
    TkeCluster,
    TkeClusterArgs,
    TkeEndpoint,
    TkeEndpointArgs,
)
from components.tencentcloud.identity import (
    POD_IDENTITY_ANNOTATION,
    PodIdentity,
    PodIdentityArgs,
    ServiceAccountRole,
    ServiceAccountRoleArgs,
    bucket_access_policy,
)
from components.tencentcloud.network import TencentNetwork, TencentNetworkArgs
from components.tencentcloud.node_key import NodeKeyPair, NodeKeyPairArgs
from components.tencentcloud.nodepool import (
    SPOT_RECLAIM_NOTICE,
    GpuSoftware,
    TkeNodePool,
    TkeNodePoolArgs,
)
from components.tencentcloud.security_group import (
    AdminSecurityGroup,
    AdminSecurityGroupArgs,
    ApiSecurityGroup,
    ApiSecurityGroupArgs,
    NodeSecurityGroup,
    NodeSecurityGroupArgs,
)
from components.tencentcloud.storage import CosBucket, CosBucketArgs, cos_endpoint
from components.tencentcloud.workstation import GpuWorkstation, GpuWorkstationArgs

MAX_PODS_PER_NODE = 64

PLATFORM_RUNS_DEVICE_PLUGIN = True
"""TKE advertises `nvidia.com/gpu` on its GPU nodes itself, so the GPU layer installs no second
NVIDIA device plugin there (two plugins registering one resource replace each other's
registration in the kubelet: NVIDIA/k8s-device-plugin issue 255). Sources, none of them a
sentence naming the DaemonSet of a standard cluster:
- TKE's qGPU guide (https://www.tencentcloud.com/document/product/457/59103, updated
  2024-02-28): GPU nodes without qGPU use "the NVIDIA allocation method" (whole
  `nvidia.com/gpu` cards) that TKE's node pools provide, qGPU nodes `tke.cloud.tencent.com/qgpu-*`.
- TKE's edge-cluster guide (tencentyun/qcloud-documents, product/计算与网络/容器服务/
  边缘集群指南/边缘集群管理/节点管理.md, "边缘节点带GPU相关"): TKE ships an
  `nvidia-device-plugin` DaemonSet itself.
- tkestack/tke, the open-source TKE, deploys NVIDIA's device plugin on every physical-GPU
  cluster (`EnsureNvidiaDevicePlugin`; tkestack/tke PR 1586 "only install nvidia device
  plugin on pgpu").
Not confirmed on a live cluster: with a GPU node up, `kubectl -n kube-system get ds` shows
TKE's plugin; if none is there, set `gpuinfra:devicePlugin: always`."""


def _charge_type(pool: GpuPoolSettings) -> Literal["SPOTPAID", "POSTPAID_BY_HOUR"]:
    return "SPOTPAID" if pool.capacity_type == "spot" else "POSTPAID_BY_HOUR"


def build(settings: Settings) -> ClusterHandle:
    tc = settings.tencentcloud
    if tc is None:
        raise ValueError("the Tencent Cloud stack needs settings.tencentcloud")
    prefix = settings.name_prefix

    def tags(component: str) -> dict[str, str]:
        return stack_tags(settings.stack, component)

    gpu_pools = settings.require_gpu_pools()
    pools = tuple(gpu_pool_of(pool) for pool in gpu_pools)
    network = TencentNetwork(
        prefix,
        TencentNetworkArgs(
            vpc_cidr=settings.network.vpc_cidr,
            subnet_cidrs=settings.network.private_subnet_cidrs,
            gpu_offers=[(p.instance.instance_type, _charge_type(p)) for p in gpu_pools],
            nat_gateways=settings.network.nat_gateways,
            tags=tags("network"),
            zones=tc.zones,
        ),
    )
    access = settings.access
    admin = AdminSecurityGroup(
        prefix, AdminSecurityGroupArgs(admin_cidrs=access.admin_cidrs, tags=tags("admin-access"))
    )
    nodes_sg = NodeSecurityGroup(
        prefix,
        NodeSecurityGroupArgs(
            internal_cidrs=[settings.network.vpc_cidr, tc.pod_cidr], tags=tags("nodes")
        ),
    )
    cluster = TkeCluster(
        prefix,
        TkeClusterArgs(
            cluster_name=prefix,
            cluster_version=tc.cluster_version,
            region=settings.region,
            vpc_id=network.vpc_id,
            pod_cidr=tc.pod_cidr,
            service_cidr=tc.service_cidr,
            max_services=tc.max_services,
            max_pods_per_node=MAX_PODS_PER_NODE,
            deletion_protection=settings.cluster.deletion_protection,
            tags=tags("cluster"),
            autoscaler=TkeAutoscaler(
                scale_down_delay_minutes=settings.require_autoscaling().scale_down_delay_minutes
            ),
        ),
    )
    node_security_groups = [nodes_sg.security_group_id, admin.security_group_id]
    node_key = NodeKeyPair(prefix, NodeKeyPairArgs(name_prefix=prefix, tags=tags("nodes")))

    system_pool = settings.system_pool
    system = TkeNodePool(
        f"{prefix}-system",
        TkeNodePoolArgs(
            pool_name="system",
            cluster_id=cluster.cluster_id,
            vpc_id=network.vpc_id,
            subnet_ids=network.subnet_ids,
            instance_type=system_pool.instance_type,
            charge_type="POSTPAID_BY_HOUR",
            spot_max_price=None,
            size=system_pool.size,
            data_disk_gb=50,
            labels={"gpuinfra.io/pool": "system"},
            taints=[],
            security_group_ids=node_security_groups,
            key_id=node_key.key_id,
            gpu=None,
            tags=tags("system-pool"),
        ),
    )
    software = (
        GpuSoftware(tc.gpu_software, tc.install_cuda, tc.install_cudnn)
        if tc.gpu_software is not None
        else None
    )
    # One TKE pool per GPU pool (TKE's autoscaler plans each from its own launch
    # configuration, labels and taints); its TKE name is the pool's name (at most 16).
    for pool, view in zip(gpu_pools, pools, strict=True):
        TkeNodePool(
            f"{prefix}-{pool.name}",
            TkeNodePoolArgs(
                pool_name=pool.name,
                cluster_id=cluster.cluster_id,
                vpc_id=network.vpc_id,
                subnet_ids=network.subnet_ids,
                instance_type=pool.instance.instance_type,
                charge_type=_charge_type(pool),
                spot_max_price=pool.spot_max_price,
                size=pool.size,
                data_disk_gb=pool.disk_size_gb,
                labels=view.node_labels,
                taints=view.taints,
                security_group_ids=node_security_groups,
                key_id=node_key.key_id,
                gpu=software,
                tags=tags("gpu-pool"),
            ),
        )

    api_sg = (
        ApiSecurityGroup(
            prefix, ApiSecurityGroupArgs(admin_cidrs=access.admin_cidrs, tags=tags("api-access"))
        )
        if access.api_endpoint_public
        else None
    )
    endpoint = TkeEndpoint(
        prefix,
        TkeEndpointArgs(
            cluster_id=cluster.cluster_id,
            subnet_id=network.subnet_ids[0],
            public=access.api_endpoint_public,
            public_security_group_id=api_sg.security_group_id if api_sg else None,
            depends_on=[system],
        ),
    )

    storage = settings.storage
    bucket = CosBucket(
        prefix,
        CosBucketArgs(
            bucket_name=tc.bucket_name,
            protect=storage.protect,
            noncurrent_version_expiration_days=storage.noncurrent_version_expiration_days,
            abort_incomplete_upload_days=storage.abort_incomplete_upload_days,
            tags=tags("storage"),
        ),
    )
    identity = settings.identity
    pod_identity = PodIdentity(prefix, PodIdentityArgs(cluster_id=cluster.cluster_id))
    account = tencentcloud.user.get_info_output()
    training_role = ServiceAccountRole(
        f"{prefix}-training",
        ServiceAccountRoleArgs(
            account_uin=account.owner_uin,
            cluster_id=cluster.cluster_id,
            issuer=pod_identity.issuer,
            namespace=identity.namespace,
            service_account=identity.service_account,
            policy=bucket.bucket_name.apply(
                lambda name: bucket_access_policy(settings.region, tc.app_id, name)
            ),
            tags=tags("identity"),
        ),
    )

    handle = ClusterHandle(
        cloud="tencentcloud",
        cluster_name=cluster.cluster_name,
        kubeconfig=endpoint.kubeconfig,
        gpu_node_labels=common_labels(pools),
        gpu_taint=GPU_TAINT,
        gpu_pools=pools,
        platform_runs_device_plugin=PLATFORM_RUNS_DEVICE_PLUGIN,
        bucket=BucketRef(
            name=bucket.bucket_name,
            region=settings.region,
            endpoint=cos_endpoint(settings.region),
            scheme="cosn",
        ),
        training_namespace=identity.namespace,
        training_service_account=identity.service_account,
        service_account_annotations={POD_IDENTITY_ANNOTATION: training_role.role_arn},
        # TKE does not drain a spot node before CVM reclaims it: the GPU layer's agent does.
        spot_reclaim_notice=(
            SPOT_RECLAIM_NOTICE if any(p.capacity_type == "spot" for p in pools) else None
        ),
        nodes=(system,),  # awaited workloads of the GPU layer need a node to run on
    )

    pulumi.export("cloud", "tencentcloud")
    pulumi.export("region", settings.region)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterId", cluster.cluster_id)
    pulumi.export("clusterEndpoint", endpoint.endpoint)
    pulumi.export("kubeconfig", endpoint.kubeconfig)
    pulumi.export("bucketName", bucket.bucket_name)
    pulumi.export("bucketUri", handle.bucket.uri)
    pulumi.export("bucketEndpoint", handle.bucket.endpoint)
    pulumi.export("trainingRoleArn", training_role.role_arn)
    pulumi.export("gpuNodeScaling", settings.require_autoscaling().summary("TKE autoscaler"))
    pulumi.export("zones", network.zones)
    pulumi.export("zoneSource", network.zone_source)

    if settings.workstation is not None:
        workstation = GpuWorkstation(
            prefix,
            GpuWorkstationArgs(
                settings=settings.workstation,
                vpc_id=network.vpc_id,
                # Tencent subnets are neither public nor private: a public IP decides.
                subnet_id=network.subnet_ids[0],
                availability_zone=network.zones[0],
                admin_security_group_id=admin.security_group_id,
                bucket_name=bucket.bucket_name,
                app_id=tc.app_id,
                region=settings.region,
                tags=tags("workstation"),
            ),
        )
        workstation.export_outputs()
    return handle
