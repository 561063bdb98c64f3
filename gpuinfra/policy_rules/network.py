"""Network rules: admin ports and the cluster API endpoint must not face the whole internet."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

from ..planview import UNKNOWN, Resource, StackView, known
from .model import rule

ADMIN_PORTS = (22, 8888, 6006)
"""SSH, Jupyter, TensorBoard: the ports the admin security group opens."""


def is_world(cidr: Any) -> bool:
    """0.0.0.0/0 or ::/0 (any prefix length 0)."""
    try:
        return ipaddress.ip_network(str(cidr), strict=False).prefixlen == 0
    except ValueError:
        return False


def _ports(low: Any, high: Any) -> set[int]:
    try:
        lo, hi = int(low), int(high)
    except (TypeError, ValueError):
        return set()
    if lo == -1 or hi == -1:  # all ports
        return set(ADMIN_PORTS)
    return {p for p in ADMIN_PORTS if lo <= p <= hi}


def _all_protocols(protocol: Any) -> bool:
    return str(protocol).lower() in ("-1", "all")


def _tcp(protocol: Any) -> bool:
    return str(protocol).lower() in ("tcp", "6") or _all_protocols(protocol)


def _world_open_ports(resource: Resource) -> Iterator[tuple[set[int], str]]:
    """(admin ports, CIDR) pairs a resource opens to the world, whatever the cloud."""
    i = resource.inputs
    t = resource.type
    if t == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule":
        ports = (
            set(ADMIN_PORTS)
            if _all_protocols(i.get("ipProtocol"))
            else (
                _ports(i.get("fromPort"), i.get("toPort")) if _tcp(i.get("ipProtocol")) else set()
            )
        )
        for key in ("cidrIpv4", "cidrIpv6"):
            if is_world(i.get(key)):
                yield ports, str(i[key])
    elif t == "aws:ec2/securityGroupRule:SecurityGroupRule" and i.get("type") == "ingress":
        yield from _aws_rule_block(i)
    elif t == "aws:ec2/securityGroup:SecurityGroup":
        for block in i.get("ingress") or []:
            yield from _aws_rule_block(block)
    elif t == "alicloud:ecs/securityGroupRule:SecurityGroupRule":
        if i.get("type") == "ingress" and str(i.get("policy") or "accept") == "accept":
            low, _, high = str(i.get("portRange") or "-1/-1").partition("/")
            protocol = i.get("ipProtocol")
            ports = set(ADMIN_PORTS) if _all_protocols(protocol) else set()
            if _tcp(protocol) and not ports:
                ports = _ports(low, high or low)
            for key in ("cidrIp", "ipv6CidrIp"):
                if is_world(i.get(key)):
                    yield ports, str(i[key])
    elif t == "tencentcloud:Security/groupRuleSet:GroupRuleSet":
        for block in i.get("ingresses") or []:
            if str(block.get("action", "")).upper() != "ACCEPT":
                continue
            protocol = str(block.get("protocol") or "ALL")
            ports = set(ADMIN_PORTS) if _all_protocols(protocol) else set()
            if _tcp(protocol) and not ports:
                ports = _tencent_ports(str(block.get("port") or "ALL"))
            for key in ("cidrBlock", "ipv6CidrBlock"):
                if is_world(block.get(key)):
                    yield ports, str(block[key])

    elif t == "volcenginecc:vpc/securityGroup:SecurityGroup":  # Volcano Engine (issue 27)
        for block in i.get("ingressPermissions") or []:
            if str(block.get("policy") or "accept") != "accept":
                continue
            protocol = block.get("protocol")
            ports = set(ADMIN_PORTS) if _all_protocols(protocol) else set()
            if _tcp(protocol) and not ports:
                ports = _ports(block.get("portStart"), block.get("portEnd"))
            if is_world(block.get("cidrIp")):
                yield ports, str(block["cidrIp"])


def _aws_rule_block(block: Any) -> Iterator[tuple[set[int], str]]:
    protocol = block.get("protocol")
    ports = (
        set(ADMIN_PORTS)
        if _all_protocols(protocol)
        else (_ports(block.get("fromPort"), block.get("toPort")) if _tcp(protocol) else set())
    )
    for cidr in [*(block.get("cidrBlocks") or []), *(block.get("ipv6CidrBlocks") or [])]:
        if is_world(cidr):
            yield ports, str(cidr)


def _tencent_ports(spec: str) -> set[int]:
    """Tencent writes ports as `ALL`, `22`, `80,443` or `1-65535`."""
    if spec.upper() == "ALL":
        return set(ADMIN_PORTS)
    found: set[int] = set()
    for part in spec.split(","):
        low, _, high = part.strip().partition("-")
        found |= _ports(low, high or low)
    return found


@rule(
    "no-world-open-admin-ports",
    "mandatory",
    "No ingress from 0.0.0.0/0 or ::/0 on SSH 22, Jupyter 8888 or TensorBoard 6006.",
    opt_in="allowPublicAdminAccess",
)
def no_world_open_admin_ports(resource: Resource, view: StackView) -> Iterator[str]:
    for ports, cidr in _world_open_ports(resource):
        if ports:
            listed = ", ".join(str(p) for p in sorted(ports))
            yield f"opens port {listed} to the whole internet ({cidr})"


def _public_endpoint_problem(resource: Resource) -> str | None:
    i = resource.inputs
    t = resource.type
    if t == "aws:eks/cluster:Cluster":
        vpc = i.get("vpcConfig") or {}
        # EKS defaults: public endpoint on, open to 0.0.0.0/0.
        if vpc.get("endpointPublicAccess", True) is False:
            return None
        cidrs = vpc.get("publicAccessCidrs") or ["0.0.0.0/0"]
        if any(is_world(c) for c in cidrs):
            return "public API endpoint open to " + ", ".join(str(c) for c in cidrs)
    elif t == "alicloud:cs/managedKubernetes:ManagedKubernetes":
        # slb_internet_enabled defaults to true: an internet-facing API server SLB.
        if i.get("slbInternetEnabled", True) is not False:
            return "API server exposed through an internet-facing SLB (slbInternetEnabled)"
    elif (
        t
        in (
            "tencentcloud:Kubernetes/cluster:Cluster",
            "tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint",
        )
        and i.get("clusterInternet") is True
    ):
        allowed = i.get("managedClusterInternetSecurityPolicies") or []
        if any(is_world(c) for c in allowed):
            return "public API endpoint open to " + ", ".join(str(c) for c in allowed)
        # A security group created in the same stack has an unknown id during a preview: it
        # is set all the same, so only its absence (or an empty value) counts.
        group = known(i, "clusterInternetSecurityGroup")
        if not allowed and group is not UNKNOWN and not group:
            return "public API endpoint (clusterInternet) with no security group or CIDR list"
    elif (
        # Volcano Engine (issue 27): no source allowlist through this provider: world-open.
        t == "volcenginecc:vke/cluster:Cluster"
        and (i.get("clusterConfig") or {}).get("apiServerPublicAccessEnabled") is True
    ):
        return "public API endpoint with no source allowlist (open to 0.0.0.0/0)"
    return None


@rule(
    "cluster-endpoint-not-world-open",
    "mandatory",
    "The cluster API endpoint is private, or public only to listed networks.",
    opt_in="allowPublicAdminAccess",  # settings let adminCidrs open the API too, with this flag
)
def cluster_endpoint_not_world_open(resource: Resource, view: StackView) -> Iterator[str]:
    problem = _public_endpoint_problem(resource)
    if problem:
        yield problem
