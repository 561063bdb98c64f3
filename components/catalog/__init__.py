"""GPU instance catalog: what each cloud's GPU instance types give and cost.

The catalog is the single place where specs and prices live; settings
validation, GPU-pool sizing and the cost estimate all read it.
"""

from __future__ import annotations

from . import alicloud, aws, tencentcloud, volcengine
from .model import Cloud, GpuInstanceType, Price

__all__ = [
    "CLOUDS",
    "Cloud",
    "GpuInstanceType",
    "Price",
    "find",
    "instance_types",
    "known_models",
    "matches_model",
    "pick",
]

CLOUDS: tuple[Cloud, ...] = ("aws", "alicloud", "tencentcloud", "volcengine")

_BY_CLOUD: dict[str, tuple[GpuInstanceType, ...]] = {
    "aws": aws.INSTANCE_TYPES,
    "alicloud": alicloud.INSTANCE_TYPES,
    "tencentcloud": tencentcloud.INSTANCE_TYPES,
    "volcengine": volcengine.INSTANCE_TYPES,
}


def instance_types(cloud: str) -> tuple[GpuInstanceType, ...]:
    return _BY_CLOUD.get(cloud, ())


def find(cloud: str, instance_type: str) -> GpuInstanceType | None:
    for entry in instance_types(cloud):
        if entry.instance_type == instance_type:
            return entry
    return None


def clouds_offering(instance_type: str) -> list[str]:
    """Clouds whose catalog lists ``instance_type`` (for "did you mean another cloud?")."""
    return [cloud for cloud in CLOUDS if find(cloud, instance_type) is not None]


def matches_model(entry_model: str, requested: str) -> bool:
    """``A100`` matches both ``A100-40GB`` and ``A100-80GB``; ``A100-80GB`` only itself."""
    want = requested.strip().upper()
    have = entry_model.upper()
    return have == want or have.split("-")[0] == want


def known_models(cloud: str) -> list[str]:
    return sorted({entry.gpu_model for entry in instance_types(cloud)})


def pick(cloud: str, gpu_model: str, gpu_count: int) -> GpuInstanceType | None:
    """Cheapest instance type on ``cloud`` with exactly ``gpu_count`` GPUs of ``gpu_model``.

    Types with a known price come first (cheapest first); a type without a price is
    only chosen when no priced type fits, so an unknown price never looks cheap.
    """
    fits = [
        e
        for e in instance_types(cloud)
        if e.gpu_count == gpu_count and matches_model(e.gpu_model, gpu_model)
    ]
    if not fits:
        return None

    def order(e: GpuInstanceType) -> tuple[int, float, int, str]:
        price = e.price.per_hour
        return (price is None, price or 0.0, e.vcpu, e.instance_type)

    return min(fits, key=order)
