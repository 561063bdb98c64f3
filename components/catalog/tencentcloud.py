"""Tencent Cloud GPU instance types (CVM GPU Computing families).

Specs (GPU model and count, GPU memory per GPU, vCPU, memory) come from Tencent
Cloud's "GPU Computing Instance" page (GPU Cloud Computing, product 560, doc
19701), international and Chinese editions. Tencent writes memory as "GB"; it is
recorded here as the instance memory figure as published. Note that GN10Xp uses
the 32 GB V100 (SXM2, NVLink), not the 16 GB one, and that Tencent's A10 family
is PNV4 (GN7vi is a T4 video-enhancement variant of GN7).

Prices: Tencent's GPU billing page says prices are shown only in the CVM price
calculator / purchase page (logged in); no per-instance-type figure for these
families was found in a source that could be cited, so every price is ``None``
with a note. Nothing here is converted from CNY or estimated.
"""

from __future__ import annotations

from .model import GpuInstanceType, Price

_SPEC_SOURCE = "https://intl.cloud.tencent.com/document/product/560/19701"
_PRICE_SOURCE = (
    "https://cloud.tencent.com/document/product/560/8025"
    " (GPU billing: prices only via the CVM price calculator; no static figure)"
)
_CHECKED = "2026-11-30"
_NO_PRICE = (
    "No citable public pay-as-you-go price found for this instance type: Tencent shows "
    "GPU prices only in the logged-in price calculator/purchase page (searched again "
    "2026-11-30 for issue #21); `gpuinfra prices --stack <stack>` reads the account's own "
    f"price. Specs from {_SPEC_SOURCE}."
)


def _no_price(region: str = "ap-guangzhou") -> Price:
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
    return GpuInstanceType(
        cloud="tencentcloud",
        instance_type=instance_type,
        family=instance_type.split(".")[0],  # "GN7.2XLARGE32" -> "GN7"
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        gpu_memory_gb=gpu_memory_gb,
        vcpu=vcpu,
        ram_gb=ram_gb,
        price=price if price is not None else _no_price(),
    )


INSTANCE_TYPES: tuple[GpuInstanceType, ...] = (
    # GN7: NVIDIA Tesla T4, 16 GB per GPU (the vGPU sizes GN7.LARGE20/2XLARGE40 are left out)
    _it("GN7.2XLARGE32", "T4", 1, 16, 8, 32),
    _it("GN7.5XLARGE80", "T4", 1, 16, 20, 80),
    _it("GN7.8XLARGE128", "T4", 1, 16, 32, 128),
    _it("GN7.10XLARGE160", "T4", 2, 16, 40, 160),
    _it("GN7.20XLARGE320", "T4", 4, 16, 80, 320),
    # GN7vi: GN7 with Tencent's video-enhancement stack, NVIDIA Tesla T4
    _it("GN7vi.5XLARGE80", "T4", 1, 16, 20, 80),
    _it("GN7vi.10XLARGE160", "T4", 2, 16, 40, 160),
    _it("GN7vi.20XLARGE320", "T4", 4, 16, 80, 320),
    # GN10Xp: NVIDIA Tesla V100 NVLink, 32 GB per GPU
    _it("GN10Xp.2XLARGE40", "V100-32GB", 1, 32, 10, 40),
    _it("GN10Xp.5XLARGE80", "V100-32GB", 2, 32, 20, 80),
    _it("GN10Xp.10XLARGE160", "V100-32GB", 4, 32, 40, 160),
    _it("GN10Xp.20XLARGE320", "V100-32GB", 8, 32, 80, 320),
    # GT4: NVIDIA A100 NVLink, 40 GB per GPU
    _it("GT4.4XLARGE96", "A100-40GB", 1, 40, 16, 96),
    _it("GT4.8XLARGE192", "A100-40GB", 2, 40, 32, 192),
    _it("GT4.20XLARGE474", "A100-40GB", 4, 40, 82, 474),
    _it("GT4.41XLARGE948", "A100-40GB", 8, 40, 164, 948),
    # PNV4: NVIDIA A10, 24 GB per GPU (allowlist: submit a ticket to buy)
    _it("PNV4.7XLARGE116", "A10", 1, 24, 28, 116),
    _it("PNV4.14XLARGE232", "A10", 2, 24, 56, 232),
    _it("PNV4.28XLARGE466", "A10", 4, 24, 112, 466),
    _it("PNV4.56XLARGE932", "A10", 8, 24, 224, 932),
)
