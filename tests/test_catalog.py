"""The GPU catalog: facts carry sources, prices are real or honestly missing, picking works."""

from __future__ import annotations

import pytest

from components import catalog


def test_required_aws_entries_and_prices() -> None:
    expected = {
        "g4dn.xlarge": ("T4", 1),
        "g5.xlarge": ("A10G", 1),
        "g5.12xlarge": ("A10G", 4),
        "p3.2xlarge": ("V100-16GB", 1),
        "p4d.24xlarge": ("A100-40GB", 8),
        "p4de.24xlarge": ("A100-80GB", 8),
        "p5.48xlarge": ("H100-80GB", 8),
    }
    for instance_type, (model, count) in expected.items():
        entry = catalog.find("aws", instance_type)
        assert entry is not None, instance_type
        assert (entry.gpu_model, entry.gpu_count) == (model, count)
    prices = {
        "p3.2xlarge": 3.06,
        "p4d.24xlarge": 21.96,
        "p4de.24xlarge": 27.45,
        "p5.48xlarge": 55.04,
    }
    for instance_type, price in prices.items():
        entry = catalog.find("aws", instance_type)
        assert entry is not None and entry.price.usd_per_hour == price
        assert entry.price.region == "us-east-1"


@pytest.mark.parametrize(
    ("cloud", "families"),
    [
        ("alicloud", {"gn6i": "T4", "gn7i": "A10", "gn6v": "V100", "gn6e": "V100", "gn7": "A100"}),
        ("tencentcloud", {"GN7": "T4", "GN10Xp": "V100", "GT4": "A100", "PNV4": "A10"}),
    ],
)
def test_alibaba_and_tencent_families(cloud: str, families: dict[str, str]) -> None:
    entries = catalog.instance_types(cloud)
    for family, model in families.items():
        found = [e for e in entries if e.family == family]
        assert found, family
        assert all(catalog.matches_model(e.gpu_model, model) for e in found), family


@pytest.mark.parametrize("cloud", catalog.CLOUDS)
def test_every_entry_is_well_formed(cloud: str) -> None:
    entries = catalog.instance_types(cloud)
    assert entries
    assert len({e.instance_type for e in entries}) == len(entries)
    for e in entries:
        assert e.cloud == cloud
        assert e.gpu_count >= 1 and e.gpu_memory_gb >= 8 and e.vcpu >= 1 and e.ram_gb >= 1
        assert e.price.source.startswith("https://") and e.price.date
        if e.price.usd_per_hour is None:
            assert e.price.note, e.instance_type
        else:
            assert 0 < e.price.usd_per_hour < 200


def test_unknown_price_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="note"):
        catalog.Price(per_hour=None, region="x", source="https://x", date="2026-01")


def test_pick_cheapest_fitting_type() -> None:
    picked = catalog.pick("aws", "A10G", 1)
    assert picked is not None and picked.instance_type == "g5.xlarge"
    picked = catalog.pick("aws", "a100", 8)  # family name matches both memory sizes
    assert picked is not None and picked.instance_type == "p4d.24xlarge"
    picked = catalog.pick("aws", "A100-80GB", 8)
    assert picked is not None and picked.instance_type == "p4de.24xlarge"
    assert catalog.pick("aws", "H100", 2) is None
    assert catalog.pick("aws", "MI300X", 8) is None


def test_pick_prefers_known_prices() -> None:
    unpriced = [e for e in catalog.instance_types("alicloud") if e.price.usd_per_hour is None]
    if unpriced:
        entry = unpriced[0]
        assert catalog.pick("alicloud", entry.gpu_model, entry.gpu_count) is not None


def test_model_matching() -> None:
    assert catalog.matches_model("A100-80GB", "A100")
    assert catalog.matches_model("A100-80GB", "a100-80gb")
    assert not catalog.matches_model("A100-40GB", "A100-80GB")
    assert not catalog.matches_model("A10G", "A10")


def test_every_fee_and_spot_factor_has_a_source_and_a_date() -> None:
    """Issue #21: every price the estimate uses says where it comes from and when it was read;
    one without a figure says why."""
    import datetime as dt

    from components.catalog import fees, spot

    found = [v for v in vars(fees).values() if isinstance(v, (fees.Fee, fees.UsageFee))]
    found += list(fees.AWS_CPU_INSTANCES.values()) + list(spot.SPOT_FACTORS.values())
    assert len(found) > 20
    for price in found:
        assert price.source.strip() and dt.date.fromisoformat(price.date), price
        if isinstance(price, fees.Fee) and price.usd_per_hour is None:
            assert price.note.strip(), price
