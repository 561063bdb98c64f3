"""From where a stack's `pulumi up` must run: the `deployFrom` output and `gpuinfra
reachability`.

A `pulumi up` that deploys Kubernetes objects talks to the cluster's API endpoint; one that
only creates cloud resources talks to the cloud's APIs, which answer from anywhere. So it
depends on the stack:
- a cloud stack with `gpuLayer: inline` creates the cluster and deploys the GPU layer in one
  update: it must run from a network in `adminCidrs` (the public endpoint admits only those);
- a cloud stack with `gpuLayer: separate` creates the cluster only: anywhere with cloud
  credentials (a laptop, a GitHub-hosted runner);
- a `cloud: kubernetes` stack with `clusterStack` deploys the GPU layer onto that cluster: from
  inside its VPC when the endpoint is private, else from its `adminCidrs`;
- a `cloud: kubernetes` stack on an existing cluster: wherever its kubeconfig's server answers.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from components.cluster_handle import ApiAccess
from components.settings import Settings
from components.settings.clouds import RULES


@dataclass(frozen=True)
class DeployFrom:
    sentence: str
    """What the `deployFrom` output and the preview summary say."""
    networks: tuple[str, ...]
    """CIDRs `pulumi up` must run from; empty with `reaches_cluster` False: anywhere."""
    reaches_cluster: bool
    """True when this `pulumi up` talks to the cluster's Kubernetes API endpoint."""
    known: bool = True
    """False when the endpoint's reach is not in this project (an existing cluster)."""
    refusal: str = ""
    """What to change when an address is not in `networks` (one clause)."""

    def admits(self, address: str) -> tuple[bool, str]:
        """Whether a `pulumi up` from `address` can do its work, and one line saying why."""
        ip = ipaddress.ip_address(address)
        if not self.reaches_cluster:
            return True, "this stack talks only to cloud APIs, which answer from anywhere"
        if not self.known:
            return True, (
                "not checked: the cluster's API endpoint is given by a kubeconfig, outside "
                "this project; make sure it answers from here"
            )
        for cidr in self.networks:
            if ip in ipaddress.ip_network(cidr, strict=False):
                return True, f"{address} is in {cidr}"
        return False, f"{address} is not in {', '.join(self.networks)}: {self.refusal}"


def api_access(settings: Settings) -> ApiAccess:
    """The endpoint reach of a cloud stack, from its settings."""
    return ApiAccess(
        public=settings.access.api_endpoint_public,
        admin_cidrs=tuple(settings.access.admin_cidrs),
        vpc_cidr=settings.network.vpc_cidr,
    )


def _ipv4(cidrs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c for c in cidrs if ipaddress.ip_network(c, strict=False).version == 4)


def _endpoint_reach(access: ApiAccess) -> tuple[tuple[str, ...], str, str]:
    """(networks, where `pulumi up` runs, what to change for an address outside them)."""
    if access.public:
        networks = _ipv4(access.admin_cidrs) or access.admin_cidrs
        return (
            networks,
            f"a network in adminCidrs ({', '.join(networks)}), which the public API endpoint "
            "alone admits (a laptop there, or a runner whose egress address is in it)",
            "the public API endpoint admits only gpuinfra:adminCidrs; run from one of them, or "
            "add this address to adminCidrs",
        )
    return (
        (access.vpc_cidr,),
        f"inside the cluster's VPC ({access.vpc_cidr}): a self-hosted runner, bastion or VPN "
        "there, since the API endpoint is private",
        "the API endpoint is private; run from inside the VPC (self-hosted runner, bastion, VPN)",
    )


def deploy_from(settings: Settings, cluster_access: ApiAccess | None = None) -> DeployFrom:
    """Where this stack's `pulumi up` must run. `cluster_access`: the referenced cluster
    stack's endpoint reach, for a `cloud: kubernetes` stack with `clusterStack`."""
    existing = settings.existing_cluster
    if existing is not None:
        if existing.cluster_stack is None:
            return DeployFrom(
                "wherever the API server of the cluster in gpuinfra:kubeconfig (or KUBECONFIG) "
                "answers: this stack creates nothing in a cloud account and deploys the GPU "
                "layer through that kubeconfig",
                networks=(),
                reaches_cluster=True,
                known=False,
            )
        if cluster_access is None:
            return DeployFrom(
                f"where the API endpoint of {existing.cluster_stack}'s cluster answers (its "
                "clusterHandle says from where)",
                networks=(),
                reaches_cluster=True,
                known=False,
            )
        networks, where, refusal = _endpoint_reach(cluster_access)
        return DeployFrom(
            f"{where}: this stack deploys the GPU layer onto {existing.cluster_stack}'s cluster",
            networks=networks,
            reaches_cluster=True,
            refusal=refusal,
        )
    title = RULES[settings.cloud].title
    access = api_access(settings)
    if settings.gpu_layer.mode == "inline":
        networks, where, refusal = _endpoint_reach(access)
        return DeployFrom(
            f"{where}: this `pulumi up` creates the {title} cluster and then deploys the GPU "
            "layer through its API endpoint",
            networks=networks,
            reaches_cluster=True,
            refusal=refusal,
        )
    _, layer_where, _ = _endpoint_reach(access)
    return DeployFrom(
        f"anywhere with {title} credentials (a laptop, a GitHub-hosted runner): this stack "
        "creates the cluster only and exports clusterHandle; its GPU layer is deployed by a "
        f"`cloud: kubernetes` stack whose clusterStack names this one, from {layer_where}",
        networks=(),
        reaches_cluster=False,
    )
