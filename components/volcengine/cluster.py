"""VKE managed cluster with a private API endpoint, IRSA, its add-ons, and a kubeconfig.

Sources: volcengine/terraform-provider-volcenginecc@v0.0.53 (what pulumi-volcenginecc 0.0.45
runs): internal/volcengine/vke/{cluster,kubeconfig,addon}_resource_gen.go and
internal/service/cloudcontrol/schemas/Volcengine_VKE_{Cluster,Kubeconfig,Addon}.json.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_volcenginecc as volcenginecc

from .tags import tag_list

MAX_PODS_PER_NODE = 64
"""Flannel pods per node: one of 16, 32, 64, 128, 256 (vke/cluster_resource_gen.go:864-875)."""
KUBECONFIG_HOURS = 8760
"""A year. VKE kubeconfigs expire (`ValidDuration` in hours, 1 to 43800:
volcengine/terraform-provider-volcengine@v0.0.194
volcengine/vke/kubeconfig/resource_volcengine_vke_kubeconfig.go:44-50, the same API); a
change replaces the resource and issues a new one (vke/kubeconfig_resource_gen.go:156,
RequiresReplaceIfConfigured)."""
AUTOSCALER_ADDON = "cluster-autoscaler"
"""VKE's own Cluster Autoscaler, which scales node pools that have `auto_scaling.enabled`."""
POD_IDENTITY_ADDON = "pod-identity-webhook"
"""Injects the IRSA token and env into pods of annotated ServiceAccounts ("集群中使用 IRSA 能力",
https://www.volcengine.com/docs/6460/1324613, updated 2025-03-20: Pod injection depends on
VKE's pod-identity-webhook component)."""


@dataclass(frozen=True)
class VkeClusterArgs:
    cluster_name: str
    kubernetes_version: str
    """Minor, e.g. `1.32`: VKE matches the newest VKE release of it. Replacing the cluster is
    what changing it does (`kubernetes_version_create`, RequiresReplaceIfConfigured:
    vke/cluster_resource_gen.go:467)."""
    subnet_ids: Sequence[pulumi.Input[str]]
    pod_cidr: str
    service_cidr: str
    deletion_protection: bool
    tags: Mapping[str, str]


class VkeCluster(pulumi.ComponentResource):
    """The cluster, with IRSA requested at creation.

    The API endpoint is private: VKE's public one would admit the whole internet, since its
    source allowlist (`AccessSourceIpsv4`) is no argument of this provider's cluster
    (Volcengine_VKE_Cluster.json, `ApiServerPublicAccessConfig` holds only
    `PublicAccessNetworkConfig`). IRSA: `IrsaConfig.Enabled` is writable on create, and the
    Cloud Control create handler holds `vke:UpdateClusterConfig` besides `vke:CreateCluster`
    (Volcengine_VKE_Cluster.json `handlers.create`), which is how VKE turns IRSA on ("only
    clusters that exist can enable IRSA", docs 6460/1324613). The pulumi-volcengine (bridged)
    provider instead drops `irsa_enabled` at create (volcengine/terraform-provider-volcengine@
    v0.0.194 volcengine/vke/cluster/service_volcengine_vke_cluster.go:381-383).
    """

    cluster_id: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    irsa_issuer: pulumi.Output[str]
    irsa_oidc_trn: pulumi.Output[str]

    def __init__(
        self, name: str, args: VkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:VkeCluster", name, None, opts)
        cluster = volcenginecc.vke.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            description=f"gpuinfra GPU training cluster {args.cluster_name}",
            kubernetes_version_create=args.kubernetes_version,
            delete_protection_enabled=args.deletion_protection,
            cluster_config={
                "subnet_ids": list(args.subnet_ids),
                "api_server_public_access_enabled": False,
                "resource_public_access_default_enabled": False,
            },
            pods_config={
                "pod_network_mode": "Flannel",
                "flannel_config": {
                    "pod_cidrs": [args.pod_cidr],
                    "max_pods_per_node": MAX_PODS_PER_NODE,
                },
            },
            services_config={"service_cidrsv4s": [args.service_cidr]},
            irsa_config={"enabled": True},
            tags=tag_list(args.tags),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.cluster_id = cluster.cluster_id
        self.cluster_name = cluster.name
        irsa = cluster.irsa_config
        self.irsa_issuer = irsa.apply(lambda c: (c.issuer if c else None) or "")
        self.irsa_oidc_trn = irsa.apply(lambda c: (c.oidc_trn if c else None) or "")
        self.register_outputs({"cluster_id": self.cluster_id, "cluster_name": self.cluster_name})


@dataclass(frozen=True)
class VkeAddonsArgs:
    cluster_id: pulumi.Input[str]
    depends_on: Sequence[pulumi.Resource] = ()
    """The system pool: an unmanaged add-on runs on the cluster's nodes."""


class VkeAddons(pulumi.ComponentResource):
    """The add-ons the stack relies on: the autoscaler (VKE-managed, in the control plane) and
    the IRSA webhook (on the system nodes)."""

    def __init__(
        self, name: str, args: VkeAddonsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:VkeAddons", name, None, opts)
        volcenginecc.vke.Addon(
            f"{name}-cluster-autoscaler",
            cluster_id=args.cluster_id,
            name=AUTOSCALER_ADDON,
            deploy_mode="Managed",
            opts=pulumi.ResourceOptions(parent=self),
        )
        volcenginecc.vke.Addon(
            f"{name}-pod-identity-webhook",
            cluster_id=args.cluster_id,
            name=POD_IDENTITY_ADDON,
            # Unmanaged add-ons name where they run (Volcengine_VKE_Addon.json, DeployNodeType).
            deploy_mode="Unmanaged",
            deploy_node_type="Node",
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on)),
        )
        self.register_outputs({})


@dataclass(frozen=True)
class VkeKubeconfigArgs:
    cluster_id: pulumi.Input[str]
    depends_on: Sequence[pulumi.Resource] = ()


class VkeKubeconfig(pulumi.ComponentResource):
    """The private-endpoint kubeconfig (the only endpoint the cluster has), as a secret."""

    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: VkeKubeconfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:VkeKubeconfig", name, None, opts)
        config = volcenginecc.vke.Kubeconfig(
            f"{name}-kubeconfig",
            cluster_id=args.cluster_id,
            type="Private",
            valid_duration=KUBECONFIG_HOURS,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on)),
        )
        self.kubeconfig = pulumi.Output.secret(config.kubeconfig.apply(kubeconfig_text))
        self.register_outputs({"kubeconfig": self.kubeconfig})


def kubeconfig_text(value: str | None) -> str:
    """VKE's ListKubeconfigs returns the kubeconfig Base64-encoded (terraform-provider-volcengine
    @v0.0.194 volcengine/vke/cluster/resource_volcengine_vke_cluster.go:255-264, "returned in
    BASE64 encoding"); plain YAML is passed through, so either form works."""
    text = value or ""
    if text.lstrip().startswith(("apiVersion", "{")):
        return text
    try:
        decoded = base64.b64decode(text, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return text
    return decoded
