"""Volcano Engine GPU instance types (ECS GPU families) that VKE node pools can use.

Only types whose GPU model, count and host size were found in a source are listed; each says
where. Volcano Engine's own specification page was not reachable from this workplace, so the
list is short on purpose: add a type with its source (the console's purchase page, or
`DescribeInstanceTypes` with `InstanceTypeIds=[...]`, which returns GPU model, count, vCPU and
memory), never from memory.

Prices: no per-instance pay-as-you-go figure for these types was found in a source that could
be cited (Volcano Engine shows GPU prices in its logged-in price calculator), so every price
is `None` with a note; nothing is converted from CNY or estimated.
"""

from __future__ import annotations

from .model import GpuInstanceType, Price

_CHECKED = "2026-11-30"
_NO_PRICE = (
    "No citable public pay-as-you-go price found for this instance type: Volcano Engine shows "
    "GPU prices in its logged-in price calculator (searched again 2026-11-30 for issue #21); "
    "`gpuinfra prices --stack <stack>` reads the current spot price with the account's "
    "credentials."
)


def _no_price(region: str = "cn-beijing") -> Price:
    return Price(
        per_hour=None,
        region=region,
        # The public pricing index (not reachable from this workplace); GPU prices sit in its
        # logged-in calculator.
        source="https://www.volcengine.com/pricing (no static GPU price figure found)",
        date=_CHECKED,
        note=_NO_PRICE,
    )


INSTANCE_TYPES: tuple[GpuInstanceType, ...] = (
    # gni2: NVIDIA A10, 24 GB per GPU (NVIDIA A10 datasheet: 24 GB GDDR6).
    # ecs.gni2.3xlarge: 14 vCPU, 56 GB, 1 x A10 as a public project's server specification
    # lists it (github: DMA OL README, "Server Specifications"); re-check with
    # DescribeInstanceTypes before relying on the host size.
    GpuInstanceType(
        cloud="volcengine",
        instance_type="ecs.gni2.3xlarge",
        family="ecs.gni2",
        gpu_model="A10",
        gpu_count=1,
        gpu_memory_gb=24,
        vcpu=14,
        ram_gb=56,
        price=_no_price(),
    ),
)
