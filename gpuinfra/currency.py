"""Which currency a cloud bills in, how amounts are written, and explicit conversion.

Amounts in different currencies are never added up. A conversion happens only with an
`ExchangeRate` the user gave, and its date is shown wherever a converted figure is.

Which currency an account is billed in depends on the site it signed up on, not on the
region alone: Alibaba Cloud's China site (aliyun.com), Tencent Cloud's (cloud.tencent.com)
and Volcano Engine's (volcengine.com) bill in CNY; their international sites (alibabacloud.com,
tencentcloud.com, BytePlus) bill in USD. `billing_currency` assumes the usual case (a
mainland-China region on a China-site account: CNY; anything else: USD); a refreshed price
file records the currency the price API answered in (or the one `gpuinfra prices
--currency` named) and wins over this guess.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

SYMBOLS = {"USD": "$", "CNY": "¥"}

_MAINLAND: dict[str, tuple[str, ...]] = {
    # Alibaba Cloud: every "cn-" region but Hong Kong
    # (https://www.alibabacloud.com/help/en/ecs/regions-and-zones).
    "alicloud": ("cn-",),
    # Tencent Cloud mainland regions (https://www.tencentcloud.com/document/product/213/6091).
    "tencentcloud": (
        "ap-beijing",
        "ap-shanghai",
        "ap-guangzhou",
        "ap-chengdu",
        "ap-chongqing",
        "ap-nanjing",
        "ap-shenzhen",
        "ap-qingyuan",
        "ap-tianjin",
        "ap-wuhan",
        "ap-jinan",
        "ap-hangzhou",
        "ap-shijiazhuang",
        "ap-fuzhou",
        "ap-changsha",
        "ap-xian",
        "ap-zhengzhou",
        "ap-hefei",
        "ap-shenyang",
    ),
    # Volcano Engine's mainland regions: cn-beijing, cn-shanghai, cn-guangzhou.
    "volcengine": ("cn-",),
}


def billing_currency(cloud: str, region: str) -> str:
    """The currency a usual account of `cloud` is billed in for `region` (see the module)."""
    if cloud == "alicloud" and region == "cn-hongkong":
        return "USD"
    prefixes = _MAINLAND.get(cloud, ())
    return "CNY" if region and region.startswith(prefixes) else "USD"


def money(value: float | None, currency: str = "USD") -> str:
    """`$1.23`, `¥0.045`, `unknown`; a currency without a symbol is written by its code."""
    if value is None:
        return "unknown"
    sign = SYMBOLS.get(currency)
    size = abs(value)
    digits = (
        f"{value:,.2f}"
        if size >= 1 or size == 0
        else f"{value:.3f}"
        if size >= 0.01
        else f"{value:.4f}"
    )
    if sign is None:
        return f"{digits} {currency}"
    return f"-{sign}{digits[1:]}" if digits.startswith("-") else f"{sign}{digits}"


@dataclass(frozen=True)
class ExchangeRate:
    """`1 base = rate quote`, as published on `date` (e.g. USD/CNY = 7.1 on 2026-11-30)."""

    base: str
    quote: str
    rate: float
    date: str

    def convert(self, amount: float, currency: str, to: str) -> float | None:
        """`amount` in `currency` written in `to`; None when this rate does not link them."""
        if currency == to:
            return amount
        if (currency, to) == (self.base, self.quote):
            return amount * self.rate
        if (currency, to) == (self.quote, self.base):
            return amount / self.rate
        return None

    def __str__(self) -> str:
        return f"1 {self.base} = {self.rate:g} {self.quote} ({self.date})"


_RATE = re.compile(r"^([A-Z]{3})/([A-Z]{3})=([0-9]*\.?[0-9]+)@(\d{4}-\d{2}-\d{2})$")


def parse_rate(text: str) -> ExchangeRate:
    """`USD/CNY=7.1@2026-11-30` (1 USD = 7.1 CNY, the rate of that day). ValueError if not."""
    match = _RATE.match(text.strip())
    if match is None:
        raise ValueError(
            f"{text!r}: expected BASE/QUOTE=RATE@DATE, e.g. USD/CNY=7.1@2026-11-30 "
            "(1 USD = 7.1 CNY on that day)"
        )
    base, quote, rate, date = match.groups()
    value = float(rate)
    try:
        dt.date.fromisoformat(date)
    except ValueError as error:
        raise ValueError(f"{text!r}: {date} is not a date (YYYY-MM-DD)") from error
    if base == quote or not 0 < value < 1e6:
        raise ValueError(f"{text!r}: expected two different currencies and a rate above 0")
    return ExchangeRate(base, quote, value, date)
