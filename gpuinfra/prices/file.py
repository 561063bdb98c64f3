"""The dated price file `gpuinfra prices` writes and the estimate and sizing read.

One file per cloud and region, `<project>/prices/<cloud>-<region>.json`: on-demand prices per
instance type and the current spot price per instance type and zone, in the currency the
account is billed in, with when and from which API they were read. Commit it to share the
figures with the pull-request preview (which has no credentials); refresh it with
`gpuinfra prices --stack <stack>`. List prices change a few times a year; spot prices move
by the hour, so a spot figure older than `STALE_AFTER_DAYS` is flagged as such.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..project import ProjectError

FOLDER_NAME = "prices"
STALE_AFTER_DAYS = 30
"""After this the estimate says the file is old (spot prices move hourly)."""
FORMAT = 1

_folder_override: Path | None = None


def set_folder(folder: Path | None) -> None:
    """Read price files from `folder` instead of the project's `prices/` (tests)."""
    global _folder_override
    _folder_override = folder
    _cache.clear()


def folder() -> Path:
    """`prices/` beside the project's `components/` package (the project being previewed)."""
    if _folder_override is not None:
        return _folder_override
    from components import catalog

    return Path(catalog.__file__).absolute().parents[2] / FOLDER_NAME


def path_for(cloud: str, region: str, where: Path | None = None) -> Path:
    return (where or folder()) / f"{cloud}-{region}.json"


@dataclass(frozen=True)
class SpotQuote:
    per_hour: float
    zone: str
    at: str
    """When the cloud set this price (its timestamp), ISO 8601."""


@dataclass(frozen=True)
class PriceFile:
    cloud: str
    region: str
    currency: str
    refreshed: str
    """When the refresh ran, ISO 8601 UTC."""
    source: str
    """The APIs read, with the account's credentials."""
    on_demand: Mapping[str, float] = field(default_factory=dict)
    spot: Mapping[str, Mapping[str, SpotQuote]] = field(default_factory=dict)
    """Instance type -> zone -> the current spot price there."""
    unavailable: Mapping[str, str] = field(default_factory=dict)
    """Instance type -> what the API said when it gave no price (not sold here, ...)."""
    notes: tuple[str, ...] = ()
    path: Path | None = None

    @property
    def date(self) -> str:
        return self.refreshed[:10]

    def age_days(self, today: dt.date) -> int:
        return (today - dt.date.fromisoformat(self.date)).days

    def spot_price(self, instance_type: str, zones: Iterable[str] = ()) -> SpotQuote | None:
        """The highest current spot price over `zones` (all zones read when none is given or
        none of them was read): a pool may land in any of its zones."""
        by_zone = self.spot.get(instance_type) or {}
        wanted = [by_zone[z] for z in zones if z in by_zone] or list(by_zone.values())
        return max(wanted, key=lambda q: q.per_hour, default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "cloud": self.cloud,
            "region": self.region,
            "currency": self.currency,
            "refreshed": self.refreshed,
            "source": self.source,
            "onDemandPerHour": dict(sorted(self.on_demand.items())),
            "spotPerHour": {
                t: {z: {"perHour": q.per_hour, "at": q.at} for z, q in sorted(zones.items())}
                for t, zones in sorted(self.spot.items())
            },
            "unavailable": dict(sorted(self.unavailable.items())),
            "notes": list(self.notes),
        }


def _number(value: Any, where: str, path: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ProjectError(f"{path}: {where} is {value!r}; expected a price (a number >= 0)")
    return float(value)


def from_json(data: Any, path: Path) -> PriceFile:
    """A price file's document, checked: every way it is malformed is one `ProjectError`."""
    if not isinstance(data, dict):
        raise ProjectError(f"{path} holds a {type(data).__name__}; expected a price file object")
    for key in ("cloud", "region", "currency", "refreshed", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ProjectError(
                f"{path}: `{key}` is missing; expected a file written by `gpuinfra prices`"
            )
    try:
        dt.date.fromisoformat(data["refreshed"][:10])
    except ValueError as error:
        raise ProjectError(f"{path}: `refreshed` is not a date: {data['refreshed']!r}") from error
    on_demand_doc = data.get("onDemandPerHour") or {}
    spot_doc = data.get("spotPerHour") or {}
    if not isinstance(on_demand_doc, dict) or not isinstance(spot_doc, dict):
        raise ProjectError(f"{path}: `onDemandPerHour` and `spotPerHour` must be objects")
    on_demand = {str(t): _number(v, f"onDemandPerHour.{t}", path) for t, v in on_demand_doc.items()}
    spot: dict[str, dict[str, SpotQuote]] = {}
    for instance_type, zones in spot_doc.items():
        if not isinstance(zones, dict):
            raise ProjectError(f"{path}: spotPerHour.{instance_type} must map zones to prices")
        for zone, quote in zones.items():
            if not isinstance(quote, dict):
                raise ProjectError(f"{path}: spotPerHour.{instance_type}.{zone} must be an object")
            where = f"spotPerHour.{instance_type}.{zone}.perHour"
            spot.setdefault(str(instance_type), {})[str(zone)] = SpotQuote(
                _number(quote.get("perHour"), where, path), str(zone), str(quote.get("at") or "")
            )
    unavailable = data.get("unavailable") or {}
    notes = data.get("notes") or []
    return PriceFile(
        cloud=data["cloud"],
        region=data["region"],
        currency=data["currency"],
        refreshed=data["refreshed"],
        source=data["source"],
        on_demand=on_demand,
        spot=spot,
        unavailable={str(k): str(v) for k, v in dict(unavailable).items()},
        notes=tuple(str(n) for n in notes),
        path=path,
    )


_cache: dict[Path, tuple[float, PriceFile]] = {}


def read(path: Path) -> PriceFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ProjectError(f"{path}: not text ({error.reason}); expected JSON") from error
    except OSError as error:
        raise ProjectError(f"{path}: cannot be read ({error.strerror or error})") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProjectError(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
            "rewrite it with `gpuinfra prices`"
        ) from error
    return from_json(data, path)


def load(cloud: str, region: str, where: Path | None = None) -> PriceFile | None:
    """The refreshed prices of `cloud` in `region`, or None when there is no file."""
    path = path_for(cloud, region, where)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    cached = _cache.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    found = read(path)
    if (found.cloud, found.region) != (cloud, region):
        raise ProjectError(
            f"{path}: holds prices of {found.cloud} {found.region}; expected {cloud} {region} "
            "(the file name says which)"
        )
    _cache[path] = (mtime, found)
    return found


def load_all(cloud: str, where: Path | None = None) -> list[PriceFile]:
    """Every refreshed file of `cloud`, by region."""
    base = where or folder()
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.glob(f"{cloud}-*.json")):
        region = path.name[len(cloud) + 1 : -len(".json")]
        loaded = load(cloud, region, base)
        if loaded is not None:
            found.append(loaded)
    return found


def write(prices: PriceFile, path: Path) -> None:
    """Atomically: a reader never sees half a file, and a failed write leaves the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(prices.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    _cache.pop(path, None)
