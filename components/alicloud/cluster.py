"""ACK Pro control plane: KMS-encrypted Secrets, RRSA, private API endpoint by default.

Sources are aliyun/terraform-provider-alicloud at ace5bcf8 (release/v2, the newest v2 build
in reach; pulumi-alicloud 4.x bridges the v2 line) and Alibaba's CS API reference as the
Go SDK alibabacloud-go/cs-20151215@v7.6.0 carries it (client/create_cluster_request_model.go).
The provider's Create reads most booleans with `d.GetOk`, so a `False` is never sent and the
API default applies: every boolean below is one whose value the API really receives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_alicloud as alicloud
import yaml

CLUSTER_SPEC = "ack.pro.small"
"""ACK Pro: SLA-backed control plane, Secrets encryption with KMS, managed add-ons."""

ADDONS: tuple[str, ...] = (
    "flannel",  # pod network (pods get POD_CIDR addresses, not VPC addresses)
    "csi-plugin",  # disk, NAS and OSS volumes
    "managed-csi-provisioner",
    "ack-pod-identity-webhook",  # injects RRSA credentials into pods of annotated accounts
)

# EKS log type names (gpuinfra:clusterLogTypes) -> ACK control-plane log components.
# `audit` is ACK's separate audit log; `authenticator` has no ACK counterpart (RAM
# authenticates outside the cluster) and is skipped.
_LOG_COMPONENTS = {"api": "apiserver", "controllerManager": "kcm", "scheduler": "scheduler"}

DELETE_WITH_CLUSTER: tuple[str, ...] = ("SLS_ControlPlane", "SLS_Data")
"""The Simple Log Service projects ACK creates for control-plane logs and for the audit log.
ACK keeps both after DeleteCluster unless told otherwise (provider docs, `delete_options`:
website/docs/r/cs_managed_kubernetes.html.markdown:920-921; sent by
alicloud/resource_alicloud_cs_kubernetes.go:1046), so `pulumi destroy` would leave them
billing for storage. The stack created them: it removes them."""


@dataclass(frozen=True)
class AckClusterArgs:
    cluster_name: str
    ack_version: str
    """The full ACK version (`1.33.3-aliyun.1`), pinned by settings; never looked up."""
    vswitch_ids: Sequence[pulumi.Input[str]]
    endpoint_public: bool
    log_types: Sequence[str]
    log_retention_days: int
    deletion_protection: bool
    pod_cidr: str
    service_cidr: str
    tags: Mapping[str, str]


class AckCluster(pulumi.ComponentResource):
    cluster_id: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    version: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    nat_gateway_id: pulumi.Output[str]
    secrets_key_id: pulumi.Output[str]
    api_endpoint: pulumi.Output[str]
    rrsa_oidc_issuer_url: pulumi.Output[str]
    rrsa_oidc_provider_arn: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: AckClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:AckCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        key = alicloud.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes Secrets in {args.cluster_name}",
            key_spec="Aliyun_AES_256",
            key_usage="ENCRYPT/DECRYPT",
            protection_level="SOFTWARE",
            automatic_rotation="Enabled",
            rotation_interval="365d",  # required with automatic_rotation Enabled
            pending_window_in_days=30,
            tags=dict(args.tags),
            opts=child,
        )
        alicloud.kms.Alias(
            f"{name}-secrets-key-alias",
            alias_name=f"alias/{args.cluster_name}-ack-secrets",
            key_id=key.id,
            opts=child,
        )

        log_components = sorted(
            {_LOG_COMPONENTS[t] for t in args.log_types if t in _LOG_COMPONENTS}
        )
        cluster = alicloud.cs.ManagedKubernetes(
            f"{name}-cluster",
            name=args.cluster_name,
            cluster_spec=CLUSTER_SPEC,
            profile="Default",
            # Pinned: ACK runs exactly this version until someone changes it on purpose.
            # A change makes the provider call UpgradeCluster (Update ->
            # UpgradeAlicloudKubernetesCluster, resource_alicloud_cs_managed_kubernetes.go:1176)
            # and the preview's diff shows it.
            version=args.ack_version,
            # Upgrades move the control plane only (MasterOnly, read at :1183); node pools are
            # upgraded one by one afterwards (README "Upgrading ACK"). Without it a version
            # bump would also roll every node pool, GPU nodes included.
            upgrade_policy={"control_plane_only": True},
            vswitch_ids=list(args.vswitch_ids),
            # ACK owns egress: CreateCluster `snat_entry` (API default true) creates one NAT
            # gateway, its EIP and one SNAT entry per cluster vSwitch, and DeleteCluster
            # removes them. Sent as true (Create :683); the network component makes none of
            # its own, so there is exactly one NAT gateway and one SNAT path per node vSwitch.
            # (`False` would never be sent: GetOk drops it and the API default, true, applies.)
            new_nat_gateway=True,
            # The API server's CLB gets an internet address only when asked. `False` is not
            # sent (GetOk, :687) and EndpointPublicAccess defaults to false in the API; the
            # provider's own default is true, so the value must be passed either way.
            slb_internet_enabled=args.endpoint_public,
            # ACK's cluster security group, the only one the nodes get: advanced, the API
            # default, sent explicitly (GetOk at :695 drops a false, which would also be
            # ignored). Node pools attach this group alone, so no basic group ever joins it.
            is_enterprise_security_group=True,
            enable_rrsa=True,
            encryption_provider_key=key.id,
            deletion_protection=args.deletion_protection,  # GetOkExists: false is sent
            pod_cidr=args.pod_cidr,
            service_cidr=args.service_cidr,
            proxy_mode="ipvs",
            addons=[{"name": addon} for addon in ADDONS],
            control_plane_log_components=log_components or None,
            control_plane_log_ttl=str(args.log_retention_days) if log_components else None,
            audit_log_config={"enabled": "audit" in args.log_types},
            delete_options=[
                {"resource_type": kind, "delete_mode": "delete"} for kind in DELETE_WITH_CLUSTER
            ],
            skip_set_certificate_authority=True,  # the kubeconfig comes from the lookup below
            tags=dict(args.tags),
            opts=child,
        )

        rrsa = cluster.rrsa_metadata
        self.rrsa_oidc_issuer_url = rrsa.apply(
            lambda m: _required(m.rrsa_oidc_issuer_url, "rrsaMetadata.rrsaOidcIssuerUrl")
        )
        self.rrsa_oidc_provider_arn = rrsa.apply(
            lambda m: _required(m.ram_oidc_provider_arn, "rrsaMetadata.ramOidcProviderArn")
        )
        # The endpoint `pulumi up` and the GPU layer talk to: the one the cluster has.
        public = args.endpoint_public
        self.api_endpoint = cluster.connections.apply(
            lambda connections: api_endpoint(connections, public=public)
        )
        # `cs.get_cluster_credential` always asks for the Internet kubeconfig
        # (DescribeClusterUserKubeconfig with PrivateIpAddress false:
        # alicloud/service_alicloud_cs.go:243), whatever endpoint the cluster has. Its
        # certificates are the user's whichever address it names, so the kubeconfig handed on
        # names the endpoint chosen above.
        credential = alicloud.cs.get_cluster_credential_output(
            cluster_id=cluster.id, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(credential.kube_config, self.api_endpoint).apply(
                lambda parts: kubeconfig_for(_required(parts[0], "kubeConfig"), parts[1])
            )
        )
        self.cluster_id = cluster.id
        self.cluster_name = cluster.name
        self.version = cluster.version
        self.security_group_id = cluster.security_group_id
        self.nat_gateway_id = cluster.nat_gateway_id
        self.secrets_key_id = key.id
        self.register_outputs(
            {
                "cluster_id": self.cluster_id,
                "cluster_name": self.cluster_name,
                "api_endpoint": self.api_endpoint,
                "rrsa_oidc_provider_arn": self.rrsa_oidc_provider_arn,
                "kubeconfig": self.kubeconfig,
            }
        )


def api_endpoint(connections: Sequence[Any] | None, *, public: bool) -> str:
    """The API server URL of the endpoint chosen: `https://<address>:6443`.

    The provider fills `connections[0]` from the cluster's MasterUrl
    (resource_alicloud_cs_managed_kubernetes.go:1066-1075): `api_server_intranet` always,
    `api_server_internet` only when the CLB has a public address.
    """
    field = "api_server_internet" if public else "api_server_intranet"
    for connection in connections or []:
        value = (
            connection.get(field)
            if isinstance(connection, Mapping)
            else getattr(connection, field, None)
        )
        if value:
            return str(value)
    kind = "public" if public else "private"
    raise ValueError(f"ACK reported no {kind} API endpoint ({field}) for the cluster")


def kubeconfig_for(kubeconfig: str, server: str) -> str:
    """`kubeconfig` (YAML or JSON, as ACK returns it) with every cluster's server set to
    `server`; JSON, which every Kubernetes client reads."""
    config = yaml.safe_load(kubeconfig)
    clusters = config.get("clusters") if isinstance(config, dict) else None
    if not clusters:
        raise ValueError("ACK returned a kubeconfig without clusters")
    for entry in clusters:
        entry.setdefault("cluster", {})["server"] = server
    return json.dumps(config, indent=2)


def _required(value: str | None, what: str) -> str:
    if not value:
        raise ValueError(f"ACK returned no {what}")
    return value
