"""Tencent Cloud: on-demand and current spot prices from CVM `InquiryPriceRunInstances`,
through the official SDK (`tencentcloud-sdk-python-cvm`).

- InquiryPriceRunInstances (https://www.tencentcloud.com/document/api/213/15726): the price
  of launching one instance as configured. `InstanceChargeType=POSTPAID_BY_HOUR`: the
  answer's `Price.InstancePrice.UnitPrice` is the pay-as-you-go price per hour;
  `InstanceChargeType=SPOTPAID` (with `InstanceMarketOptions.MarketType=spot`): its
  `UnitPriceDiscount` is the current spot price per hour in that zone (the `ItemPrice` data
  type: https://www.tencentcloud.com/document/api/213/15753#ItemPrice). The API needs a
  zone and an image: the stack's zones (`tkeZones`) or every available zone
  (`DescribeZones`), and a public Ubuntu image (`DescribeImages`; public images are free, so
  the image does not change the price). Tencent's spot price API is this inquiry with
  `SPOTPAID`: CVM has no spot price history call.
- Tiered pay-as-you-go: where the answer also has `UnitPriceSecondStep`/`UnitPriceThirdStep`,
  `UnitPrice` is the price of an instance's first 96 hours and the steps those of hours 96-360
  and 360 on (the `ItemPrice` field docs in tencentcloud-sdk-python-cvm 3.1.178,
  tencentcloud/cvm/v20170312/models.py:15197, class ItemPrice). The file keeps `UnitPrice` (what a
  GPU node that scales to zero within four days pays) and says the steps in its notes.
- The answer does not name its currency: it is the account's (CNY on the China site, USD on
  the international one); `--currency` says which, else the region's usual one is assumed.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..currency import billing_currency
from .refresh import NoCredentialsError, RefreshFailedError, Request, Result, iso

SOURCE = "Tencent Cloud CVM InquiryPriceRunInstances (POSTPAID_BY_HOUR and SPOTPAID)"
_CALLER_ERRORS = (
    "AuthFailure",
    "UnauthorizedOperation",
    "ClientNetworkError",
    "ServerNetworkError",
    "RequestLimitExceeded",
    "InvalidRegion",
    "UnsupportedRegion",
)


@dataclass(frozen=True)
class Keys:
    secret_id: str
    secret_key: str
    token: str | None
    found_in: str


def credentials() -> Keys:
    """A SecretId/SecretKey from the environment (as the SDK and the Terraform provider read
    them) or the profile file `~/.tencentcloud/credentials` ([default]). Nothing is called:
    no instance-role lookup happens behind the user's back."""
    secret_id, secret_key = (
        os.environ.get("TENCENTCLOUD_SECRET_ID"),
        os.environ.get("TENCENTCLOUD_SECRET_KEY"),
    )
    if secret_id and secret_key:
        token = os.environ.get("TENCENTCLOUD_SECURITY_TOKEN") or os.environ.get(
            "TENCENTCLOUD_SESSION_TOKEN"
        )
        return Keys(secret_id, secret_key, token or None, "TENCENTCLOUD_SECRET_ID")
    profile = Path.home() / ".tencentcloud" / "credentials"
    parser = configparser.ConfigParser()
    with contextlib.suppress(OSError, configparser.Error):
        parser.read(profile, encoding="utf-8")
    if parser.has_section("default"):
        found = parser["default"]
        if found.get("secret_id") and found.get("secret_key"):
            return Keys(found["secret_id"], found["secret_key"], found.get("token"), str(profile))
    raise NoCredentialsError(
        "no Tencent Cloud credentials: set TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY, "
        "or write them to ~/.tencentcloud/credentials ([default] secret_id, secret_key)"
    )


def _client(request: Request, keys: Keys) -> Any:
    from tencentcloud.common import credential
    from tencentcloud.common.profile.client_profile import ClientProfile
    from tencentcloud.common.profile.http_profile import HttpProfile
    from tencentcloud.cvm.v20170312 import cvm_client

    endpoint = request.endpoints.get("cvm")
    http = HttpProfile(reqTimeout=30)
    if endpoint:
        http.scheme, _, http.endpoint = endpoint.partition("://")
        http.protocol = http.scheme
    cred = credential.Credential(keys.secret_id, keys.secret_key, keys.token)
    return cvm_client.CvmClient(cred, request.region, ClientProfile(httpProfile=http))


def _tiers(instance_type: str, price: Any, currency: str) -> str:
    """What the step prices say, when the answer has them (tiered pay-as-you-go)."""
    from ..currency import money

    steps = [
        (hours, getattr(price, field, None))
        for hours, field in (("96-360", "UnitPriceSecondStep"), ("360 on", "UnitPriceThirdStep"))
    ]
    listed = [f"{money(float(v), currency)}/h for hours {h}" for h, v in steps if v is not None]
    if not listed:
        return ""
    return (
        f"{instance_type}: tiered pay-as-you-go: the on-demand price "
        f"{money(float(price.UnitPrice), currency)}/h is that of an instance's first 96 hours; "
        f"then {', '.join(listed)}"
    )


def refresh(request: Request, keys: Keys) -> Result:
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import (
        TencentCloudSDKException,
    )
    from tencentcloud.cvm.v20170312 import models

    client = _client(request, keys)
    currency = request.currency or billing_currency("tencentcloud", request.region)
    result = Result(currency=currency, source=SOURCE)
    if not request.currency:
        result.notes.append(
            f"InquiryPriceRunInstances does not name its currency: {currency} assumed (the "
            "usual one for this region); `gpuinfra prices --currency` sets the account's"
        )

    def call(action: str, params: dict[str, Any]) -> Any:
        body = getattr(models, f"{action}Request")()
        body.from_json_string(json.dumps(params))
        try:
            return getattr(client, action)(body)
        except TencentCloudSDKException as error:
            if str(error.code or "").startswith(_CALLER_ERRORS):
                raise RefreshFailedError(
                    f"Tencent Cloud refused the request: {error.code}: {error.message}"
                ) from error
            raise

    zones = list(request.zones)
    if not zones:
        answer = call("DescribeZones", {})
        zones = [z.Zone for z in answer.ZoneSet or [] if z.ZoneState == "AVAILABLE"]
    images = call(
        "DescribeImages",
        {
            "Filters": [
                {"Name": "image-type", "Values": ["PUBLIC_IMAGE"]},
                {"Name": "platform", "Values": ["Ubuntu"]},
            ],
            "Limit": 1,
        },
    )
    if not images.ImageSet:
        raise RefreshFailedError(
            "Tencent Cloud lists no public Ubuntu image to price instances with"
        )
    image = images.ImageSet[0].ImageId

    def inquire(instance_type: str, zone: str, spot: float | None = None) -> Any:
        """The price of one instance in `zone`: pay-as-you-go, or spot when `spot` is the
        bid ceiling (the on-demand price: Tencent's spot price never exceeds it)."""
        params: dict[str, Any] = {
            "Placement": {"Zone": zone},
            "ImageId": image,
            "InstanceType": instance_type,
            "InstanceChargeType": "POSTPAID_BY_HOUR" if spot is None else "SPOTPAID",
            "InstanceCount": 1,
        }
        if spot is not None:
            params["InstanceMarketOptions"] = {
                "MarketType": "spot",
                "SpotOptions": {"SpotInstanceType": "one-time", "MaxPrice": f"{spot:g}"},
            }
        return call("InquiryPriceRunInstances", params).Price.InstancePrice

    for instance_type in request.instance_types:
        refusals = []
        for zone in zones:
            try:
                price = inquire(instance_type, zone)
            except TencentCloudSDKException as error:
                refusals.append(f"{zone}: {error.code}: {error.message}")
                continue
            if price.UnitPrice is not None:
                result.on_demand[instance_type] = float(price.UnitPrice)
                if note := _tiers(instance_type, price, currency):
                    result.notes.append(note)
                break
        else:
            result.unavailable[instance_type] = "; ".join(refusals) or "no zone to ask in"
            continue
        for zone in zones:
            try:
                spot = inquire(instance_type, zone, result.on_demand[instance_type])
            except TencentCloudSDKException:
                continue  # not sold as spot in this zone
            if spot.UnitPriceDiscount is not None:
                result.add_spot(
                    instance_type, zone, float(spot.UnitPriceDiscount), iso(request.now)
                )
    return result
