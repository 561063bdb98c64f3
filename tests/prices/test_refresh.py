"""Each cloud's refresh, through its real SDK client, against canned answers in the API's
documented shape (tests/prices/recorded/) served on 127.0.0.1; AWS's EC2 spot history from
moto. What is asserted: which API and parameters are asked, which field of the answer becomes
the price, the newest spot price per zone, a refused instance type recorded with the API's
words, and a refused caller stopping the refresh."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from gpuinfra.prices import alicloud, aws, tencentcloud, volcengine
from gpuinfra.prices.refresh import NoCredentialsError, RefreshFailedError, Request

from .conftest import recorded

NOW = dt.datetime(2026, 11, 30, 12, 30, tzinfo=dt.timezone.utc)


def _query(path: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(path).query).items()}


# --- Alibaba Cloud --------------------------------------------------------------------------


def _ali_answer(not_sold: set[str] = frozenset(), refuse: bool = False) -> Callable[..., Any]:
    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        if refuse:
            return 404, recorded("alicloud-InvalidAccessKeyId")
        action, query = headers.get("x-acs-action"), _query(path)
        if action == "DescribePrice":
            if query["InstanceType"] in not_sold:
                return 400, recorded("alicloud-DescribePrice-not-sold")
            return 200, recorded("alicloud-DescribePrice")
        assert action == "DescribeSpotPriceHistory", action
        return 200, recorded("alicloud-DescribeSpotPriceHistory")

    return answer


def test_alicloud_reads_the_instance_alone_and_the_newest_spot_price_per_zone(serve) -> None:
    server = serve(_ali_answer(not_sold={"ecs.gn8is.2xlarge"}))
    request = Request(
        "cn-hangzhou",
        (),
        ("ecs.gn7i-c8g1.2xlarge", "ecs.gn8is.2xlarge"),
        NOW,
        endpoints={"ecs": server.url},
    )
    result = alicloud.refresh(request, alicloud.Keys("id", "secret", None, "test"))
    # DetailInfo "instanceType" (10.5), not the total with the system disk (10.75).
    assert result.on_demand == {"ecs.gn7i-c8g1.2xlarge": 10.5}
    assert result.currency == "CNY"  # as the answer says
    zones = result.spot["ecs.gn7i-c8g1.2xlarge"]
    assert {z: q.per_hour for z, q in zones.items()} == {"cn-hangzhou-i": 2.1, "cn-hangzhou-j": 2.6}
    assert zones["cn-hangzhou-i"].at == "2026-11-30T12:00:00Z"  # the newer of two entries
    assert result.unavailable["ecs.gn8is.2xlarge"].startswith(
        "InvalidInstanceType.ValueNotSupported"
    )
    asked = [(h.get("x-acs-action"), _query(p)) for _, p, h, _ in server.seen]
    price = next(q for a, q in asked if a == "DescribePrice")
    assert (price["PriceUnit"], price["ResourceType"], price["RegionId"]) == (
        "Hour",
        "instance",
        "cn-hangzhou",
    )
    spot = next(q for a, q in asked if a == "DescribeSpotPriceHistory")
    assert (spot["NetworkType"], spot["OSType"]) == ("vpc", "linux")
    assert spot["StartTime"] == "2026-11-30T09:30:00Z"  # three hours back


def test_alicloud_refused_caller_stops_the_refresh(serve) -> None:
    server = serve(_ali_answer(refuse=True))
    request = Request(
        "cn-hangzhou", (), ("ecs.gn7i-c8g1.2xlarge",), NOW, endpoints={"ecs": server.url}
    )
    with pytest.raises(RefreshFailedError, match=r"InvalidAccessKeyId\.NotFound"):
        alicloud.refresh(request, alicloud.Keys("id", "secret", None, "test"))


def test_alicloud_credentials_from_the_environment_or_the_cli_profile(
    monkeypatch: pytest.MonkeyPatch, no_credentials
) -> None:
    with pytest.raises(NoCredentialsError, match="ALIBABA_CLOUD_ACCESS_KEY_ID"):
        alicloud.credentials()
    config = no_credentials / ".aliyun" / "config.json"
    config.parent.mkdir()
    config.write_text(
        '{"current": "p", "profiles": [{"name": "p", "mode": "AK", '
        '"access_key_id": "from-cli", "access_key_secret": "s"}]}'
    )
    assert alicloud.credentials().access_key_id == "from-cli"
    monkeypatch.setenv("ALICLOUD_ACCESS_KEY", "from-env")
    monkeypatch.setenv("ALICLOUD_SECRET_KEY", "s")
    assert alicloud.credentials().access_key_id == "from-env"


# --- Tencent Cloud --------------------------------------------------------------------------


def _tencent_answer(
    sold_out_in: set[str] = frozenset(), refuse: bool = False
) -> Callable[..., Any]:
    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        if refuse:
            return 200, recorded("tencentcloud-AuthFailure")
        action = headers.get("x-tc-action")
        if action == "InquiryPriceRunInstances":
            if body["Placement"]["Zone"] in sold_out_in:
                return 200, recorded("tencentcloud-InquiryPriceRunInstances-sold-out")
            kind = "spot" if body["InstanceChargeType"] == "SPOTPAID" else "postpaid"
            return 200, recorded(f"tencentcloud-InquiryPriceRunInstances-{kind}")
        return 200, recorded(f"tencentcloud-{action}")

    return answer


def test_tencent_asks_postpaid_then_spot_in_every_available_zone(serve) -> None:
    server = serve(_tencent_answer(sold_out_in={"ap-guangzhou-3"}))
    request = Request("ap-guangzhou", (), ("GN7.2XLARGE32",), NOW, endpoints={"cvm": server.url})
    result = tencentcloud.refresh(request, tencentcloud.Keys("id", "key", None, "test"))
    assert result.on_demand == {"GN7.2XLARGE32": 8.2}  # UnitPrice, from the zone that sells it
    # UnitPriceDiscount of the SPOTPAID inquiry; only in the zone that sells the type.
    assert {z: q.per_hour for z, q in result.spot["GN7.2XLARGE32"].items()} == {
        "ap-guangzhou-6": 1.64
    }
    assert result.currency == "CNY" and "does not name its currency" in result.notes[0]
    bodies = [b for _, _, h, b in server.seen if h.get("x-tc-action") == "InquiryPriceRunInstances"]
    zones = [b["Placement"]["Zone"] for b in bodies]
    assert "ap-guangzhou-1" not in zones  # UNAVAILABLE in DescribeZones
    spot = [b for b in bodies if b["InstanceChargeType"] == "SPOTPAID"]
    assert spot and all(b["InstanceMarketOptions"]["MarketType"] == "spot" for b in spot)
    assert {b["InstanceMarketOptions"]["SpotOptions"]["MaxPrice"] for b in spot} == {"8.2"}
    assert {b["ImageId"] for b in bodies} == {"img-00000000"}  # from DescribeImages


def test_tencent_stack_zones_and_currency_are_used(serve) -> None:
    server = serve(_tencent_answer())
    request = Request(
        "ap-guangzhou", ("ap-guangzhou-6",), ("GN7.2XLARGE32",), NOW, currency="USD",
        endpoints={"cvm": server.url},
    )  # fmt: skip
    result = tencentcloud.refresh(request, tencentcloud.Keys("id", "key", None, "test"))
    assert result.currency == "USD" and not result.notes
    assert "DescribeZones" not in {h.get("x-tc-action") for _, _, h, _ in server.seen}
    assert set(result.spot["GN7.2XLARGE32"]) == {"ap-guangzhou-6"}


def test_tencent_refused_caller_stops_the_refresh(serve) -> None:
    server = serve(_tencent_answer(refuse=True))
    request = Request("ap-guangzhou", (), ("GN7.2XLARGE32",), NOW, endpoints={"cvm": server.url})
    with pytest.raises(RefreshFailedError, match=r"AuthFailure\.SecretIdNotFound"):
        tencentcloud.refresh(request, tencentcloud.Keys("id", "key", None, "test"))


# --- Volcano Engine -------------------------------------------------------------------------


def test_volcengine_reads_spot_and_says_why_not_on_demand(serve) -> None:
    server = serve(lambda m, p, h, b: (200, recorded("volcengine-DescribeSpotPriceHistory")))
    request = Request(
        "cn-beijing", ("cn-beijing-a",), ("ecs.gni2.3xlarge",), NOW, endpoints={"ecs": server.url}
    )
    result = volcengine.refresh(request, volcengine.Keys("ak", "sk", None, "test"))
    assert result.on_demand == {}
    assert result.unavailable["ecs.gni2.3xlarge"] == volcengine.ON_DEMAND_NOT_READ
    quote = result.spot["ecs.gni2.3xlarge"]["cn-beijing-a"]
    assert (quote.per_hour, quote.at) == (1.4, "2026-11-30T12:00:00Z")  # the newer entry
    query = _query(server.seen[0][1])
    assert (query["Action"], query["InstanceTypeId"], query["ZoneId"]) == (
        "DescribeSpotPriceHistory",
        "ecs.gni2.3xlarge",
        "cn-beijing-a",
    )


def test_volcengine_refused_caller_stops_the_refresh(serve) -> None:
    server = serve(lambda m, p, h, b: (401, recorded("volcengine-AccessDenied")))
    request = Request("cn-beijing", (), ("ecs.gni2.3xlarge",), NOW, endpoints={"ecs": server.url})
    with pytest.raises(RefreshFailedError, match="InvalidAccessKey"):
        volcengine.refresh(request, volcengine.Keys("ak", "sk", None, "test"))


# --- AWS --------------------------------------------------------------------------------------


def test_aws_get_products_and_spot_history(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import mock_aws

    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        assert headers["x-amz-target"] == "AWSPriceListService.GetProducts"
        kind = "GetProducts" if body["Filters"][0]["Value"] == "g5.xlarge" else "GetProducts-empty"
        return 200, recorded(f"aws-{kind}")

    server = serve(answer)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():  # EC2 DescribeSpotPriceHistory (moto answers every AZ of the region)
        session = aws.credentials("us-east-1")
        request = Request(
            "us-east-1", ("us-east-1a", "us-east-1b"), ("g5.xlarge", "g4dn.xlarge"), NOW,
            endpoints={"pricing": server.url},
        )  # fmt: skip
        result = aws.refresh(request, session)
    assert result.on_demand == {"g5.xlarge": 1.1}
    assert "no Linux on-demand price in us-east-1" in result.unavailable["g4dn.xlarge"]
    assert set(result.spot["g5.xlarge"]) == {"us-east-1a", "us-east-1b"}  # the stack's zones
    filters = {f["Field"]: f["Value"] for f in server.seen[0][3]["Filters"]}
    assert filters == {
        "instanceType": "g5.xlarge",
        "regionCode": "us-east-1",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
    }


def test_aws_without_credentials_says_so() -> None:
    with pytest.raises(NoCredentialsError, match="no AWS credentials"):
        aws.credentials("us-east-1")


def test_tencent_tiered_price_keeps_the_first_tier_and_says_the_steps(serve) -> None:
    """`UnitPrice` is the first 96 hours' price where the answer lists step prices (ItemPrice
    field docs, tencentcloud-sdk-python-cvm 3.1.178 cvm/v20170312/models.py)."""

    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        reply = _tencent_answer()(method, path, headers, body)
        if headers.get("x-tc-action") == "InquiryPriceRunInstances":
            price = reply[1]["Response"]["Price"]["InstancePrice"]
            if body["InstanceChargeType"] == "POSTPAID_BY_HOUR":
                price.update(UnitPriceSecondStep=4.1, UnitPriceThirdStep=2.79)
        return reply

    server = serve(answer)
    request = Request(
        "ap-guangzhou", ("ap-guangzhou-6",), ("GN7.2XLARGE32",), NOW, currency="CNY",
        endpoints={"cvm": server.url},
    )  # fmt: skip
    result = tencentcloud.refresh(request, tencentcloud.Keys("id", "key", None, "test"))
    assert result.on_demand == {"GN7.2XLARGE32": 8.2}
    assert result.notes == [
        "GN7.2XLARGE32: tiered pay-as-you-go: the on-demand price ¥8.20/h is that of an "
        "instance's first 96 hours; then ¥4.10/h for hours 96-360, ¥2.79/h for hours 360 on"
    ]
