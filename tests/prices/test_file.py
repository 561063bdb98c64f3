"""The dated price file: what `gpuinfra prices` writes is what the estimate reads, and a
broken file is one clear error, never a silent $0."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpuinfra.prices import file as price_file
from gpuinfra.project import ProjectError


def _sample(path: Path | None = None) -> price_file.PriceFile:
    return price_file.PriceFile(
        cloud="alicloud",
        region="cn-hangzhou",
        currency="CNY",
        refreshed="2026-11-30T12:30:00Z",
        source="test",
        on_demand={"ecs.gn7i-c8g1.2xlarge": 10.5},
        spot={
            "ecs.gn7i-c8g1.2xlarge": {
                "cn-hangzhou-i": price_file.SpotQuote(2.1, "cn-hangzhou-i", "2026-11-30T12:00:00Z"),
                "cn-hangzhou-j": price_file.SpotQuote(2.6, "cn-hangzhou-j", "2026-11-30T11:00:00Z"),
            }
        },
        unavailable={"ecs.gn8is.2xlarge": "InvalidInstanceType.ValueNotSupported: not here"},
        notes=("a note",),
        path=path,
    )


def test_round_trip(tmp_path: Path) -> None:
    folder = tmp_path / "prices"
    path = price_file.path_for("alicloud", "cn-hangzhou", folder)
    price_file.write(_sample(), path)
    assert [p.name for p in folder.iterdir()] == ["alicloud-cn-hangzhou.json"]  # no temp file
    assert price_file.load("alicloud", "cn-hangzhou", folder) == _sample(path)
    assert price_file.load("alicloud", "cn-beijing", folder) is None
    assert [f.region for f in price_file.load_all("alicloud", folder)] == ["cn-hangzhou"]


def test_spot_is_the_highest_over_the_stacks_zones() -> None:
    prices = _sample()
    assert prices.spot_price("ecs.gn7i-c8g1.2xlarge", ["cn-hangzhou-i"]).per_hour == 2.1  # type: ignore[union-attr]
    assert prices.spot_price("ecs.gn7i-c8g1.2xlarge").per_hour == 2.6  # type: ignore[union-attr]
    # Zones the file did not read: every zone read counts (the pool may land anywhere).
    assert prices.spot_price("ecs.gn7i-c8g1.2xlarge", ["cn-hangzhou-k"]).zone == "cn-hangzhou-j"  # type: ignore[union-attr]
    assert prices.spot_price("ecs.gn6i-c4g1.xlarge") is None
    assert prices.age_days(dt.date(2026, 12, 31)) == 31


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not valid JSON (line 1"),
        ("[]", "holds a list"),
        ('{"cloud": "alicloud"}', "`region` is missing"),
        (
            json.dumps({**_sample().to_json(), "onDemandPerHour": {"x": -1}}),
            "onDemandPerHour.x is -1",
        ),
        (json.dumps({**_sample().to_json(), "refreshed": "yesterday"}), "not a date"),
        (
            json.dumps({**_sample().to_json(), "region": "cn-beijing"}),
            "holds prices of alicloud cn-beijing",
        ),
    ],
)
def test_a_broken_file_is_one_error_naming_it(tmp_path: Path, text: str, says: str) -> None:
    path = price_file.path_for("alicloud", "cn-hangzhou", tmp_path)
    path.write_text(text)
    with pytest.raises(ProjectError, match=r"alicloud-cn-hangzhou\.json") as raised:
        price_file.load("alicloud", "cn-hangzhou", tmp_path)
    assert says in str(raised.value)
