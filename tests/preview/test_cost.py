"""Cost estimate: figures from the catalog and the fee table, unknown stays unknown."""

from __future__ import annotations

import datetime as dt

import pytest

from components import catalog
from components.catalog import fees
from gpuinfra.cost import eks_control_plane_fee, estimate
from gpuinfra.planview import Resource, from_plan, view
from tests.conftest import build

TODAY = dt.date(2026, 11, 30)


def line(report, type_suffix: str, name_part: str = ""):
    [found] = [x for x in report.lines if x.type.endswith(type_suffix) and name_part in x.resource]
    return found


def test_dev_gpu_pool_spot_idle_desired_max() -> None:
    report = estimate(from_plan(build("dev"), "aws"), TODAY)
    gpu = line(report, "NodeGroup", "-gpu-nodes")
    g5 = catalog.find("aws", "g5.xlarge")
    assert g5 is not None and g5.price.usd_per_hour is not None
    node = g5.price.usd_per_hour * 0.4 + 200 * fees.AWS_EBS_GP3.usd_per_hour  # type: ignore[operator]
    assert gpu.hourly_idle == 0 and gpu.hourly_desired == 0  # dev: 0/0/2
    assert gpu.hourly_max == pytest.approx(2 * node)
    assert gpu.monthly == pytest.approx(100 * node)  # 100 GPU hours on 1-GPU nodes
    assert gpu.price_date == g5.price.date


def test_settings_change_the_estimate() -> None:
    plan = build("dev", {"costGpuHoursPerMonth": 300, "costSpotFactor": "1", "costStorageGb": 0})
    report = estimate(from_plan(plan, "aws"), TODAY)
    gpu = line(report, "NodeGroup", "-gpu-nodes")
    assert gpu.monthly == pytest.approx(300 * (1.006 + 200 * 0.08 / 730))
    assert line(report, "s3/bucket:Bucket").monthly == 0


def test_prod_idle_and_max() -> None:
    report = estimate(from_plan(build("prod"), "aws"), TODAY)
    gpu = line(report, "NodeGroup", "-gpu-nodes")
    assert "p4de.24xlarge" in gpu.what and "on-demand" in gpu.what
    assert gpu.hourly_idle == 0 and gpu.hourly_max == pytest.approx(4 * (27.45 + 500 * 0.08 / 730))
    assert len([x for x in report.lines if x.type.endswith("NatGateway")]) == 3
    assert report.totals["hourly_max"] > report.totals["hourly_idle"]  # type: ignore[operator]


def test_eks_extended_support_pricing_follows_the_calendar() -> None:
    assert eks_control_plane_fee("1.33", dt.date(2026, 7, 1))[0].usd_per_hour == 0.10
    assert eks_control_plane_fee("1.33", dt.date(2026, 8, 1))[0].usd_per_hour == 0.60


def test_unknown_prices_stay_unknown() -> None:
    pool = Resource(
        urn="u", type="alicloud:cs/nodePool:NodePool", name="gpu",
        inputs={"instanceTypes": ["ecs.gn7i-c8g1.2xlarge"], "desiredSize": 1,
                "scalingConfig": {"minSize": 0, "maxSize": 2}},
    )  # fmt: skip
    tke = Resource(urn="t", type="tencentcloud:Kubernetes/cluster:Cluster", name="tke", inputs={})
    ack = Resource(
        urn="a", type="alicloud:cs/managedKubernetes:ManagedKubernetes", name="ack",
        inputs={"clusterSpec": "ack.pro.small"},
    )  # fmt: skip
    report = estimate(view([pool, tke, ack], cloud="alicloud"), TODAY)
    assert line(report, "NodePool").monthly is None
    assert "calculator" in line(report, "NodePool").note
    assert line(report, "Cluster").monthly is None
    assert line(report, "ManagedKubernetes").hourly_max == 0.09
    assert report.unknown == 2


def test_json_says_estimate_and_price_dates() -> None:
    doc = estimate(from_plan(build("dev"), "aws"), TODAY).to_json()
    assert doc["estimate"] is True and "not a quote" in doc["disclaimer"]
    assert doc["priceDates"] and all(line["price_date"] for line in doc["lines"])
