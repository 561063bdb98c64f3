"""EKS control plane: KMS-encrypted Secrets, logging, endpoint access, OIDC for IRSA."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from .iam import managed_policy_arn, service_trust_policy


@dataclass(frozen=True)
class EksClusterArgs:
    cluster_name: str
    kubernetes_version: str
    region: str
    partition: str
    subnet_ids: Sequence[pulumi.Input[str]]
    endpoint_public: bool
    admin_cidrs: Sequence[str]
    """The public endpoint (when on) accepts only these networks' IPv4 ranges."""
    log_types: Sequence[str]
    log_retention_days: int
    deletion_protection: bool
    tags: Mapping[str, str]


class EksCluster(pulumi.ComponentResource):
    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    secrets_key_arn: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:EksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=service_trust_policy("eks.amazonaws.com"),
            description=f"EKS control plane of {args.cluster_name}",
            tags=dict(args.tags),
            opts=child,
        )
        policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=role.name,
            policy_arn=managed_policy_arn(args.partition, "AmazonEKSClusterPolicy"),
            opts=child,
        )

        key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes Secrets in {args.cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=dict(args.tags),
            opts=child,
        )
        aws.kms.Alias(
            f"{name}-secrets-key-alias",
            name=f"alias/{args.cluster_name}-eks-secrets",
            target_key_id=key.key_id,
            opts=child,
        )

        # Created before the cluster so EKS writes into a group with a retention
        # limit instead of creating one that keeps logs forever.
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-cluster-logs",
            name=f"/aws/eks/{args.cluster_name}/cluster",
            retention_in_days=args.log_retention_days,
            tags=dict(args.tags),
            opts=child,
        )

        public_cidrs = [
            c for c in args.admin_cidrs if ipaddress.ip_network(c).version == 4
        ]  # EKS accepts only IPv4 ranges here
        cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            version=args.kubernetes_version,
            role_arn=role.arn,
            vpc_config={
                "subnet_ids": list(args.subnet_ids),
                "endpoint_private_access": True,
                "endpoint_public_access": args.endpoint_public,
                "public_access_cidrs": public_cidrs if args.endpoint_public else None,
            },
            encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
            enabled_cluster_log_types=list(args.log_types),
            # Access entries only (components/aws/cluster_access.py). The creator gets no
            # automatic entry: ForceNew, so decided once; see cluster_access.py for why.
            access_config={
                "authentication_mode": "API",
                "bootstrap_cluster_creator_admin_permissions": False,
            },
            deletion_protection=args.deletion_protection,
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, log_group]),
        )

        self.oidc_issuer_url = cluster.identities.apply(_oidc_issuer)
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=self.oidc_issuer_url,
            client_id_lists=["sts.amazonaws.com"],
            tags=dict(args.tags),
            opts=child,
        )

        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.certificate_authority = cluster.certificate_authority.apply(
            lambda ca: _required(ca.data, "certificateAuthority.data")
        )
        self.cluster_security_group_id = cluster.vpc_config.apply(
            lambda vpc: _required(vpc.cluster_security_group_id, "vpcConfig.clusterSecurityGroupId")
        )
        self.oidc_provider_arn = oidc.arn
        self.secrets_key_arn = key.arn
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, self.certificate_authority).apply(
                lambda parts: render_kubeconfig(parts[0], parts[1], parts[2], args.region)
            )
        )
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "oidc_provider_arn": self.oidc_provider_arn,
                "kubeconfig": self.kubeconfig,
            }
        )


def _required(value: str | None, what: str) -> str:
    if not value:
        raise ValueError(f"EKS returned no {what}")
    return value


def _oidc_issuer(identities: Sequence[aws.eks.outputs.ClusterIdentity]) -> str:
    oidcs = identities[0].oidcs if identities else None
    return _required(oidcs[0].issuer if oidcs else None, "identities[0].oidcs[0].issuer")


def render_kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig (JSON, which kubectl reads as YAML) that gets tokens from the AWS CLI."""
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region],
            "interactiveMode": "Never",
        }
    }
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster_name,
                    "cluster": {"server": endpoint, "certificate-authority-data": ca_data},
                }
            ],
            "users": [{"name": cluster_name, "user": user}],
            "contexts": [
                {"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}
            ],
            "current-context": cluster_name,
        },
        indent=2,
    )
