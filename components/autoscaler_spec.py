"""What the Kubernetes layer needs to run a Cluster Autoscaler: plain values, no cloud SDK.

A provider stack fills this in (image matching the cluster's minor, its cloud's flags, the
workload-identity annotations of the autoscaler's ServiceAccount) and hands it over in the
`ClusterHandle`; platforms whose control plane runs its own autoscaler (ACK, TKE) leave it
None and configure theirs on the cluster resources instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # settings validation reads the tag table without loading Pulumi
    import pulumi

CLUSTER_AUTOSCALER_IMAGE = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_TAGS: dict[str, str] = {
    # One release line per Kubernetes minor; run the one matching the cluster's minor.
    # Promoted tags, from kubernetes/k8s.io image-promotion pull requests: #8815 (v1.32.5,
    # merged 2025), #9760 (v1.33.6, v1.34.5, v1.35.2, v1.36.1, merged 2026-07-22, after #9676's
    # v1.33.5, v1.34.4, v1.35.1, v1.36.0); v1.31.2 from the aws-ia/terraform-aws-eks-
    # blueprints-addons version map (issue #496, 2026-02).
    "1.31": "v1.31.2",
    "1.32": "v1.32.5",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    "1.36": "v1.36.1",
}


def cluster_autoscaler_image(kubernetes_version: str) -> str:
    """The pinned image for a cluster minor such as `1.35` (settings refuse unknown minors)."""
    tag = CLUSTER_AUTOSCALER_TAGS.get(kubernetes_version)
    if tag is None:
        known = ", ".join(CLUSTER_AUTOSCALER_TAGS)
        raise ValueError(f"no Cluster Autoscaler release pinned for {kubernetes_version}: {known}")
    return f"{CLUSTER_AUTOSCALER_IMAGE}:{tag}"


@dataclass(frozen=True)
class AutoscalerSpec:
    image: str
    """Pinned `registry.k8s.io/autoscaling/cluster-autoscaler:v1.<minor>.<patch>`."""
    args: Sequence[str]
    """Command-line flags, e.g. `--cloud-provider=aws`, `--expander=least-waste`."""
    service_account_annotations: Mapping[str, pulumi.Output[str]]
    """Workload identity that lets the autoscaler resize this cluster's node groups only."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Plain environment variables (e.g. `AWS_REGION`)."""


def cluster_autoscaler_flags(
    *,
    cloud_provider: str,
    node_group_discovery: str,
    scale_down_delay_minutes: int,
    expander: str = "least-waste",
) -> tuple[str, ...]:
    """The flags every gpuinfra Cluster Autoscaler runs with, whatever the cloud.

    Flag names from the Cluster Autoscaler FAQ ("What are the parameters to CA?",
    kubernetes/autoscaler cluster-autoscaler/FAQ.md).
    """
    delay = f"{scale_down_delay_minutes}m"
    return (
        f"--cloud-provider={cloud_provider}",
        f"--node-group-auto-discovery={node_group_discovery}",
        # least-waste: of the groups that fit the pending pods, the one left with the least
        # idle CPU and memory, i.e. the smallest (cheapest) fitting instance type.
        f"--expander={expander}",
        "--balance-similar-node-groups",
        # An idle GPU node goes after `delay`, and not sooner than `delay` after a scale-up.
        f"--scale-down-unneeded-time={delay}",
        f"--scale-down-delay-after-add={delay}",
        # kube-system pods (CoreDNS, metrics) must not pin an otherwise empty GPU node.
        "--skip-nodes-with-system-pods=false",
        "--skip-nodes-with-local-storage=false",
        "--logtostderr=true",
        "--stderrthreshold=info",
        "--v=4",
    )
