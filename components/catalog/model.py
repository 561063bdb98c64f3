"""Shape of one catalog entry: what a GPU instance type gives and what it costs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cloud = Literal["aws", "alicloud", "tencentcloud", "volcengine"]


@dataclass(frozen=True)
class Price:
    """An on-demand list price per instance-hour, in `currency`, or the reason there is none.

    ``per_hour`` is ``None`` when no trustworthy public figure was found: the cost estimate
    then says "unknown" instead of inventing a number. The currency is the one the source
    quotes (ISO 4217: "USD", "CNY"); amounts in different currencies are never added up.
    """

    per_hour: float | None
    region: str
    source: str
    date: str
    note: str = ""
    currency: str = "USD"

    def __post_init__(self) -> None:
        if self.per_hour is None and not self.note:
            raise ValueError("a price of None must say why in `note`")

    @property
    def usd_per_hour(self) -> float | None:
        """The price when it is quoted in USD; None otherwise (never converted silently)."""
        return self.per_hour if self.currency == "USD" else None


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
