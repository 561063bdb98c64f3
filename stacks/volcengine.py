"""Volcano Engine stack: VPC -> VKE (private endpoint, IRSA) -> node pools -> TOS -> IRSA role,
ending in a ClusterHandle.

Provider: pulumi-volcenginecc 0.0.45 (Cloud Control), bridging
volcengine/terraform-provider-volcenginecc v0.0.53. Why this provider and not the
Terraform-bridged pulumi-volcengine: see the README's Volcano Engine section.
"""

from __future__ import annotations

import pulumi

from components.cluster_handle import (
    GPU_TAINT,
    BucketRef,
    ClusterHandle,
    common_labels,
    gpu_pool_of,
)
from components.settings import Settings
from components.tags import stack_tags
from components.volcengine.cluster import (
    VkeAddons,
    VkeAddonsArgs,
    VkeCluster,
    VkeClusterArgs,
    VkeKubeconfig,
    VkeKubeconfigArgs,
)
from components.volcengine.identity import (
    INJECTION_LABEL,
    ROLE_TRN_ANNOTATION,
    ServiceAccountRole,
    ServiceAccountRoleArgs,
    bucket_access_policy,
)
from components.volcengine.network import VolcengineNetwork, VolcengineNetworkArgs
from components.volcengine.nodepool import VkeNodePool, VkeNodePoolArgs
from components.volcengine.security_group import (
    AdminSecurityGroup,
    AdminSecurityGroupArgs,
    NodeSecurityGroup,
    NodeSecurityGroupArgs,
)
from components.volcengine.storage import TosBucket, TosBucketArgs, tos_s3_endpoint

PLATFORM_RUNS_DEVICE_PLUGIN = False
"""The GPU layer installs NVIDIA's device plugin: this stack installs no VKE GPU add-on, and no
Volcano Engine page found here says VKE runs one on a plain node pool. If `kubectl -n
kube-system get ds` shows one on a GPU node, set `gpuinfra:devicePlugin: never`."""

"""Where `pulumi up` runs (REACHABILITY.md). With `gpuLayer: separate` (issue 16) the cluster
stack needs only cloud APIs and the GPU-layer stack runs inside the VPC."""


def build(settings: Settings) -> ClusterHandle:
    ve = settings.volcengine
    if ve is None:
        raise ValueError("the Volcano Engine stack needs settings.volcengine")
    prefix = settings.name_prefix

    def tags(component: str) -> dict[str, str]:
        return stack_tags(settings.stack, component)

    gpu_pools = settings.require_gpu_pools()
    pools = tuple(gpu_pool_of(pool) for pool in gpu_pools)
    network = VolcengineNetwork(
        prefix,
        VolcengineNetworkArgs(
            vpc_cidr=settings.network.vpc_cidr,
            subnet_cidrs=settings.network.private_subnet_cidrs,
            zones=ve.zones,
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
    nodes_sg = NodeSecurityGroup(
        prefix,
        NodeSecurityGroupArgs(
            vpc_id=network.vpc_id,
            internal_cidrs=[settings.network.vpc_cidr, ve.pod_cidr, ve.service_cidr],
            tags=tags("nodes"),
        ),
    )
    cluster = VkeCluster(
        prefix,
        VkeClusterArgs(
            cluster_name=prefix,
            kubernetes_version=settings.cluster.kubernetes_version,
            subnet_ids=network.subnet_ids,
            pod_cidr=ve.pod_cidr,
            service_cidr=ve.service_cidr,
            deletion_protection=settings.cluster.deletion_protection,
            tags=tags("cluster"),
        ),
    )
    node_security_groups = [nodes_sg.security_group_id, admin.security_group_id]
    system_pool = settings.system_pool
    system = VkeNodePool(
        f"{prefix}-system",
        VkeNodePoolArgs(
            pool_name="system",
            cluster_id=cluster.cluster_id,
            subnet_ids=network.subnet_ids,
            instance_type=system_pool.instance_type,
            spot=False,
            size=system_pool.size,
            data_disk_gb=50,
            labels={"gpuinfra.io/pool": "system"},
            taints=[],
            security_group_ids=node_security_groups,
            tags=tags("system-pool"),
        ),
    )
    # One VKE pool per GPU pool, each autoscaled by VKE's cluster-autoscaler add-on from its
    # own instance type, labels and taints; its VKE name is the pool's name.
    for pool, view in zip(gpu_pools, pools, strict=True):
        VkeNodePool(
            f"{prefix}-{pool.name}",
            VkeNodePoolArgs(
                pool_name=pool.name,
                cluster_id=cluster.cluster_id,
                subnet_ids=network.subnet_ids,
                instance_type=pool.instance.instance_type,
                spot=pool.capacity_type == "spot",
                size=pool.size,
                data_disk_gb=pool.disk_size_gb,
                labels=view.node_labels,
                taints=view.taints,
                security_group_ids=node_security_groups,
                tags=tags("gpu-pool"),
            ),
        )
    VkeAddons(prefix, VkeAddonsArgs(cluster_id=cluster.cluster_id, depends_on=[system]))
    kubeconfig = VkeKubeconfig(
        prefix, VkeKubeconfigArgs(cluster_id=cluster.cluster_id, depends_on=[system])
    )

    storage = settings.storage
    bucket = TosBucket(
        prefix,
        TosBucketArgs(
            bucket_name=ve.bucket_name,
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
            oidc_trn=cluster.irsa_oidc_trn,
            issuer=cluster.irsa_issuer,
            namespace=identity.namespace,
            service_account=identity.service_account,
            policy_document=bucket.bucket_name.apply(bucket_access_policy),
            tags=tags("identity"),
        ),
    )

    handle = ClusterHandle(
        cloud="volcengine",
        cluster_name=cluster.cluster_name,
        kubeconfig=kubeconfig.kubeconfig,
        gpu_node_labels=common_labels(pools),
        gpu_taint=GPU_TAINT,
        gpu_pools=pools,
        platform_runs_device_plugin=PLATFORM_RUNS_DEVICE_PLUGIN,
        bucket=BucketRef(
            name=bucket.bucket_name,
            region=settings.region,
            endpoint=tos_s3_endpoint(settings.region),
            scheme="tos",
        ),
        training_namespace=identity.namespace,
        training_service_account=identity.service_account,
        service_account_annotations={ROLE_TRN_ANNOTATION: training_role.role_trn},
        training_namespace_labels={INJECTION_LABEL: "true"},
        # VKE's autoscaler scales the pool; no Cluster Autoscaler of ours.
        autoscaler=None,
        # No spot-reclaim notice URL of Volcano Engine's metadata service was found in a
        # source: no drain agent. Capacity rebalance replaces spot nodes VKE sees at risk, and
        # Jobs resume from their last checkpoint (see README, Volcano Engine).
        spot_reclaim_notice=None,
    )

    pulumi.export("cloud", "volcengine")
    pulumi.export("region", settings.region)
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("clusterId", cluster.cluster_id)
    pulumi.export("kubeconfig", kubeconfig.kubeconfig)
    pulumi.export("apiEndpoint", "private")
    pulumi.export("natPublicIp", network.nat_public_ip)
    pulumi.export("bucketName", bucket.bucket_name)
    pulumi.export("bucketUri", handle.bucket.uri)
    pulumi.export("bucketEndpoint", handle.bucket.endpoint)
    pulumi.export("trainingRoleTrn", training_role.role_trn)
    pulumi.export("irsaIssuer", cluster.irsa_issuer)
    pulumi.export(
        "gpuNodeScaling",
        settings.require_autoscaling().summary(
            "VKE cluster-autoscaler", delay="after VKE's default delay"
        ),
    )
    pulumi.export("zones", list(ve.zones))
    pulumi.export("zoneSource", "settings (gpuinfra:vkeZones)")
    return handle
