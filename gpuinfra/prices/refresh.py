"""What a per-cloud refresh is asked for and what it answers (no cloud SDK here).

Each cloud module (`aws`, `alicloud`, `tencentcloud`, `volcengine`) has `credentials()`, which
finds the user's credentials without calling anything (`NoCredentialsError` when there are none),
and `refresh(request, credentials)`, which reads on-demand and current spot prices. A price the
API refuses for one instance type (not sold in the region, unknown type) is recorded as
unavailable with the API's words; a refusal of the caller (bad key, no permission, no network)
is a `RefreshFailedError` and nothing is written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .file import SpotQuote


class NoCredentialsError(Exception):
    """No credentials for the cloud were found; the message says where they were looked for."""


class RefreshFailedError(Exception):
    """The price API refused the caller or could not be reached; the message says why."""


@dataclass(frozen=True)
class Request:
    region: str
    zones: tuple[str, ...]
    """Zones to read spot prices in; empty: every zone the API reports for the region."""
    instance_types: tuple[str, ...]
    now: dt.datetime
    currency: str | None = None
    """The account's billing currency, for APIs whose answer does not say it."""
    endpoints: Mapping[str, str] = field(default_factory=dict)
    """Service -> endpoint URL, to point a client at a local recorded-response server."""


@dataclass
class Result:
    currency: str
    source: str
    on_demand: dict[str, float] = field(default_factory=dict)
    spot: dict[str, dict[str, SpotQuote]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_spot(self, instance_type: str, zone: str, price: float, at: str) -> None:
        """Keep the newest price per type and zone (histories list several)."""
        zones = self.spot.setdefault(instance_type, {})
        current = zones.get(zone)
        if current is None or at >= current.at:
            zones[zone] = SpotQuote(price, zone, at)


def iso(value: Any) -> str:
    """A timestamp from an API (datetime or text) as ISO 8601 text."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value or "")
