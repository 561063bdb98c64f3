"""Alibaba Cloud GPU instance types (ECS GPU-accelerated compute-optimized families).

Specs (GPU model and count, GPU memory per GPU, vCPU, memory in GiB) come from
Alibaba Cloud's instance-family page "GPU-accelerated compute-optimized and
vGPU-accelerated instance families" (Chinese edition, current version, the one
that lists gn9gc/gn8v/gn8is; cross-checked against the older English edition,
which gives the same GPU counts and memory sizes, and for gn7 says "NVIDIA A100,
40 GB HBM2 per GPU"). Where the two editions disagree on RAM (gn7: 94/378/756 GiB
now, 95/380/760 GiB in the older English page) the current edition is used.

Prices: Alibaba publishes pay-as-you-go prices only through its dynamically
rendered price list and price calculator; no per-instance-type figure for these
families was found in a source that could be cited, so every price is ``None``
with a note. Nothing here is converted from CNY or estimated.
"""

from __future__ import annotations

from .model import GpuInstanceType, Price

_SPEC_SOURCE = (
    "https://www.alibabacloud.com/help/en/ecs/user-guide/"
    "gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1"
)
_PRICE_SOURCE = (
    "https://www.alibabacloud.com/help/en/ecs/instance-types"
    " (points to the Price tab of the ECS product page; no static figure)"
)
_CHECKED = "2026-11-30"
_NO_PRICE = (
    "No citable public pay-as-you-go price found for this instance type: Alibaba's "
    "price list/calculator is rendered dynamically and no official static figure was "
    "available (searched again 2026-11-30 for issue #21: price pages, docs, third-party "
    "trackers); `gpuinfra prices --stack <stack>` reads the account's own price. "
    f"Specs from {_SPEC_SOURCE}."
)


def _no_price(region: str = "cn-hangzhou") -> Price:
    return Price(
        per_hour=None,
        region=region,
        source=_PRICE_SOURCE,
        date=_CHECKED,
        note=_NO_PRICE,
    )


def _it(
    instance_type: str,
    gpu_model: str,
    gpu_count: int,
    gpu_memory_gb: int,
    vcpu: int,
    ram_gb: float,
    price: Price | None = None,
) -> GpuInstanceType:
    # "ecs.gn7i-c8g1.2xlarge" -> "gn7i"; "ecs.gn8is-8x.32xlarge" -> "gn8is"
    family = instance_type.split(".")[1].split("-")[0]
    return GpuInstanceType(
        cloud="alicloud",
        instance_type=instance_type,
        family=family,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        gpu_memory_gb=gpu_memory_gb,
        vcpu=vcpu,
        ram_gb=ram_gb,
        price=price if price is not None else _no_price(),
    )


INSTANCE_TYPES: tuple[GpuInstanceType, ...] = (
    # gn6i: NVIDIA T4, 16 GB per GPU
    _it("ecs.gn6i-c4g1.xlarge", "T4", 1, 16, 4, 15),
    _it("ecs.gn6i-c8g1.2xlarge", "T4", 1, 16, 8, 31),
    _it("ecs.gn6i-c16g1.4xlarge", "T4", 1, 16, 16, 62),
    _it("ecs.gn6i-c24g1.12xlarge", "T4", 2, 16, 48, 186),
    _it("ecs.gn6i-c24g1.24xlarge", "T4", 4, 16, 96, 372),
    # gn7i: NVIDIA A10, 24 GB per GPU
    _it("ecs.gn7i-c8g1.2xlarge", "A10", 1, 24, 8, 30),
    _it("ecs.gn7i-c16g1.4xlarge", "A10", 1, 24, 16, 60),
    _it("ecs.gn7i-c32g1.16xlarge", "A10", 2, 24, 64, 376),
    _it("ecs.gn7i-c32g1.32xlarge", "A10", 4, 24, 128, 752),
    _it("ecs.gn7i-8x.32xlarge", "A10", 8, 24, 128, 512),
    # gn6v: NVIDIA V100 (SXM2), 16 GB per GPU
    _it("ecs.gn6v-c8g1.2xlarge", "V100-16GB", 1, 16, 8, 32),
    _it("ecs.gn6v-c8g1.8xlarge", "V100-16GB", 4, 16, 32, 128),
    _it("ecs.gn6v-c8g1.16xlarge", "V100-16GB", 8, 16, 64, 256),
    # gn6e: NVIDIA V100 (SXM2), 32 GB per GPU
    _it("ecs.gn6e-c12g1.3xlarge", "V100-32GB", 1, 32, 12, 92),
    _it("ecs.gn6e-c12g1.12xlarge", "V100-32GB", 4, 32, 48, 368),
    _it("ecs.gn6e-c12g1.24xlarge", "V100-32GB", 8, 32, 96, 736),
    # gn7: NVIDIA A100, 40 GB per GPU (all sizes)
    _it("ecs.gn7-c12g1.3xlarge", "A100-40GB", 1, 40, 12, 94),
    _it("ecs.gn7-c13g1.13xlarge", "A100-40GB", 4, 40, 52, 378),
    _it("ecs.gn7-c13g1.26xlarge", "A100-40GB", 8, 40, 104, 756),
    # gn8is: NVIDIA L20, 48 GB per GPU; only in some regions outside mainland China
    _it("ecs.gn8is.2xlarge", "L20", 1, 48, 8, 64, _no_price("ap-southeast-1")),
    _it("ecs.gn8is-8x.32xlarge", "L20", 8, 48, 128, 1024, _no_price("ap-southeast-1")),
)
