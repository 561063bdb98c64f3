"""Alibaba Cloud stack: VPC -> ACK Pro -> node pools -> OSS -> RRSA, ending in a ClusterHandle."""

from __future__ import annotations

import pulumi

from components.alicloud.autoscaler import AckAutoscaler, AckAutoscalerArgs
from components.alicloud.cluster import AckCluster, AckClusterArgs
from components.alicloud.dataset_mount import OssfsRrsa, OssfsRrsaArgs
from components.alicloud.identity import (
    RRSA_ROLE_ANNOTATION,
    RrsaRole,
    RrsaRoleArgs,
    bucket_access_policy,
)
from components.alicloud.network import AlicloudNetwork, AlicloudNetworkArgs
from components.alicloud.nodepool import (
    SPOT_RECLAIM_NOTICE,
    AckNodePool,
    AckNodePoolArgs,
    SpotSettings,
)
from components.alicloud.security_group import AdminSecurityGroup, AdminSecurityGroupArgs
from components.alicloud.storage import OssBucket, OssBucketArgs, oss_endpoint
from components.alicloud.workstation import GpuWorkstation, GpuWorkstationArgs
from components.cluster_handle import (
    GPU_TAINT,
    BucketRef,
    ClusterHandle,
    common_labels,
    gpu_pool_of,
)
from components.settings import Settings
from components.tags import stack_tags

DRIVER_LABEL = "ack.aliyun.com/nvidia-driver-version"
"""Node label ACK reads to install this NVIDIA driver version on a GPU node."""


def build(settings: Settings) -> ClusterHandle:
    ali = settings.alicloud
    if ali is None:
        raise ValueError("the Alibaba Cloud stack needs settings parsed with cloud: alicloud")
    prefix = settings.name_prefix

    def tags(component: str) -> dict[str, str]:
        return stack_tags(settings.stack, component)

    gpu_pools = settings.require_gpu_pools()
    pools = tuple(gpu_pool_of(pool) for pool in gpu_pools)

    network = AlicloudNetwork(
        prefix,
        AlicloudNetworkArgs(
            vpc_cidr=settings.network.vpc_cidr,
            public_subnet_cidrs=settings.network.public_subnet_cidrs,
            private_subnet_cidrs=settings.network.private_subnet_cidrs,
            # Zones that sell every pool's type (extra types are sold where their pool's is,
            # or ACK buys the pool's own type there).
            gpu_instance_types=[pool.instance.instance_type for pool in gpu_pools],
            tags=tags("network"),
        ),
    )
    admin = AdminSecurityGroup(
        prefix,
        AdminSecurityGroupArgs(
            vpc_id=network.vpc_id,
            admin_cidrs=settings.access.admin_cidrs,
            tags=tags("admin-access"),
        ),
    )
    cluster = AckCluster(
        prefix,
        AckClusterArgs(
            cluster_name=prefix,
            ack_version=ali.ack_version,
            vswitch_ids=network.node_vswitch_ids,
            endpoint_public=settings.access.api_endpoint_public,
            log_types=settings.cluster.log_types,
            log_retention_days=settings.cluster.log_retention_days,
            deletion_protection=settings.cluster.deletion_protection,
            pod_cidr=ali.pod_cidr,
            service_cidr=ali.service_cidr,
            tags=tags("cluster"),
        ),
    )
    # ACK's cluster group alone (advanced): the admin group is for the workstation, and
    # ECS refuses an instance in a basic and an advanced group at once.
    node_security_groups = [cluster.security_group_id]

    system_pool = settings.system_pool
    system = AckNodePool(
        f"{prefix}-system",
        AckNodePoolArgs(
            cluster_id=cluster.cluster_id,
            vswitch_ids=network.node_vswitch_ids,
            instance_types=[system_pool.instance_type],
            size=system_pool.size,
            # Fixed size: cluster services need nodes the autoscaler never removes.
            autoscale=False,
            scaling_type="cpu",
            disk_size_gb=60,
            labels={"gpuinfra.io/pool": "system"},
            taints=[],
            security_group_ids=node_security_groups,
            tags=tags("system-pool"),
        ),
    )

    # One autoscaled ACK pool per GPU pool: ACK's autoscaler plans each pool's first node from
    # the pool's own instance types, labels and taints.
    gpu_node_pools = []
    for pool, view in zip(gpu_pools, pools, strict=True):
        node_labels = dict(view.node_labels)
        if ali.driver_version:
            node_labels[DRIVER_LABEL] = ali.driver_version
        gpu_node_pools.append(
            AckNodePool(
                f"{prefix}-{pool.name}",
                AckNodePoolArgs(
                    cluster_id=cluster.cluster_id,
                    vswitch_ids=network.node_vswitch_ids,
                    instance_types=list(pool.instance_types),
                    size=pool.size,
                    autoscale=True,
                    scaling_type="gpu",
                    disk_size_gb=pool.disk_size_gb,
                    labels=node_labels,
                    taints=view.taints,
                    security_group_ids=node_security_groups,
                    tags=tags("gpu-pool"),
                    spot=SpotSettings(
                        strategy=pool.spot_strategy,
                        price_limit=pool.spot_max_price,
                        on_demand_fallback=pool.on_demand_fallback,
                    ),
                ),
            )
        )
    autoscaling = settings.require_autoscaling()
    AckAutoscaler(
        prefix,
        AckAutoscalerArgs(
            cluster_id=cluster.cluster_id,
            scale_down_delay_minutes=autoscaling.scale_down_delay_minutes,
            depends_on=tuple(gpu_node_pools),
        ),
    )

    storage = settings.storage
    bucket = OssBucket(
        prefix,
        OssBucketArgs(
            bucket_name=storage.bucket_name,
            name_prefix=prefix,
            protect=storage.protect,
            noncurrent_version_expiration_days=storage.noncurrent_version_expiration_days,
            abort_incomplete_upload_days=storage.abort_incomplete_upload_days,
            tags=tags("storage"),
        ),
    )
    identity = settings.identity
    training_role = RrsaRole(
        f"{prefix}-training",
        RrsaRoleArgs(
            role_name=f"{prefix}-training",
            oidc_provider_arn=cluster.rrsa_oidc_provider_arn,
            oidc_issuer_url=cluster.rrsa_oidc_issuer_url,
            namespace=identity.namespace,
            service_account=identity.service_account,
            policy=bucket.bucket_name.apply(bucket_access_policy),
            tags=tags("identity"),
        ),
    )

    # Training Jobs may mount datasets of the bucket read-only through ossfs (`access: mount`).
    ossfs = OssfsRrsa(
        prefix,
        OssfsRrsaArgs(
            role_name=f"{prefix}-ossfs",
            oidc_provider_arn=cluster.rrsa_oidc_provider_arn,
            oidc_issuer_url=cluster.rrsa_oidc_issuer_url,
            bucket_name=bucket.bucket_name,
            tags=tags("datasets"),
        ),
    )

    endpoint = oss_endpoint(settings.region, internal=True)  # pods run inside the region
    handle = ClusterHandle(
        cloud="alicloud",
        cluster_name=cluster.cluster_name,
        kubeconfig=cluster.kubeconfig,
        gpu_node_labels=common_labels(pools),
        gpu_taint=GPU_TAINT,
        gpu_pools=pools,
        # ACK installs the NVIDIA device plugin on GPU nodes itself: a second one would
        # advertise every GPU twice.
        platform_runs_device_plugin=True,
        bucket=BucketRef(
            name=bucket.bucket_name, region=settings.region, endpoint=endpoint, scheme="oss"
        ),
        training_namespace=identity.namespace,
        training_service_account=identity.service_account,
        service_account_annotations={RRSA_ROLE_ANNOTATION: training_role.role_name},
        # ack-pod-identity-webhook injects RRSA credentials only into labelled namespaces.
        training_namespace_labels={"pod-identity.alibabacloud.com/injection": "on"},
        # ACK does not drain a spot node before ECS reclaims it: the GPU layer's agent does.
        spot_reclaim_notice=(
            SPOT_RECLAIM_NOTICE if any(p.capacity_type == "spot" for p in pools) else None
        ),
        nodes=(system,),  # awaited workloads of the GPU layer need a node to run on
        dataset_mount=ossfs.mount,
    )

    pulumi.export("cloud", "alicloud")
    pulumi.export("region", settings.region)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterId", cluster.cluster_id)
    pulumi.export("kubernetesVersion", cluster.version)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("apiEndpoint", cluster.api_endpoint)
    pulumi.export("natGatewayId", cluster.nat_gateway_id)  # created by ACK with the cluster
    pulumi.export("bucketName", bucket.bucket_name)
    pulumi.export("bucketUri", handle.bucket.uri)
    pulumi.export("bucketEndpoint", endpoint)
    pulumi.export("trainingRoleName", training_role.role_name)
    pulumi.export("trainingRoleArn", training_role.role_arn)
    pulumi.export("datasetMountRoleName", ossfs.role_name)
    pulumi.export("rrsaOidcProviderArn", cluster.rrsa_oidc_provider_arn)
    pulumi.export("gpuNodeScaling", autoscaling.summary("ACK cluster-autoscaler"))

    if settings.workstation is not None:
        public = settings.workstation.subnet == "public"
        workstation = GpuWorkstation(
            prefix,
            GpuWorkstationArgs(
                settings=settings.workstation,
                # A vSwitch in a zone that sells the GPU pools' types (see AlicloudNetwork),
                # handed on once the cluster exists: a private workstation's egress (driver,
                # packages at first boot) is the SNAT entry ACK creates with the cluster.
                vswitch_id=pulumi.Output.all(
                    (network.public_vswitch_ids if public else network.node_vswitch_ids)[0],
                    cluster.cluster_id,
                ).apply(lambda ids: str(ids[0])),
                admin_security_group_id=admin.security_group_id,
                bucket_name=bucket.bucket_name,
                region=settings.region,
                tags=tags("workstation"),
            ),
        )
        workstation.export_outputs()
    return handle
