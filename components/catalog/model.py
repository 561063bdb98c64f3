"""Shape of one catalog entry: what a GPU instance type gives and what it costs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cloud = Literal["aws", "alicloud", "tencentcloud", "volcengine"]


@dataclass(frozen=True)
class Price:
    """An on-demand list price, or the reason there is none.

    ``usd_per_hour`` is ``None`` when no trustworthy public figure was found: the
    cost estimate then says "unknown" instead of inventing a number.
    """

    usd_per_hour: float | None
    region: str
    source: str
    date: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.usd_per_hour is None and not self.note:
            raise ValueError("a price of None must say why in `note`")


@dataclass(frozen=True)
class GpuInstanceType:
    cloud: Cloud
    instance_type: str
    family: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: int
    """Memory of one GPU, in GB."""
    vcpu: int
    ram_gb: float
    price: Price

    @property
    def total_gpu_memory_gb(self) -> int:
        return self.gpu_memory_gb * self.gpu_count
