"""The per-cloud facts settings validation depends on; one module per cloud fills it in."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class CloudRules:
    cloud: str
    title: str
    """How people write the cloud's name in messages, e.g. "AWS", "Alibaba Cloud"."""
    region_key: str
    """The provider's own config key for the region, e.g. `aws:region`."""
    region_example: str
    region_pattern: re.Pattern[str]
    default_system_instance_type: str
    bucket_name_problem: Callable[[str], str | None]
    """Why a bucket name breaks this cloud's naming rules, or None."""
