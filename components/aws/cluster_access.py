"""Who may use the EKS cluster: access entries with the cluster-admin access policy.

The cluster authenticates with the EKS API only (`authenticationMode: API`) and is created
with `bootstrapClusterCreatorAdminPermissions: false`, chosen once and on purpose: the flag is
ForceNew (changing it replaces the cluster; terraform-provider-aws internal/service/eks/
cluster.go, schema `access_config.bootstrap_cluster_creator_admin_permissions`), and with
`true` EKS would make an entry for whoever created the cluster that Pulumi neither sees nor
removes, and that would collide with an explicit entry for the same principal (one entry per
principal: EKS user guide, grant-k8s-access.adoc:202). Instead every admin entry is a
resource here: the principal running `pulumi up` (a laptop's SSO role, the deploy role of the
workflow) plus `clusterAdminArns`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
"""EKS access policy with cluster-admin rights (EKS user guide, "Review access policy
permissions", latest/ug/manage-access/k8s-access/access-policy-reference.adoc)."""


def deploying_principal_arn() -> str:
    """The IAM ARN of the principal running this `pulumi up`.

    The caller of an assumed role is an STS session ARN (`arn:aws:sts::<account>:assumed-role/
    <role>/<session>`), which access entries refuse; `getSessionContext` answers the role's IAM
    ARN, path included (needs `iam:GetRole`). An IAM user's ARN comes back unchanged.
    """
    caller = aws.get_caller_identity()
    return aws.iam.get_session_context(arn=caller.arn).issuer_arn


def admin_principals(deployer: str, configured: Sequence[str]) -> list[str]:
    """The deployer first, then the configured admins, each principal once."""
    return list(dict.fromkeys([deployer, *configured]))


@dataclass(frozen=True)
class ClusterAccessArgs:
    cluster_name: pulumi.Input[str]
    partition: str
    principal_arns: Sequence[str]
    tags: Mapping[str, str]


class ClusterAccess(pulumi.ComponentResource):
    granted: pulumi.Output[list[str]]
    """Resolves once every principal's entry and policy association exist: anything that talks
    to the Kubernetes API as them must wait for it."""

    def __init__(
        self, name: str, args: ClusterAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:ClusterAccess", name, None, opts)
        policy_arn = f"arn:{args.partition}:eks::aws:cluster-access-policy/{CLUSTER_ADMIN_POLICY}"
        associations = []
        for principal in args.principal_arns:
            # Named by the principal, not by position: the deployer also listed in
            # clusterAdminArns, or a reordered list, keeps the same resource (a second entry
            # for one principal would be refused).
            slug = hashlib.sha256(principal.encode()).hexdigest()[:8]
            entry = aws.eks.AccessEntry(
                f"{name}-access-{slug}",
                cluster_name=args.cluster_name,
                principal_arn=principal,
                type="STANDARD",
                tags=dict(args.tags),
                opts=pulumi.ResourceOptions(parent=self),
            )
            associations.append(
                aws.eks.AccessPolicyAssociation(
                    f"{name}-admin-{slug}",
                    cluster_name=args.cluster_name,
                    principal_arn=entry.principal_arn,
                    policy_arn=policy_arn,
                    access_scope={"type": "cluster"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
                )
            )
        self.granted = pulumi.Output.all(*[a.id for a in associations]).apply(list)
        self.register_outputs({"granted": self.granted})
