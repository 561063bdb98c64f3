"""AWS: on-demand prices from the Price List Query API (Pricing `GetProducts`), current spot
prices from EC2 `DescribeSpotPriceHistory`, both through boto3.

- GetProducts (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/
  API_pricing_GetProducts.html): served from us-east-1 (also ap-south-1, eu-central-1) for
  every region; `PriceList` is a list of JSON documents, each with `product.attributes` and
  `terms.OnDemand.<offer>.priceDimensions.<dimension>.pricePerUnit.USD` per `unit` "Hrs".
  Filtered to shared-tenancy Linux with no pre-installed software, capacity status "Used"
  (the instance-hour, not a reservation's unused capacity).
- DescribeSpotPriceHistory (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/
  API_DescribeSpotPriceHistory.html): with `StartTime` now, the current price per
  availability zone; `ProductDescriptions` "Linux/UNIX".
"""

from __future__ import annotations

import json
from typing import Any

from .refresh import NoCredentialsError, RefreshFailedError, Request, Result, iso

SOURCE = "AWS Price List API GetProducts (on-demand) and EC2 DescribeSpotPriceHistory (spot)"
PRICING_REGION = "us-east-1"


def credentials(region: str) -> Any:
    """boto3's session when its credential chain finds credentials (environment, shared
    files, SSO, a role); `NoCredentialsError` otherwise."""
    import boto3

    session = boto3.Session(region_name=region)
    if session.get_credentials() is None:
        raise NoCredentialsError(
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "AWS_PROFILE, or run where a role provides them"
        )
    return session


def _fail(error: Exception) -> RefreshFailedError:
    return RefreshFailedError(f"AWS refused the request: {error}")


def _filters(instance_type: str, region: str) -> list[dict[str, str]]:
    wanted = {
        "instanceType": instance_type,
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
    }
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in wanted.items()]


def _hourly_usd(document: str) -> set[float]:
    product = json.loads(document)
    found = set()
    for offer in (product.get("terms") or {}).get("OnDemand", {}).values():
        for dimension in (offer.get("priceDimensions") or {}).values():
            usd = (dimension.get("pricePerUnit") or {}).get("USD")
            if dimension.get("unit") == "Hrs" and usd is not None:
                found.add(float(usd))
    return found


def refresh(request: Request, session: Any) -> Result:
    from botocore.exceptions import BotoCoreError, ClientError

    result = Result(currency="USD", source=SOURCE)
    pricing = session.client(
        "pricing", region_name=PRICING_REGION, endpoint_url=request.endpoints.get("pricing")
    )
    ec2 = session.client(
        "ec2", region_name=request.region, endpoint_url=request.endpoints.get("ec2")
    )
    try:
        for instance_type in request.instance_types:
            answer = pricing.get_products(
                ServiceCode="AmazonEC2",
                Filters=_filters(instance_type, request.region),
                FormatVersion="aws_v1",
                MaxResults=10,
            )
            prices = set().union(*(_hourly_usd(d) for d in answer.get("PriceList") or []))
            if len(prices) == 1:
                result.on_demand[instance_type] = prices.pop()
            elif not prices:
                result.unavailable[instance_type] = (
                    f"GetProducts lists no Linux on-demand price in {request.region}"
                )
            else:
                result.unavailable[instance_type] = (
                    f"GetProducts lists several prices ({sorted(prices)}): not one to choose"
                )
        filters = (
            [{"Name": "availability-zone", "Values": list(request.zones)}] if request.zones else []
        )
        pages = ec2.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=list(request.instance_types),
            ProductDescriptions=["Linux/UNIX"],
            StartTime=request.now,
            Filters=filters,
        )
        for page in pages:
            for entry in page.get("SpotPriceHistory") or []:
                result.add_spot(
                    entry["InstanceType"],
                    entry["AvailabilityZone"],
                    float(entry["SpotPrice"]),
                    iso(entry.get("Timestamp")),
                )
    except (ClientError, BotoCoreError) as error:
        # GetProducts answers an unknown type with an empty list, so any error here is about
        # the caller (credentials, permissions, network): nothing is written.
        raise _fail(error) from error
    return result
