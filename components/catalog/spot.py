"""Spot (preemptible) price as a fraction of the on-demand price, per cloud.

None of the three clouds publishes one discount: spot prices float per instance type,
zone and hour. What each publishes is a ceiling ("up to 90% off"); GPU types in demand
are discounted far less. The factor below is therefore a planning assumption, stated
as such next to the provider's own claim, and a stack can override it with
`gpuinfra:costSpotFactor`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpotFactor:
    factor: float
    """Spot price = on-demand price x factor."""
    source: str
    date: str
    note: str


_ASSUMPTION = (
    "Planning assumption, not a quote: 0.4 x on-demand (60% off), well inside the provider's "
    "'up to 90% off' ceiling; in-demand GPU types often see smaller discounts. Override with "
    "gpuinfra:costSpotFactor."
)

SPOT_FACTORS: dict[str, SpotFactor] = {
    "aws": SpotFactor(
        factor=0.4,
        source="https://aws.amazon.com/ec2/spot/pricing/ (Spot: up to 90% off On-Demand)",
        date="2026-11-30",
        note=_ASSUMPTION,
    ),
    "alicloud": SpotFactor(
        factor=0.4,
        source="https://www.alibabacloud.com/help/en/ecs/user-guide/preemptible-instances "
        "(preemptible instances: up to 90% off pay-as-you-go)",
        date="2026-11-30",
        note=_ASSUMPTION,
    ),
    "tencentcloud": SpotFactor(
        factor=0.4,
        source="https://www.tencentcloud.com/document/product/213/17816 "
        "(spot instances: as low as 10% of pay-as-you-go)",
        date="2026-11-30",
        note=_ASSUMPTION,
    ),
}


def spot_factor(cloud: str) -> SpotFactor | None:
    return SPOT_FACTORS.get(cloud)
