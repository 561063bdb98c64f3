"""AWS GPU instance types (us-east-1, Linux, on-demand).

Specs from the EC2 accelerated-computing instance pages. Prices from the EC2
On-Demand pricing page (the AWS Price List API gives the same figures); the
P4d/P4de/P5 figures are those after AWS's price cut for NVIDIA GPU instances,
effective 2025-06-01 for On-Demand and announced 2025-06-05 (P5 up to 45%,
P4d/P4de up to 33%; P3, G4dn, G5 and G6 were not cut).
"""

from __future__ import annotations

from .model import GpuInstanceType, Price

_SOURCE = "https://aws.amazon.com/ec2/pricing/on-demand/ (us-east-1, Linux)"
_SOURCE_CUT = (
    "https://aws.amazon.com/ec2/pricing/on-demand/ (us-east-1, Linux, after the price cut "
    "announced at https://aws.amazon.com/about-aws/whats-new/2025/06/"
    "pricing-usage-model-ec2-instances-nvidia-gpus/)"
)
_REGION = "us-east-1"


def _price(usd: float, *, after_cut: bool = False) -> Price:
    return Price(
        per_hour=usd,
        region=_REGION,
        source=_SOURCE_CUT if after_cut else _SOURCE,
        date="2025-06",
    )


def _it(
    instance_type: str,
    gpu_model: str,
    gpu_count: int,
    gpu_memory_gb: int,
    vcpu: int,
    ram_gb: float,
    price: Price,
) -> GpuInstanceType:
    return GpuInstanceType(
        cloud="aws",
        instance_type=instance_type,
        family=instance_type.split(".")[0],
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        gpu_memory_gb=gpu_memory_gb,
        vcpu=vcpu,
        ram_gb=ram_gb,
        price=price,
    )


INSTANCE_TYPES: tuple[GpuInstanceType, ...] = (
    _it("g4dn.xlarge", "T4", 1, 16, 4, 16, _price(0.526)),
    _it("g4dn.2xlarge", "T4", 1, 16, 8, 32, _price(0.752)),
    _it("g4dn.12xlarge", "T4", 4, 16, 48, 192, _price(3.912)),
    _it("g5.xlarge", "A10G", 1, 24, 4, 16, _price(1.006)),
    _it("g5.2xlarge", "A10G", 1, 24, 8, 32, _price(1.212)),
    _it("g5.12xlarge", "A10G", 4, 24, 48, 192, _price(5.672)),
    _it("g5.48xlarge", "A10G", 8, 24, 192, 768, _price(16.288)),
    _it("g6.xlarge", "L4", 1, 24, 4, 16, _price(0.8048)),
    _it("p3.2xlarge", "V100-16GB", 1, 16, 8, 61, _price(3.06)),
    _it("p3.8xlarge", "V100-16GB", 4, 16, 32, 244, _price(12.24)),
    _it("p4d.24xlarge", "A100-40GB", 8, 40, 96, 1152, _price(21.96, after_cut=True)),
    _it("p4de.24xlarge", "A100-80GB", 8, 80, 96, 1152, _price(27.45, after_cut=True)),
    _it("p5.48xlarge", "H100-80GB", 8, 80, 192, 2048, _price(55.04, after_cut=True)),
)
