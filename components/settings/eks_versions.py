"""Which Kubernetes minors EKS creates and runs, and which upgrades it accepts.

EKS supports a minor for 14 months after its EKS release (standard support), then 12 more
months at the extended-support price; after that EKS neither creates clusters on it nor keeps
them there (it auto-upgrades them). Source: "Understand the Kubernetes version lifecycle on
EKS", https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html (the release
calendar; dates as listed at https://endoflife.date/amazon-eks, checked 2026-11-30).

Upgrades: EKS updates a control plane one minor at a time, and only once every managed node
group runs the control plane's minor (EKS user guide, "Update existing cluster to new
Kubernetes version", awsdocs/amazon-eks-user-guide@4d52b4d latest/ug/clusters/
update-cluster.adoc:63 and :102). It cannot downgrade.

Nothing here imports Pulumi: settings validation and the offline preview use it as is.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

SupportKind = Literal["standard", "extended", "ended", "unknown"]


@dataclass(frozen=True)
class EksMinor:
    minor: str
    end_of_standard: dt.date | None
    """None: EKS offers the minor but has not published its end dates (the newest one)."""

    @property
    def end_of_extended(self) -> dt.date | None:
        """Twelve months after the end of standard support."""
        end = self.end_of_standard
        return end.replace(year=end.year + 1) if end else None


EKS_CALENDAR: dict[str, EksMinor] = {
    minor.minor: minor
    for minor in (
        EksMinor("1.31", dt.date(2025, 11, 26)),
        EksMinor("1.32", dt.date(2026, 3, 23)),
        EksMinor("1.33", dt.date(2026, 7, 29)),
        EksMinor("1.34", dt.date(2026, 12, 2)),
        EksMinor("1.35", dt.date(2027, 3, 27)),
        # The EKS user guide names 1.36 as its newest minor (kubernetes-versions.md, 2026);
        # its end dates are not in the sources above yet.
        EksMinor("1.36", None),
    )
}


@dataclass(frozen=True)
class Support:
    kind: SupportKind
    until: dt.date | None

    def describe(self, minor: str) -> str:
        """One line for logs and stack outputs, e.g. `1.35: standard support until ...`."""
        if self.kind == "standard":
            until = f" until {self.until}" if self.until else " (end date not yet published)"
            return f"Kubernetes {minor}: EKS standard support{until}"
        if self.kind == "extended":
            return (
                f"Kubernetes {minor}: EKS extended support until {self.until}, billed at the "
                "extended-support price per cluster-hour; upgrade to return to standard support"
            )
        if self.kind == "ended":
            return f"Kubernetes {minor}: EKS support ended on {self.until}"
        return f"Kubernetes {minor}: not a minor EKS offers"


def support(minor: str, today: dt.date) -> Support:
    entry = EKS_CALENDAR.get(minor)
    if entry is None:
        return Support("unknown", None)
    standard, extended = entry.end_of_standard, entry.end_of_extended
    if standard is None or today <= standard:
        return Support("standard", standard)
    if extended is not None and today <= extended:
        return Support("extended", extended)
    return Support("ended", extended)


def offered(today: dt.date) -> list[str]:
    """`1.32 (extended support until 2027-03-23)`, ... for every minor EKS creates today."""
    listed = []
    for minor in EKS_CALENDAR:
        status = support(minor, today)
        if status.kind == "standard":
            listed.append(minor)
        elif status.kind == "extended":
            listed.append(f"{minor} (extended support until {status.until}, billed extra)")
    return listed


def version_problem(minor: str, today: dt.date) -> str | None:
    """Why EKS would not create or keep a cluster on `minor` today, or None."""
    status = support(minor, today)
    if status.kind in ("standard", "extended"):
        return None
    allowed = "; ".join(offered(today))
    if status.kind == "ended":
        return (
            f"EKS ended extended support for {minor} on {status.until}: it no longer creates "
            f"clusters on it and upgrades those still there. EKS offers: {allowed}"
        )
    return f"EKS does not offer Kubernetes {minor}. EKS offers: {allowed}"


def _minor_number(minor: str) -> int | None:
    match = re.fullmatch(r"1\.(\d+)", minor)
    return int(match.group(1)) if match else None


def upgrade_problem(
    wanted: str, control_plane: str | None, node_groups: Iterable[str] = ()
) -> str | None:
    """Why EKS would refuse moving a deployed cluster to `wanted`, or None.

    `control_plane` is the deployed cluster's minor (None: no cluster yet, nothing to check);
    `node_groups` the minors its managed node groups run. The control plane may move one minor
    per update, and only from the minor every node group runs: the lowest of them all is where
    the next step starts.
    """
    target = _minor_number(wanted)
    current = _minor_number(control_plane) if control_plane else None
    if target is None or current is None:
        return None
    if target < current:
        return (
            f"the cluster runs {control_plane}; EKS cannot downgrade a cluster "
            f"(set {control_plane} or newer)"
        )
    nodes = sorted({n for n in (_minor_number(v) for v in node_groups) if n is not None})
    lowest = min([current, *nodes])
    if target - lowest <= 1 or target == current:
        return None
    steps = ", then ".join(f"1.{m}" for m in range(lowest + 1, target + 1))
    lagging = (
        f" and its node groups run 1.{nodes[0]} (EKS upgrades the control plane only once "
        "every node group runs its minor)"
        if nodes and nodes[0] < current
        else ""
    )
    return (
        f"the cluster runs {control_plane}{lagging}; EKS moves one minor per update: "
        f"run `pulumi up` with {steps} in turn"
    )
