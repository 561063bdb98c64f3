"""TKE managed cluster: KMS-encrypted Secrets, and its API endpoint.

Sources: terraform-provider-tencentcloud@v1.82.42 (what tencentcloud-iac-pulumi 0.2.3 runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

ENDPOINT_FIELDS = (
    "clusterInternet",
    "clusterIntranet",
    "clusterInternetSecurityGroup",
    "clusterIntranetSubnetId",
    "clusterInternetDomain",
    "clusterIntranetDomain",
)
"""The Cluster's endpoint fields, owned by the ClusterEndpoint resource instead."""


@dataclass(frozen=True)
class TkeAutoscaler:
    """The cluster's autoscaler settings (`node_pool_global_configs`), shared by every pool
    with `enable_auto_scale`."""

    scale_down_delay_minutes: int
    expander: str = "least-waste"
    """Of the pools that fit the pending pods, the one left with the least idle capacity."""


@dataclass(frozen=True)
class TkeClusterArgs:
    cluster_name: str
    cluster_version: str
    """Full TKE version, e.g. `1.32.2`."""
    region: str
    vpc_id: pulumi.Input[str]
    pod_cidr: str
    service_cidr: str
    max_services: int
    max_pods_per_node: int
    deletion_protection: bool
    tags: Mapping[str, str]
    autoscaler: TkeAutoscaler | None = None


class TkeCluster(pulumi.ComponentResource):
    cluster_id: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    secrets_key_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: TkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:TkeCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        key = tencentcloud.kms.Key(
            f"{name}-secrets-key",
            alias=f"{args.cluster_name}-tke-secrets",
            description=f"Envelope encryption of Kubernetes Secrets in {args.cluster_name}",
            # Create disables the key unless `is_enabled` (default false):
            # tencentcloud/services/kms/resource_tc_kms_key.go:32-37, 149-151.
            is_enabled=True,
            key_usage="ENCRYPT_DECRYPT",
            key_rotation_enabled=True,
            pending_delete_window_in_days=30,
            tags=dict(args.tags),
            opts=child,
        )
        cluster = tencentcloud.kubernetes.Cluster(
            f"{name}-cluster",
            cluster_name=args.cluster_name,
            cluster_desc=f"gpuinfra GPU training cluster {args.cluster_name}",
            cluster_deploy_type="MANAGED_CLUSTER",
            cluster_version=args.cluster_version,
            container_runtime="containerd",
            vpc_id=args.vpc_id,
            network_type="GR",
            cluster_cidr=args.pod_cidr,
            service_cidr=args.service_cidr,
            cluster_max_service_num=args.max_services,
            cluster_max_pod_num=args.max_pods_per_node,
            # `cluster_internet`/`cluster_intranet` are left unset: TkeEndpoint's ClusterEndpoint
            # owns the endpoints (opened once a node exists). The provider says not to drive
            # them from both resources (resource_tc_kubernetes_cluster_endpoint.md:5); Read
            # sets the Cluster's flags from TKE (resource_tc_kubernetes_cluster_extension.go:
            # 2353-2357), so a `False` here would make the next update close the endpoint
            # (resource_tc_kubernetes_cluster_extension.go:1294-1305).
            deletion_protection=args.deletion_protection,
            node_pool_global_configs=(
                [_autoscaler_config(args.autoscaler)] if args.autoscaler is not None else None
            ),
            tags=dict(args.tags),
            # Unset Optional+Computed fields show no diff; ignoring them also keeps a later
            # edit here from ever toggling what the ClusterEndpoint opened.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=list(ENDPOINT_FIELDS)),
        )
        tencentcloud.kubernetes.EncryptionProtection(
            f"{name}-secrets-encryption",
            cluster_id=cluster.id,
            kms_configuration={"key_id": key.id, "kms_region": args.region},
            opts=child,
        )
        self.cluster_id = cluster.id
        self.cluster_name = cluster.cluster_name.apply(lambda n: n or args.cluster_name)
        self.secrets_key_id = key.id
        self.register_outputs({"cluster_id": self.cluster_id, "cluster_name": self.cluster_name})


def _autoscaler_config(autoscaler: TkeAutoscaler) -> dict[str, Any]:
    delay = autoscaler.scale_down_delay_minutes
    return {
        "is_scale_in_enabled": True,
        "expander": autoscaler.expander,
        # An idle GPU node goes after `delay` minutes, and not sooner than that after a
        # scale-out (both fields in minutes).
        "scale_in_unneeded_time": delay,
        "scale_in_delay": delay,
        # kube-system pods and emptyDir scratch must not pin an otherwise empty GPU node;
        # DaemonSets (device plugin, DCGM exporter) do not count as use.
        "skip_nodes_with_system_pods": False,
        "skip_nodes_with_local_storage": False,
        "ignore_daemon_sets_utilization": True,
    }


@dataclass(frozen=True)
class TkeEndpointArgs:
    cluster_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    """The private endpoint's address comes from this subnet."""
    public: bool
    public_security_group_id: pulumi.Input[str] | None
    """Required when `public`: limits the public endpoint to the admin networks."""
    depends_on: Sequence[pulumi.Resource] = ()


class TkeEndpoint(pulumi.ComponentResource):
    """The API server's addresses and the kubeconfig that reaches it.

    The private endpoint is always on (nodes and in-VPC tools use it). With `public`, TKE also
    opens an internet endpoint whose load balancer takes `public_security_group_id`, which
    admits 443 from `adminCidrs` only, and the kubeconfig handed on is the public one
    (DescribeClusterKubeconfig with IsExtranet: resource_tc_kubernetes_cluster_endpoint.go:
    187-203, service_tencentcloud_tke.go:546-577). Create waits for a running node
    (resource_tc_kubernetes_cluster_endpoint.go:258, service_tencentcloud_tke.go:840-878):
    `depends_on` must hold a node pool with at least one node.
    """

    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: TkeEndpointArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:TkeEndpoint", name, None, opts)
        if args.public and args.public_security_group_id is None:
            raise ValueError("a public TKE endpoint needs a security group limiting its sources")
        endpoint = tencentcloud.kubernetes.ClusterEndpoint(
            f"{name}-endpoint",
            cluster_id=args.cluster_id,
            cluster_intranet=True,
            cluster_intranet_subnet_id=args.subnet_id,
            cluster_internet=args.public,
            cluster_internet_security_group=args.public_security_group_id if args.public else None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on)),
        )
        if args.public:
            self.endpoint = endpoint.cluster_external_endpoint
            kubeconfig = endpoint.kube_config
        else:
            self.endpoint = endpoint.pgw_endpoint
            kubeconfig = endpoint.kube_config_intranet
        self.kubeconfig = pulumi.Output.secret(kubeconfig)
        self.register_outputs({"endpoint": self.endpoint, "kubeconfig": self.kubeconfig})
