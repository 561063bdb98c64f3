# ruff: noqa: E501  (literal plans and expected strings read best on one line)
"""Cost estimate: figures from the catalog and the fee table, unknown stays unknown."""

from __future__ import annotations

import datetime as dt

import pytest

from components import catalog
from components.catalog import fees
from gpuinfra.cost import eks_control_plane_fee, estimate, not_billed
from gpuinfra.planview import Resource, from_plan, view
from gpuinfra.report import text_summary, total
from tests.conftest import build

TODAY = dt.date(2026, 11, 30)


def line(report, type_suffix: str, name_part: str = "", item: str | None = None):
    [found] = [
        x
        for x in report.lines
        if x.type.endswith(type_suffix)
        and name_part in x.resource
        and (item is None or x.item == item)
    ]
    return found


def test_dev_gpu_pool_spot_idle_desired_max() -> None:
    report = estimate(from_plan(build("dev"), "aws"), TODAY)
    gpu = line(report, "NodeGroup", "-small-nodes")  # dev's first GPU pool
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
    gpu = line(report, "NodeGroup", "-small-nodes")  # the GPU hours go to the first pool
    assert gpu.monthly == pytest.approx(300 * (1.006 + 200 * 0.08 / 730))
    assert line(report, "NodeGroup", "-large-nodes").monthly == 0  # at zero, no GPU hours
    assert line(report, "s3/bucket:Bucket", item="storage").monthly == 0


def test_prod_idle_and_max() -> None:
    report = estimate(from_plan(build("prod"), "aws"), TODAY)
    gpu = line(report, "NodeGroup", "-gpu-nodes")
    assert "p4de.24xlarge" in gpu.what and "on-demand" in gpu.what
    assert gpu.hourly_idle == 0 and gpu.hourly_max == pytest.approx(4 * (27.45 + 500 * 0.08 / 730))
    nat = [x for x in report.lines if x.type.endswith("NatGateway")]
    assert [x.item for x in nat].count("NAT gateway") == 3
    assert [x.item for x in nat].count("NAT data processing") == 3
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
    # The two unknown lines are not $0: the total is a lower bound and says so.
    assert report.totals["monthly"] == pytest.approx(0.09 * 730)
    assert report.unpriced["monthly"] == 2
    assert (
        total(report.totals["monthly"], report.unpriced["monthly"])
        == "at least $65.70 (2 unpriced)"
    )


def test_json_says_estimate_and_price_dates() -> None:
    doc = estimate(from_plan(build("dev"), "aws"), TODAY).to_json()
    assert doc["estimate"] is True and "not a quote" in doc["disclaimer"]
    assert doc["priceDates"] and all(line["price_date"] for line in doc["lines"])


def test_tencent_total_is_unknown_not_zero() -> None:
    """Issue #25: the Tencent total printed $0.00 although nothing on it had a price."""
    report = estimate(from_plan(build("tencentcloud-dev"), "tencentcloud"), TODAY)
    assert report.totals["monthly"] == 0 and report.unpriced["monthly"] >= 5
    text = text_summary(report, [])
    [row] = [r for r in text.splitlines() if r.startswith("total")]
    assert "$0.00" not in row and "unknown (" in row


def test_eks_version_past_extended_support_is_not_priced() -> None:
    fee, why = eks_control_plane_fee("1.30", TODAY)  # standard ended 2025-07-23, +12 months
    assert fee.usd_per_hour is None and "past EKS extended support" in why
    assert eks_control_plane_fee("1.31", dt.date(2026, 11, 25))[0].usd_per_hour == 0.60


def test_usage_based_charges_are_listed_with_their_rates() -> None:
    report = estimate(from_plan(build("prod"), "aws"), TODAY)
    logs = line(report, "logGroup:LogGroup")
    assert logs.monthly is None and "$0.50 per GB ingested" in logs.note
    assert "5 log types, kept 365 days" in logs.what  # prod: every control-plane log type
    nat = [x for x in report.lines if x.item == "NAT data processing"]
    assert len(nat) == 3 and all("$0.045 per GB" in x.note and x.monthly is None for x in nat)
    requests = line(report, "s3/bucket:Bucket", item="bucket requests")
    assert requests.monthly is None and "per 1,000 PUT" in requests.note


WORKSTATION = {
    "workstationEnabled": True,
    "workstationSshPublicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG1ypl1Xx3ZBKmM6qkvHoe1YBmQ8mHfDsvDmOiSx6pjK a@b",
}


def test_workstation_root_volume_is_priced() -> None:
    plan = build("dev", {**WORKSTATION, "workstationRootDiskGb": 300})
    report = estimate(from_plan(plan, "aws"), TODAY)
    root = line(report, "ec2/instance:Instance", item="root volume")
    assert root.monthly == pytest.approx(300 * 0.08)
    assert "300 GB gp3" in root.what


@pytest.mark.parametrize(
    "stack, cloud",
    [("dev", "aws"), ("prod", "aws"), ("alicloud-dev", "alicloud"), ("tencentcloud-dev", "tencentcloud"), ("k8s-dev", "kubernetes"), ("volcengine-dev", "volcengine")],
)  # fmt: skip
def test_every_resource_type_is_priced_or_listed(stack: str, cloud: str) -> None:
    """Nothing a stack creates drops out silently: each resource is priced, listed as unpriced,
    or known to cost nothing by itself (`NOT_BILLED`, with why)."""
    overrides = dict(WORKSTATION) if cloud not in ("kubernetes", "volcengine") else {}
    plan = build(stack, {**overrides, "monitoringKubePrometheusStack": True})
    v = from_plan(plan, cloud)
    report = estimate(v, TODAY)
    priced = {(x.resource, x.type) for x in report.lines}
    for r in v.resources:
        assert (r.name, r.type) in priced or not_billed(r), f"{r.type} {r.name} dropped"
    assert not [x for x in report.lines if x.what == "not priced"], "types not in the model"


def test_alibaba_eip_is_an_unpriced_line_not_dropped() -> None:
    """Issue #25: an Alibaba `ecs:EipAddress` was silently dropped, not even "unknown"."""
    eip = Resource(urn="e", type="alicloud:ecs/eipAddress:EipAddress", name="nat-eip", inputs={})
    report = estimate(view([eip], cloud="alicloud"), TODAY)
    [found] = report.lines
    assert found.monthly is None and "calculator" in found.note
    assert report.unpriced["monthly"] == 1
