"""The Kubernetes minors a stack's EKS cluster and node groups run right now.

What can a stack know about the version it is upgrading from? Its config holds only the
version it wants. Pulumi's state holds the last one deployed, but a program cannot read its
own stack's state. The cloud can answer: before registering anything, the AWS stack asks EKS
for the cluster of its name (ListClusters, DescribeCluster) and its node groups
(ListNodegroups, DescribeNodegroup). That is the truth EKS itself judges an upgrade by, and
it also catches node groups left behind by an earlier version of this program (which set no
node group version, so only the control plane moved). It needs read access to EKS, which both
the deploy role and the read-only preview role have.

The offline preview has no account to ask: its mocks answer "no cluster" (a fresh account),
so there it only checks the version against the EKS calendar.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class DeployedVersions:
    control_plane: str | None
    """None: no cluster of that name yet."""
    node_groups: dict[str, str] = field(default_factory=dict)
    """Node group name -> the minor its nodes run."""


def deployed_versions(
    cluster_name: str, opts: pulumi.InvokeOptions | None = None
) -> DeployedVersions:
    """Ask EKS, with plain (blocking) lookups so the answer is known before any resource."""
    if cluster_name not in aws.eks.get_clusters(opts=opts).names:
        return DeployedVersions(control_plane=None)
    cluster = aws.eks.get_cluster(name=cluster_name, opts=opts)
    groups = {
        group: aws.eks.get_node_group(
            cluster_name=cluster_name, node_group_name=group, opts=opts
        ).version
        for group in aws.eks.get_node_groups(cluster_name=cluster_name, opts=opts).names
    }
    return DeployedVersions(control_plane=cluster.version, node_groups=groups)
