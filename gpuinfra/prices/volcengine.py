"""Volcano Engine: current spot prices from ECS `DescribeSpotPriceHistory`, through the
official SDK (`volcenginesdkecs`, part of volcengine-python-sdk).

- DescribeSpotPriceHistory (the SDK's `DescribeSpotPriceHistoryRequest`: `InstanceTypeId`,
  `ZoneId`, paged by `NextToken`; answer `SpotPrices[]` with `ZoneId`, `SpotPrice`,
  `Timestamp`): the newest entry per zone is the current spot price. No time window is sent
  (the format of `TimestampStart` is not documented in a source at hand): the API's default
  window is used.
- On-demand prices are not read: Volcano Engine's pay-as-you-go price inquiry is the billing
  API `QueryPriceForPayAsYouGo` (`volcenginesdkbilling`), which takes a product code, a
  configuration code and charge-item codes per instance type; no source reachable from this
  project documents those codes for ECS, so the refresh does not guess them, and on-demand
  stays as the catalog has it (unknown), with this said in the file's notes.
- The answer does not name its currency: it is the account's (CNY on volcengine.com, USD on
  BytePlus); `--currency` says which, else the region's usual one is assumed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..currency import billing_currency
from .refresh import NoCredentialsError, RefreshFailedError, Request, Result, iso

SOURCE = "Volcano Engine ECS DescribeSpotPriceHistory (spot)"
ON_DEMAND_NOT_READ = (
    "on-demand not read: Volcano Engine's pay-as-you-go price API (billing "
    "QueryPriceForPayAsYouGo) needs ECS product, configuration and charge-item codes that no "
    "source available to gpuinfra documents"
)
_CALLER_ERRORS = (
    "InvalidAccessKey",
    "SignatureDoesNotMatch",
    "InvalidAuthorization",
    "AccessDenied",
    "Forbidden",
    "InvalidSecretToken",
    "InvalidTimestamp",
    "FlowLimitExceeded",
)


@dataclass(frozen=True)
class Keys:
    access_key: str
    secret_key: str
    session_token: str | None
    found_in: str


def credentials() -> Keys:
    """The AccessKey the Pulumi provider reads (`VOLCENGINE_ACCESS_KEY`,
    `VOLCENGINE_SECRET_KEY`, `VOLCENGINE_SESSION_TOKEN`)."""
    access, secret = (
        os.environ.get("VOLCENGINE_ACCESS_KEY"),
        os.environ.get("VOLCENGINE_SECRET_KEY"),
    )
    if access and secret:
        token = os.environ.get("VOLCENGINE_SESSION_TOKEN") or None
        return Keys(access, secret, token, "VOLCENGINE_ACCESS_KEY")
    raise NoCredentialsError(
        "no Volcano Engine credentials: set VOLCENGINE_ACCESS_KEY and VOLCENGINE_SECRET_KEY"
    )


def _api(request: Request, keys: Keys) -> Any:
    import volcenginesdkcore
    import volcenginesdkecs

    configuration = volcenginesdkcore.Configuration()
    configuration.ak, configuration.sk = keys.access_key, keys.secret_key
    if keys.session_token:
        configuration.session_token = keys.session_token
    configuration.region = request.region
    configuration.auto_retry = False
    endpoint = request.endpoints.get("ecs")
    if endpoint:
        configuration.scheme, _, configuration.host = endpoint.partition("://")
    return volcenginesdkecs.ECSApi(volcenginesdkcore.ApiClient(configuration))


def _code(error: Any) -> str:
    """The error code of an `ApiException` (its body: ResponseMetadata.Error.Code)."""
    import json

    try:
        body = json.loads(getattr(error, "body", "") or "{}")
    except ValueError:
        return ""
    meta = body.get("ResponseMetadata") or {}
    return str((meta.get("Error") or {}).get("Code") or "")


def refresh(request: Request, keys: Keys) -> Result:
    import volcenginesdkecs
    from volcenginesdkcore.rest import ApiException

    api = _api(request, keys)
    currency = request.currency or billing_currency("volcengine", request.region)
    result = Result(currency=currency, source=SOURCE, notes=[ON_DEMAND_NOT_READ])
    if not request.currency:
        result.notes.append(
            f"DescribeSpotPriceHistory does not name its currency: {currency} assumed (the "
            "usual one for this region); `gpuinfra prices --currency` sets the account's"
        )
    for instance_type in request.instance_types:
        result.unavailable[instance_type] = ON_DEMAND_NOT_READ
        for zone in request.zones or (None,):
            token = None
            while True:
                try:
                    answer = api.describe_spot_price_history(
                        volcenginesdkecs.DescribeSpotPriceHistoryRequest(
                            instance_type_id=instance_type,
                            zone_id=zone,
                            max_results=100,
                            next_token=token,
                        )
                    )
                except ApiException as error:
                    code = _code(error)
                    if not code or code.startswith(_CALLER_ERRORS):
                        raise RefreshFailedError(
                            f"Volcano Engine refused the request: {code or error}"
                        ) from error
                    result.notes.append(f"{instance_type} in {zone or request.region}: {code}")
                    break
                except Exception as error:  # transport errors (no network, TLS, timeout)
                    raise RefreshFailedError(
                        f"Volcano Engine could not be reached: {error}"
                    ) from error
                for entry in answer.spot_prices or []:
                    result.add_spot(
                        instance_type,
                        entry.zone_id,
                        float(entry.spot_price),
                        iso(entry.timestamp),
                    )
                token = answer.next_token
                if not token or not answer.spot_prices:
                    break
    return result
