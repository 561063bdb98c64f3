"""Tencent Cloud GPU instance types (CVM GPU Computing families).

Specs (GPU model and count, GPU memory per GPU, vCPU, memory) come from Tencent
Cloud's "GPU Computing Instance" page (GPU Cloud Computing, product 560, doc
19701), international and Chinese editions. Tencent writes memory as "GB"; it is
recorded here as the instance memory figure as published. Note that GN10Xp uses
the 32 GB V100 (SXM2, NVLink), not the 16 GB one, and that Tencent's A10 family
is PNV4 (GN7vi is a T4 video-enhancement variant of GN7).

Prices: GN7 and GN10Xp carry the pay-as-you-go figures of Tencent Cloud's own
international "Cloud GPU Service > Pricing Overview" page (560/8025), in USD, for
Guangzhou Zone 3, compute only (CPU, memory, GPU; disks and network are billed
apart). The page is published from Tencent's documentation repository
tencentyun/intlcloud-documents; the figures are quoted from it at commit b7e17ea6
(2023-06-30, the page's last revision there; the GN7 figures are unchanged since its
2020-07 version, and the repository's 2024-12-24 head still carries them). The page
says prices differ by zone and OS and that the purchase page prevails. They are what
an international-site (USD-billed) account pays; a China-site account is billed in
CNY at its own list price, which no static source gives: nothing is converted. The
Chinese-site billing page (cloud.tencent.com 560/8025) shows no figure, and GN7vi,
GT4 and PNV4 are not on the international page: those stay ``None`` with a note.
"""

from __future__ import annotations

from .model import GpuInstanceType, Price

_SPEC_SOURCE = "https://intl.cloud.tencent.com/document/product/560/19701"
_PRICE_SOURCE = (
    "https://cloud.tencent.com/document/product/560/8025"
    " (GPU billing: prices only via the CVM price calculator; no static figure)"
)
_CHECKED = "2026-11-30"
_LIST_SOURCE = (
    "https://www.tencentcloud.com/document/product/560/8025 (Tencent Cloud international "
    "site, Cloud GPU Service pricing overview: pay-as-you-go, Guangzhou Zone 3, compute only, "
    "USD; quoted from tencentyun/intlcloud-documents@b7e17ea6 "
    "yehe_doc/计算/GPU 云服务器/购买指南/价格总览_intl_en.md lines 8, 28-32, 62-65)"
)
_LIST_DATE = "2023-06-30"
_NO_PRICE = (
    "No citable public pay-as-you-go price found for this instance type: it is not on "
    "Tencent's international GPU pricing overview (560/8025, which lists GN6S, GN7, GN8, "
    "GN10X and GN10Xp), and the China site shows GPU prices only in the logged-in price "
    "calculator/purchase page (searched again 2026-11-30 for issue #21); `gpuinfra prices "
    f"--stack <stack>` reads the account's own price. Specs from {_SPEC_SOURCE}."
)


def _no_price(region: str = "ap-guangzhou") -> Price:
    return Price(
        per_hour=None,
        region=region,
        source=_PRICE_SOURCE,
        date=_CHECKED,
        note=_NO_PRICE,
    )


def _listed(usd: float) -> Price:
    """A figure from the international pricing overview (`_LIST_SOURCE`), as printed."""
    return Price(
        per_hour=usd,
        region="ap-guangzhou",
        source=_LIST_SOURCE,
        date=_LIST_DATE,
        currency="USD",
        note=(
            "Tencent's international-site list price for Guangzhou Zone 3 (other zones and "
            "OSes differ; the purchase page prevails); an account on the China site is billed "
            "in CNY at a price no static source gives, and this is not converted to it"
        ),
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
    _it("GN7.2XLARGE32", "T4", 1, 16, 8, 32, _listed(1.26)),
    _it("GN7.5XLARGE80", "T4", 1, 16, 20, 80, _listed(2.01)),
    _it("GN7.8XLARGE128", "T4", 1, 16, 32, 128, _listed(2.77)),
    _it("GN7.10XLARGE160", "T4", 2, 16, 40, 160, _listed(4.03)),
    _it("GN7.20XLARGE320", "T4", 4, 16, 80, 320, _listed(8.06)),
    # GN7vi: GN7 with Tencent's video-enhancement stack, NVIDIA Tesla T4
    _it("GN7vi.5XLARGE80", "T4", 1, 16, 20, 80),
    _it("GN7vi.10XLARGE160", "T4", 2, 16, 40, 160),
    _it("GN7vi.20XLARGE320", "T4", 4, 16, 80, 320),
    # GN10Xp: NVIDIA Tesla V100 NVLink, 32 GB per GPU
    _it("GN10Xp.2XLARGE40", "V100-32GB", 1, 32, 10, 40, _listed(1.72)),
    _it("GN10Xp.5XLARGE80", "V100-32GB", 2, 32, 20, 80, _listed(3.44)),
    _it("GN10Xp.10XLARGE160", "V100-32GB", 4, 32, 40, 160, _listed(6.89)),
    _it("GN10Xp.20XLARGE320", "V100-32GB", 8, 32, 80, 320, _listed(13.78)),
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
