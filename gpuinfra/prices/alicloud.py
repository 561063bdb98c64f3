"""Alibaba Cloud: on-demand prices from ECS `DescribePrice`, current spot prices from ECS
`DescribeSpotPriceHistory`, through the official SDK (`alibabacloud_ecs20140526`).

- DescribePrice (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeprice):
  `ResourceType=instance`, `PriceUnit=Hour` (pay-as-you-go); the answer's
  `PriceInfo.Price.DetailInfos.DetailInfo[]` splits the price by resource, and the item whose
  `Resource` is `instanceType` is the instance alone (no system disk); `Currency` is the
  account's (CNY on the China site, USD on the international site).
- DescribeSpotPriceHistory (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describespotpricehistory):
  `NetworkType=vpc`, `OSType=linux`; `SpotPrices.SpotPriceType[]` with `ZoneId`, `SpotPrice`
  and `Timestamp` over the last hours; the newest per zone is the current price.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..currency import billing_currency
from .refresh import NoCredentialsError, RefreshFailedError, Request, Result, iso

SOURCE = "Alibaba Cloud ECS DescribePrice (on-demand) and DescribeSpotPriceHistory (spot)"
_CALLER_ERRORS = (
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidSecurityToken",
    "IncompleteSignature",
    "Forbidden",
    "NoPermission",
    "UnauthorizedOperation",
    "InvalidRegionId",
    "Throttling",
)


@dataclass(frozen=True)
class Keys:
    access_key_id: str
    access_key_secret: str
    security_token: str | None
    found_in: str


_ENV_PAIRS = (
    (
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        "ALIBABA_CLOUD_SECURITY_TOKEN",
    ),
    ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALICLOUD_SECURITY_TOKEN"),
)


def credentials() -> Keys:
    """An AccessKey from the environment (the SDK's and the Terraform provider's variable
    names) or the aliyun CLI's current profile (`~/.aliyun/config.json`, AK or StsToken mode).
    Nothing is called: no instance-metadata lookup happens behind the user's back."""
    for key_id, secret, token in _ENV_PAIRS:
        if os.environ.get(key_id) and os.environ.get(secret):
            return Keys(os.environ[key_id], os.environ[secret], os.environ.get(token), key_id)
    config = Path.home() / ".aliyun" / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    current = data.get("current") if isinstance(data, dict) else None
    for profile in (data.get("profiles") or []) if isinstance(data, dict) else []:
        if (
            isinstance(profile, dict)
            and profile.get("name") == current
            and profile.get("mode") in ("AK", "StsToken")
            and profile.get("access_key_id")
            and profile.get("access_key_secret")
        ):
            return Keys(
                str(profile["access_key_id"]),
                str(profile["access_key_secret"]),
                profile.get("sts_token") or None,
                f"{config} (profile {current})",
            )
    raise NoCredentialsError(
        "no Alibaba Cloud credentials: set ALIBABA_CLOUD_ACCESS_KEY_ID and "
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET (or ALICLOUD_ACCESS_KEY/ALICLOUD_SECRET_KEY), or "
        "configure the aliyun CLI (~/.aliyun/config.json)"
    )


def _client(request: Request, keys: Keys) -> Any:
    from alibabacloud_ecs20140526.client import Client
    from alibabacloud_tea_openapi.utils_models import Config

    endpoint = request.endpoints.get("ecs")
    config = Config(
        access_key_id=keys.access_key_id,
        access_key_secret=keys.access_key_secret,
        security_token=keys.security_token,
        region_id=request.region,
        read_timeout=30_000,
        connect_timeout=10_000,
    )
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        config.endpoint, config.protocol = host, scheme
    return Client(config)


def _code(error: Exception) -> str:
    return str(getattr(error, "code", "") or "")


def _message(error: Exception) -> str:
    text = str(getattr(error, "message", "") or error)
    return f"{_code(error)}: {text}" if _code(error) else text


def refresh(request: Request, keys: Keys) -> Result:
    from alibabacloud_ecs20140526 import models
    from alibabacloud_tea_openapi.exceptions import AlibabaCloudException

    client = _client(request, keys)
    result = Result(currency="", source=SOURCE)

    def call(method: Any, body: Any) -> Any | None:
        """The answer's body; None when the API refused this one instance type."""
        try:
            return method(body).body
        except AlibabaCloudException as error:
            if _code(error).startswith(_CALLER_ERRORS):
                raise RefreshFailedError(
                    f"Alibaba Cloud refused the request: {_message(error)}"
                ) from error
            key = body.instance_type
            if key in result.on_demand:  # priced; only its spot history was refused
                result.notes.append(f"{key}: no spot price: {_message(error)}")
            else:
                result.unavailable[key] = _message(error)
            return None
        except Exception as error:  # the SDK's transport errors (no network, TLS, timeout)
            raise RefreshFailedError(f"Alibaba Cloud could not be reached: {error}") from error

    for instance_type in request.instance_types:
        answer = call(
            client.describe_price,
            models.DescribePriceRequest(
                region_id=request.region,
                resource_type="instance",
                instance_type=instance_type,
                price_unit="Hour",
                system_disk=models.DescribePriceRequestSystemDisk(category="cloud_essd"),
            ),
        )
        if answer is None:
            continue
        price = answer.price_info.price
        result.currency = result.currency or str(price.currency or "")
        details = price.detail_infos.detail_info if price.detail_infos else []
        own = [d for d in details or [] if d.resource == "instanceType"]
        if own and own[0].original_price is not None:
            result.on_demand[instance_type] = float(own[0].original_price)
        else:
            result.unavailable[instance_type] = (
                "DescribePrice gave no price for the instance alone (DetailInfo instanceType)"
            )
    start = (request.now - dt.timedelta(hours=3)).astimezone(dt.timezone.utc)
    for instance_type in request.instance_types:
        for zone in request.zones or (None,):
            offset = 0
            while True:
                answer = call(
                    client.describe_spot_price_history,
                    models.DescribeSpotPriceHistoryRequest(
                        region_id=request.region,
                        network_type="vpc",
                        instance_type=instance_type,
                        ostype="linux",
                        zone_id=zone,
                        start_time=start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        offset=offset or None,
                    ),
                )
                if answer is None:
                    break
                result.currency = result.currency or str(answer.currency or "")
                entries = answer.spot_prices.spot_price_type if answer.spot_prices else []
                for entry in entries or []:
                    result.add_spot(
                        entry.instance_type or instance_type,
                        entry.zone_id,
                        float(entry.spot_price),
                        iso(entry.timestamp),
                    )
                if not answer.next_offset or not entries:
                    break
                offset = int(answer.next_offset)
    result.currency = (
        result.currency or request.currency or billing_currency("alicloud", request.region)
    )
    return result
