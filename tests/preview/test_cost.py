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
from tests.conftest import build, flat_pool

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


# --- refreshed prices and currencies (issue #21) --------------------------------------------


def _refreshed(
    folder,
    cloud: str,
    region: str,
    currency: str,
    refreshed: str = "2026-11-30T12:00:00Z",
    **prices,
):
    """A price file as `gpuinfra prices` writes it: on_demand={type: price},
    spot={type: {zone: price}}."""
    from gpuinfra.prices import file as price_file

    spot = {
        t: {z: price_file.SpotQuote(p, z, "2026-11-30T11:00:00Z") for z, p in zones.items()}
        for t, zones in prices.get("spot", {}).items()
    }
    data = price_file.PriceFile(
        cloud,
        region,
        currency,
        refreshed,
        f"{cloud} price API (test)",
        prices.get("on_demand", {}),
        spot,
    )
    price_file.write(data, price_file.path_for(cloud, region, folder))
    price_file.set_folder(folder)


def test_spot_pool_uses_the_refreshed_spot_price_of_the_stacks_zones(tmp_path) -> None:
    """Issue #21: the spot estimate uses real spot prices when a refreshed file has them (the
    highest of the stack's zones: the pool may land in any), else the per-cloud factor."""
    plan = build("tencentcloud-dev", {"tkeZones": ["ap-guangzhou-3", "ap-guangzhou-6"]})
    before = line(
        estimate(from_plan(plan, "tencentcloud"), TODAY),
        "Kubernetes/nodePool:NodePool",
        "-small-pool",
    )
    assert before.monthly is None  # no citable static price: unknown, not guessed
    _refreshed(
        tmp_path, "tencentcloud", "ap-guangzhou", "CNY",
        on_demand={"GN7.2XLARGE32": 8.2},
        spot={"GN7.2XLARGE32": {"ap-guangzhou-3": 1.5, "ap-guangzhou-6": 1.9, "ap-guangzhou-7": 5.0}},
    )  # fmt: skip
    report = estimate(from_plan(plan, "tencentcloud"), TODAY)
    gpu = line(report, "Kubernetes/nodePool:NodePool", "-small-pool")
    assert (
        gpu.currency == "CNY" and gpu.node_per_hour == 1.9
    )  # not 5.0: that zone is not the stack's
    assert gpu.monthly == pytest.approx(100 * 1.9) and gpu.price_date == "2026-11-30"
    assert "spot = current spot price ¥1.90/h in ap-guangzhou-6" in gpu.note
    assert gpu.source.startswith(
        "tencentcloud price API (test) (ap-guangzhou, refreshed 2026-11-30T12:00:00Z)"
    )
    assert report.currency == "CNY" and report.totals["monthly"] == pytest.approx(100 * 1.9)
    text = text_summary(report, [])
    assert "Node price: gpuinfra-tencentcloud-dev-small-pool: ¥1.90/h per node" in text
    assert "; 2026-11-30" in text and "at least ¥190.00 (" in text
    # An explicit costSpotFactor still wins: the user said so.
    override = build("tencentcloud-dev", {"costSpotFactor": "0.5"})
    gpu = line(
        estimate(from_plan(override, "tencentcloud"), TODAY),
        "Kubernetes/nodePool:NodePool",
        "-small-pool",
    )
    assert gpu.node_per_hour == pytest.approx(8.2 * 0.5) and "spot = on-demand x 0.5" in gpu.note


def test_an_old_price_file_says_how_old(tmp_path) -> None:
    _refreshed(tmp_path, "alicloud", "cn-hangzhou", "CNY", refreshed="2026-09-01T00:00:00Z",
               spot={"ecs.gn7i-c8g1.2xlarge": {"cn-hangzhou-i": 2.0}})  # fmt: skip
    report = estimate(from_plan(build("alicloud-dev"), "alicloud"), TODAY)
    gpu = line(report, "cs/nodePool:NodePool", "-small-pool")
    assert gpu.node_per_hour == 2.0
    assert "refreshed 90 days ago (2026-09-01): spot prices move hourly" in gpu.note


def test_currencies_are_never_added(tmp_path) -> None:
    """A CNY pool price beside the USD ACK fee: two totals side by side, never one sum; an
    all-unpriced figure reads unknown, not $0."""
    _refreshed(
        tmp_path, "alicloud", "cn-hangzhou", "CNY", on_demand={"ecs.gn7i-c8g1.2xlarge": 10.0}
    )
    report = estimate(
        from_plan(
            build(
                "alicloud-dev",
                flat_pool(
                    "alicloud-dev",
                    {
                        "gpuPoolCapacityType": "onDemand",
                        "gpuPoolMinNodes": 1,
                        "gpuPoolDesiredNodes": 1,
                    },
                ),
            ),
            "alicloud",
        ),
        TODAY,
    )
    assert report.totals_by_currency["CNY"]["hourly_idle"] == pytest.approx(10.0)
    assert report.totals_by_currency["USD"]["hourly_idle"] == pytest.approx(0.09)
    assert report.totals["hourly_idle"] == pytest.approx(10.0)  # the stack's currency alone
    row = next(x for x in text_summary(report, []).splitlines() if x.startswith("total"))
    assert "at least ¥10.00 + $0.090 (" in row and "10.09" not in row
    assert total(0.0, 3) == "unknown (3 unpriced)" and "$0.00" not in total(0.0, 3)


def test_delta_never_subtracts_across_currencies() -> None:
    from gpuinfra.cost import delta

    def doc(currency: str, amount: float) -> dict:
        return {"currency": "CNY", "lines": [{"resource": "pool", "type": "t", "item": "pool", "what": "GPU pool",
                 "hourly_desired": amount, "hourly_max": amount, "hourly_idle": amount, "monthly": amount, "currency": currency}]}  # fmt: skip

    same = delta(doc("CNY", 10.0), doc("CNY", 12.0))["monthly"]
    assert same.exact == pytest.approx(2.0)
    moved = delta(doc("USD", 10.0), doc("CNY", 12.0))["monthly"]
    assert moved.exact is None and "priced in CNY and USD" in moved.unknown[0]


def test_a_fee_in_another_currency_than_the_stack_says_so() -> None:
    """The ACK fee is a USD list price; a cn-hangzhou stack is taken to bill in CNY: the line
    and the footnote say the figure is not converted and its CNY price is not confirmed."""
    report = estimate(from_plan(build("alicloud-dev"), "alicloud"), TODAY)
    assert report.currency == "CNY"
    fee = line(report, "cs/managedKubernetes:ManagedKubernetes")
    assert fee.currency == "USD" and fee.hourly_idle == pytest.approx(0.09)
    assert (
        "quoted in USD, not converted" in fee.note
        and "CNY price of this is not confirmed" in fee.note
    )
    text = text_summary(report, [])
    assert (
        "Estimate, USD (USD figures not converted; the stack's billing currency is taken to be CNY"
        in text
    )
    # A USD stack's USD fee says nothing of the kind.
    aws = estimate(from_plan(build("dev"), "aws"), TODAY)
    assert not any("not converted" in x.note for x in aws.lines)


def test_a_stack_with_nothing_billed_does_not_read_as_free() -> None:
    """A GPU layer on an existing cluster creates no billed resource: its total says so instead
    of "$0.00", and where its nodes are billed."""
    report = estimate(from_plan(build("k8s-dev"), "kubernetes"), TODAY)
    assert report.lines == []
    text = text_summary(report, [])
    row = next(x for x in text.splitlines() if x.startswith("total"))
    assert "$0.00" not in row and row.count("nothing billed here") == 4
    assert "Nothing this stack creates is billed by itself" in text
