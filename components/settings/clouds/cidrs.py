"""Pod and Service networks of the managed clusters that take them (TKE, VKE): one check."""

from __future__ import annotations

import ipaddress

from ..reader import ConfigReader

PRIVATE_RANGES = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


def network_or_none(cidr: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(cidr, strict=True)
    except ValueError:
        return None  # the generic validation has reported it


def private_cidr(
    r: ConfigReader, key: str, shortest: int, longest: int, platform: str = ""
) -> ipaddress.IPv4Network | None:
    """`key` as a private IPv4 network of prefix /`shortest` to /`longest`, or None with a
    problem recorded. `platform` names whose rule the private ranges are, in the message."""
    value = r.string(key)
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError:
        r.problem(key, value, "must be an IPv4 CIDR such as 172.20.0.0/16")
        return None
    if not any(net.subnet_of(private) for private in PRIVATE_RANGES):
        ranges = "must lie in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
        r.problem(key, value, f"{ranges} ({platform})" if platform else ranges)
        return None
    if not shortest <= net.prefixlen <= longest:
        r.problem(key, value, f"prefix must be between /{shortest} and /{longest}")
        return None
    return net
