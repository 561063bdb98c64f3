"""ACK Pro control plane: KMS-encrypted Secrets, RRSA, private API endpoint by default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

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


@dataclass(frozen=True)
class AckClusterArgs:
    cluster_name: str
    kubernetes_version: str
    """A minor version such as `1.33`; the newest ACK patch of it is looked up."""
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
    secrets_key_id: pulumi.Output[str]
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
            rotation_interval="365d",
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

        # ACK takes full versions (`1.33.3-aliyun.1`); resolve the configured minor to
        # the newest patch ACK offers for managed clusters in this region.
        versions = alicloud.cs.get_kubernetes_version_output(
            cluster_type="ManagedKubernetes",
            profile="Default",
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        version = versions.metadatas.apply(
            lambda metadatas: newest_patch([m.version for m in metadatas], args.kubernetes_version)
        )

        log_components = sorted(
            {_LOG_COMPONENTS[t] for t in args.log_types if t in _LOG_COMPONENTS}
        )
        cluster = alicloud.cs.ManagedKubernetes(
            f"{name}-cluster",
            name=args.cluster_name,
            cluster_spec=CLUSTER_SPEC,
            profile="Default",
            version=version,
            vswitch_ids=list(args.vswitch_ids),
            # The network component owns the NAT gateway; ACK must not add a second one.
            new_nat_gateway=False,
            # The API server's load balancer gets an internet address only when asked:
            # ACK cannot restrict it to CIDRs, so settings demand an explicit opt-in.
            slb_internet_enabled=args.endpoint_public,
            enable_rrsa=True,
            encryption_provider_key=key.id,
            disable_encryption=False,  # must be explicit with encryption_provider_key
            deletion_protection=args.deletion_protection,
            pod_cidr=args.pod_cidr,
            service_cidr=args.service_cidr,
            proxy_mode="ipvs",
            addons=[{"name": addon} for addon in ADDONS],
            control_plane_log_components=log_components or None,
            control_plane_log_ttl=str(args.log_retention_days) if log_components else None,
            audit_log_config={"enabled": "audit" in args.log_types},
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
        credential = alicloud.cs.get_cluster_credential_output(
            cluster_id=cluster.id, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        self.kubeconfig = pulumi.Output.secret(
            credential.kube_config.apply(lambda text: _required(text, "kubeConfig"))
        )
        self.cluster_id = cluster.id
        self.cluster_name = cluster.name
        self.version = cluster.version
        self.security_group_id = cluster.security_group_id
        self.secrets_key_id = key.id
        self.register_outputs(
            {
                "cluster_id": self.cluster_id,
                "cluster_name": self.cluster_name,
                "rrsa_oidc_provider_arn": self.rrsa_oidc_provider_arn,
                "kubeconfig": self.kubeconfig,
            }
        )


def newest_patch(versions: Sequence[str], minor: str) -> str:
    """`1.33` -> the highest `1.33.N-aliyun.M` in `versions`."""

    def key(version: str) -> tuple[int, ...]:
        numbers = version.replace("-aliyun.", ".").split(".")
        return tuple(int(n) if n.isdigit() else 0 for n in numbers)

    matching = [v for v in versions if v.startswith(f"{minor}.")]
    if not matching:
        raise ValueError(
            f"ACK offers no Kubernetes {minor} in this region (offered: "
            f"{', '.join(sorted(versions, key=key)) or 'none'}); set gpuinfra:kubernetesVersion "
            "to one of those minors"
        )
    return max(matching, key=key)


def _required(value: str | None, what: str) -> str:
    if not value:
        raise ValueError(f"ACK returned no {what}")
    return value
