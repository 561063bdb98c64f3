"""AWS stack: network -> EKS cluster -> access -> node groups -> S3 -> IRSA, ending in a
ClusterHandle whose kubeconfig is usable (its principals admitted, nodes to run on)."""

from __future__ import annotations

import datetime as dt

import pulumi
import pulumi_aws as aws

from components.aws.autoscaler import (
    AWS_GPU_LABEL,
    ClusterAutoscalerRole,
    ClusterAutoscalerRoleArgs,
    discovery_tags,
    scale_from_zero_tags,
)
from components.aws.cluster import EksCluster, EksClusterArgs
from components.aws.cluster_access import (
    ClusterAccess,
    ClusterAccessArgs,
    admin_principals,
    deploying_principal_arn,
)
from components.aws.dataset_mount import MountpointS3Driver, MountpointS3DriverArgs
from components.aws.deployed_versions import deployed_versions
from components.aws.identity import (
    IRSA_ANNOTATION,
    ServiceAccountRole,
    ServiceAccountRoleArgs,
    bucket_access_policy,
)
from components.aws.network import AwsNetwork, AwsNetworkArgs
from components.aws.nodepool import ManagedNodeGroup, ManagedNodeGroupArgs, NodeRole, NodeRoleArgs
from components.aws.security_group import AdminSecurityGroup, AdminSecurityGroupArgs
from components.aws.storage import DataBucket, DataBucketArgs
from components.aws.workstation import GpuWorkstation, GpuWorkstationArgs
from components.cluster_handle import (
    GPU_TAINT,
    BucketRef,
    ClusterHandle,
    common_labels,
    gpu_pool_of,
)
from components.settings import Problem, Settings, SettingsError, eks_versions
from components.tags import stack_tags


def check_upgrade(settings: Settings) -> None:
    """Refuse a `kubernetesVersion` EKS would not move the deployed cluster to, before any
    resource exists (see components/aws/deployed_versions.py for where the answer comes from)."""
    wanted = settings.cluster.kubernetes_version
    deployed = deployed_versions(settings.name_prefix)
    problem = eks_versions.upgrade_problem(
        wanted, deployed.control_plane, deployed.node_groups.values()
    )
    if problem:
        raise SettingsError(
            settings.stack, [Problem("gpuinfra:kubernetesVersion", wanted, problem)]
        )


def build(settings: Settings) -> ClusterHandle:
    prefix = settings.name_prefix

    def tags(component: str) -> dict[str, str]:
        return stack_tags(settings.stack, component)

    check_upgrade(settings)
    partition = aws.get_partition().partition
    version = settings.cluster.kubernetes_version
    support = eks_versions.support(version, dt.date.today())
    if support.kind == "extended":
        pulumi.log.warn(support.describe(version))

    network = AwsNetwork(
        prefix,
        AwsNetworkArgs(
            vpc_cidr=settings.network.vpc_cidr,
            public_subnet_cidrs=settings.network.public_subnet_cidrs,
            private_subnet_cidrs=settings.network.private_subnet_cidrs,
            nat_gateways=settings.network.nat_gateways,
            region=settings.region,
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
    cluster = EksCluster(
        prefix,
        EksClusterArgs(
            cluster_name=prefix,
            kubernetes_version=settings.cluster.kubernetes_version,
            region=settings.region,
            partition=partition,
            subnet_ids=network.private_subnet_ids,
            endpoint_public=settings.access.api_endpoint_public,
            admin_cidrs=settings.access.admin_cidrs,
            log_types=settings.cluster.log_types,
            log_retention_days=settings.cluster.log_retention_days,
            deletion_protection=settings.cluster.deletion_protection,
            tags=tags("cluster"),
        ),
    )
    aws_settings = settings.aws
    access = ClusterAccess(
        prefix,
        ClusterAccessArgs(
            cluster_name=cluster.cluster_name,
            partition=partition,
            principal_arns=admin_principals(
                deploying_principal_arn(),
                aws_settings.cluster_admin_arns if aws_settings else (),
            ),
            tags=tags("cluster-access"),
        ),
    )
    node_role = NodeRole(prefix, NodeRoleArgs(partition=partition, tags=tags("nodes")))

    system_pool = settings.system_pool
    system_group = ManagedNodeGroup(
        f"{prefix}-system",
        ManagedNodeGroupArgs(
            cluster_name=cluster.cluster_name,
            node_role_arn=node_role.role_arn,
            subnet_ids=network.private_subnet_ids,
            instance_types=[system_pool.instance_type],
            ami_type="AL2023_x86_64_STANDARD",
            capacity_type="ON_DEMAND",
            size=system_pool.size,
            disk_size_gb=50,
            labels={"gpuinfra.io/pool": "system"},
            taints=[],
            kubernetes_version=version,
            tags=tags("system-pool"),
            depends_on=node_role.attachments,
            # EKS tags every managed group for the autoscaler's discovery: it resizes this too.
            autoscaled=True,
            autoscaler_tags=discovery_tags(prefix),
        ),
    )

    # One managed node group per GPU pool, each with its own labels, taints and the
    # scale-from-zero node template the Cluster Autoscaler plans that pool's first node from.
    pools = tuple(gpu_pool_of(pool) for pool in settings.require_gpu_pools())
    gpu_groups = []
    for pool, view in zip(settings.require_gpu_pools(), pools, strict=True):
        node_labels = {**view.node_labels, AWS_GPU_LABEL: pool.gpu_model}
        gpu_groups.append(
            ManagedNodeGroup(
                f"{prefix}-{pool.name}",
                ManagedNodeGroupArgs(
                    cluster_name=cluster.cluster_name,
                    node_role_arn=node_role.role_arn,
                    subnet_ids=network.private_subnet_ids,
                    instance_types=[pool.instance.instance_type],
                    # AL2023 with the NVIDIA driver and container toolkit (AL2 ended support
                    # 2025-11-26).
                    ami_type="AL2023_x86_64_NVIDIA",
                    capacity_type="SPOT" if pool.capacity_type == "spot" else "ON_DEMAND",
                    size=pool.size,
                    disk_size_gb=pool.disk_size_gb,
                    labels=node_labels,
                    taints=view.taints,
                    kubernetes_version=version,
                    tags=tags("gpu-pool"),
                    depends_on=node_role.attachments,
                    autoscaled=True,
                    autoscaler_tags={
                        **discovery_tags(prefix),
                        **scale_from_zero_tags(pool.gpus_per_node, node_labels, view.taints),
                    },
                ),
            )
        )
    autoscaling = settings.require_autoscaling()
    autoscaler = ClusterAutoscalerRole(
        prefix,
        ClusterAutoscalerRoleArgs(
            cluster_name=prefix,
            kubernetes_version=settings.cluster.kubernetes_version,
            region=settings.region,
            partition=partition,
            oidc_provider_arn=cluster.oidc_provider_arn,
            oidc_issuer_url=cluster.oidc_issuer_url,
            scale_down_delay_minutes=autoscaling.scale_down_delay_minutes,
            tags=tags("autoscaler"),
        ),
    )

    storage = settings.storage
    bucket = DataBucket(
        prefix,
        DataBucketArgs(
            bucket_name=storage.bucket_name,
            protect=storage.protect,
            noncurrent_version_expiration_days=storage.noncurrent_version_expiration_days,
            abort_incomplete_upload_days=storage.abort_incomplete_upload_days,
            tags=tags("storage"),
        ),
    )
    identity = settings.identity
    training_role = ServiceAccountRole(
        f"{prefix}-training",
        ServiceAccountRoleArgs(
            oidc_provider_arn=cluster.oidc_provider_arn,
            oidc_issuer_url=cluster.oidc_issuer_url,
            namespace=identity.namespace,
            service_account=identity.service_account,
            policy=bucket.bucket_arn.apply(bucket_access_policy),
            tags=tags("identity"),
        ),
    )

    # Training Jobs may mount datasets of the bucket read-only (`access: mount`).
    s3_csi = MountpointS3Driver(
        prefix,
        MountpointS3DriverArgs(
            cluster_name=cluster.cluster_name,
            oidc_provider_arn=cluster.oidc_provider_arn,
            oidc_issuer_url=cluster.oidc_issuer_url,
            bucket_arn=bucket.bucket_arn,
            tags=tags("datasets"),
            depends_on=(system_group, *gpu_groups),
        ),
    )

    # The GPU layer talks to the API server with this kubeconfig: it must wait until the
    # principals are admitted (else 401) and the node groups exist (else Deployments it awaits
    # have nowhere to run). An output that resolves only then carries those dependencies to
    # the Kubernetes provider built from it, in this stack or one reading it.
    ready: pulumi.Output[str] = pulumi.Output.all(
        cluster.kubeconfig,
        access.granted,
        system_group.node_group_name,
        *(group.node_group_name for group in gpu_groups),
    ).apply(lambda parts: str(parts[0]))
    kubeconfig: pulumi.Output[str] = pulumi.Output.secret(ready)
    handle = ClusterHandle(
        cloud="aws",
        cluster_name=cluster.cluster_name,
        kubeconfig=kubeconfig,
        gpu_node_labels=common_labels(pools),
        gpu_taint=GPU_TAINT,
        gpu_pools=pools,
        platform_runs_device_plugin=False,
        bucket=BucketRef(
            name=bucket.bucket_name,
            region=settings.region,
            endpoint=f"https://s3.{settings.region}.amazonaws.com",
            scheme="s3",
        ),
        training_namespace=identity.namespace,
        training_service_account=identity.service_account,
        service_account_annotations={IRSA_ANNOTATION: training_role.role_arn},
        autoscaler=autoscaler.spec,
        dataset_mount=s3_csi.mount,
    )

    pulumi.export("cloud", "aws")
    pulumi.export("region", settings.region)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterEndpoint", cluster.endpoint)
    pulumi.export("kubeconfig", kubeconfig)
    pulumi.export("kubernetesSupport", support.describe(version))
    pulumi.export("bucketName", bucket.bucket_name)
    pulumi.export("bucketUri", handle.bucket.uri)
    pulumi.export("trainingRoleArn", training_role.role_arn)
    pulumi.export("datasetMountRoleArn", s3_csi.role_arn)
    pulumi.export("gpuNodeScaling", autoscaling.summary("Cluster Autoscaler"))

    if settings.workstation is not None:
        public = settings.workstation.subnet == "public"
        workstation = GpuWorkstation(
            prefix,
            GpuWorkstationArgs(
                settings=settings.workstation,
                vpc_id=network.vpc_id,
                subnet_id=(network.public_subnet_ids if public else network.private_subnet_ids)[0],
                admin_security_group_id=admin.security_group_id,
                bucket_name=bucket.bucket_name,
                bucket_arn=bucket.bucket_arn,
                region=settings.region,
                tags=tags("workstation"),
            ),
        )
        workstation.export_outputs()
    return handle
