"""`gpuinfra prices`: refresh the stack's cloud's prices from its own price API, with the
user's credentials, into the dated price file the estimate and sizing read.

Everything that can be checked without a call is checked first (the stack, its cloud and
region, `--out`, the SDK, the credentials); nothing is written unless prices came back, and
the file is replaced atomically. It says what changed against the previous file (or, on the
first refresh, against the catalog).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..cli_errors import EXIT_OK, UserError, output_file, stack_name
from . import file as price_file
from .refresh import NoCredentialsError, RefreshFailedError, Request, Result

CLOUDS = ("aws", "alicloud", "tencentcloud", "volcengine")
SDK_HINT = "pip install 'gpuinfra[prices]' (the clouds' SDKs: boto3, alibabacloud_ecs20140526, "
SDK_HINT += "tencentcloud-sdk-python-cvm, volcengine-python-sdk's ECS module)"
_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_STACK_TYPE_SETTINGS = (
    "gpuPoolInstanceType",
    "gpuPoolExtraInstanceTypes",
    "systemPoolInstanceType",
    "workstationInstanceType",
)


def instance_type_name(text: str) -> str:
    if not _TYPE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected an instance type name such as g5.xlarge, "
            "ecs.gn7i-c8g1.2xlarge or GN7.2XLARGE32"
        )
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stack", "-s", type=stack_name, default="dev", help="stack whose cloud, region and "
        "zones to read prices for (Pulumi.<stack>.yaml)",
    )  # fmt: skip
    parser.add_argument("--cwd", "-C", default=".", help="project directory")
    parser.add_argument(
        "--out", metavar="FILE", help="file to write (default: prices/<cloud>-<region>.json)"
    )
    parser.add_argument(
        "--instance-type", action="append", type=instance_type_name, metavar="TYPE",
        help="price only these types (default: the catalog's GPU types of the stack's cloud "
        "and the types the stack names)",
    )  # fmt: skip
    parser.add_argument(
        "--currency", choices=("CNY", "USD"),
        help="the account's billing currency, for price APIs whose answer does not name it "
        "(Tencent Cloud, Volcano Engine; default: CNY in mainland-China regions, else USD)",
    )  # fmt: skip
    parser.add_argument(
        "--dry-run", action="store_true", help="read the prices and say what changed; write nothing"
    )


def _module(cloud: str) -> ModuleType:
    """The per-cloud refresher; its SDK is imported here, never by the preview."""
    sdk = {
        "aws": "boto3",
        "alicloud": "alibabacloud_ecs20140526",
        "tencentcloud": "tencentcloud.cvm",
        "volcengine": "volcenginesdkecs",
    }[cloud]
    try:
        __import__(sdk)
    except ImportError as error:
        raise UserError(
            "--stack", cloud, f"the {cloud} price SDK ({sdk}) is not installed; nothing was "
            "changed", SDK_HINT,
        ) from error  # fmt: skip
    import importlib

    return importlib.import_module(f"{__package__}.{cloud}")


def _stack(root: Path, stack: str) -> tuple[str, str, tuple[str, ...], list[str]]:
    """(cloud, region, zones, instance types the stack names)."""
    from ..cost import REGION_KEYS, ZONE_SETTINGS
    from ..project import load_project, load_stack_config

    values = load_stack_config(load_project(root), stack).values
    cloud = values.get("gpuinfra:cloud", "aws")
    if cloud not in CLOUDS:
        raise UserError(
            "--stack", stack, f"its cloud is {cloud!r}, which has no price API here",
            f"a stack on {', '.join(CLOUDS)}",
        )  # fmt: skip
    region = values.get(REGION_KEYS[cloud], "")
    if not region:
        raise UserError(
            "--stack", stack, f"{REGION_KEYS[cloud]} is not set", "a stack that names its region"
        )

    def listed(key: str) -> list[str]:
        raw = values.get(f"gpuinfra:{key}", "").strip()
        if not raw:
            return []
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw
        return [str(v) for v in parsed] if isinstance(parsed, list) else [str(parsed)]

    zone_key = ZONE_SETTINGS.get(cloud)
    zones = tuple(listed(zone_key)) if zone_key else ()
    types = [t for key in _STACK_TYPE_SETTINGS for t in listed(key)] + _pool_types(
        values.get("gpuinfra:gpuPools", "")
    )
    return cloud, region, zones, types


def _pool_types(raw: str) -> list[str]:
    """The types each `gpuPools` entry names (`instanceType`, `extraInstanceTypes`); a
    malformed list names none here (settings say why)."""
    try:
        entries = json.loads(raw) if raw.strip() else []
    except ValueError:
        return []
    found: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        for key in ("instanceType", "extraInstanceTypes"):
            value = entry.get(key)
            found += (
                [str(v) for v in value] if isinstance(value, list) else [str(value)] * bool(value)
            )
    return found


def _was(instance_type: str, cloud: str, old: price_file.PriceFile | None) -> tuple[Any, str]:
    """The previous on-demand price and its currency: the old file's, else the catalog's."""
    if old is not None:
        return old.on_demand.get(instance_type), old.currency
    from components import catalog

    entry = catalog.find(cloud, instance_type)
    if entry is None:
        return None, ""
    return entry.price.per_hour, entry.price.currency


def changes(new: price_file.PriceFile, old: price_file.PriceFile | None, cloud: str) -> list[str]:
    """What the refresh changed, one line per price that moved, appeared or went."""
    from ..currency import money

    lines = []
    unchanged = 0
    before = "previous file" if old is not None else "catalog"
    types = sorted(
        set(new.on_demand) | set(new.spot) | set(new.unavailable)
        | (set(old.on_demand) | set(old.spot) if old else set())
    )  # fmt: skip
    for instance_type in types:
        was, was_currency = _was(instance_type, cloud, old)
        now = new.on_demand.get(instance_type)
        if now is None and instance_type in new.unavailable:
            reason = new.unavailable[instance_type]
            lines.append(f"  {instance_type}: no on-demand price ({reason})")
        elif was == now and (now is None or was_currency == new.currency):
            unchanged += 1
        else:
            lines.append(
                f"  {instance_type} on-demand: {money(was, was_currency or new.currency)} -> "
                f"{money(now, new.currency)}/h"
            )
        old_spot = old.spot.get(instance_type, {}) if old else {}
        new_spot = new.spot.get(instance_type, {})
        for zone in sorted(set(old_spot) | set(new_spot)):
            a = old_spot[zone].per_hour if zone in old_spot else None
            b = new_spot[zone].per_hour if zone in new_spot else None
            if a == b:
                unchanged += 1
                continue
            assert old is not None or a is None
            lines.append(
                f"  {instance_type} spot {zone}: {money(a, old.currency if old else new.currency)}"
                f" -> {money(b, new.currency)}/h"
            )
    lines.append(f"  ({unchanged} price(s) unchanged against the {before})")
    return lines


def run(args: argparse.Namespace) -> int:
    root = Path(args.cwd)
    cloud, region, zones, stack_types = _stack(root, args.stack)
    out = output_file("--out", args.out) if args.out else price_file.path_for(
        cloud, region, root / price_file.FOLDER_NAME
    )  # fmt: skip
    from components import catalog

    types = args.instance_type or list(
        dict.fromkeys([e.instance_type for e in catalog.instance_types(cloud)] + stack_types)
    )
    old = price_file.read(out) if out.is_file() else None  # a broken file: said before any call
    if old is not None and (old.cloud, old.region) != (cloud, region):
        old = None
    module = _module(cloud)
    try:
        credentials = module.credentials(region) if cloud == "aws" else module.credentials()
    except NoCredentialsError as error:
        raise UserError(
            "--stack", args.stack, f"{error}; nothing was changed",
            f"credentials for {cloud} (read-only price permissions are enough)",
        ) from error  # fmt: skip
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    request = Request(
        region=region,
        zones=zones,
        instance_types=tuple(types),
        now=now,
        currency=args.currency,
        endpoints=ENDPOINTS.get(cloud, {}),
    )
    try:
        result: Result = module.refresh(request, credentials)
    except RefreshFailedError as error:
        raise UserError(
            "--stack", args.stack, f"{error}; nothing was changed",
            f"credentials allowed to read {cloud} prices in {region}, and network access to "
            "its API",
        ) from error  # fmt: skip
    if not result.on_demand and not result.spot:
        refused = "; ".join(f"{t}: {why}" for t, why in sorted(result.unavailable.items())[:3])
        raise UserError(
            "--stack", args.stack, f"the price API gave no price ({refused}); nothing was changed",
            "instance types sold in the stack's region (--instance-type)",
        )  # fmt: skip
    new = price_file.PriceFile(
        cloud=cloud,
        region=region,
        currency=result.currency,
        refreshed=now.isoformat().replace("+00:00", "Z"),
        source=f"{result.source}, read with the account's credentials",
        on_demand=result.on_demand,
        spot=result.spot,
        unavailable=result.unavailable,
        notes=tuple(result.notes),
    )
    verb = "Would write" if args.dry_run else "Wrote"
    print(
        f"{verb} {out}: {cloud} {region} prices in {new.currency}, {len(new.on_demand)} "
        f"on-demand and {sum(len(z) for z in new.spot.values())} spot (zones: "
        f"{', '.join(zones) if zones else 'every zone the API lists'}), read {new.refreshed}"
    )
    for line in changes(new, old, cloud):
        print(line)
    for note in new.notes:
        print(f"  note: {note}")
    if not args.dry_run:
        price_file.write(new, out)
    sys.stdout.flush()
    return EXIT_OK


ENDPOINTS: dict[str, dict[str, str]] = {}
"""Cloud -> service -> endpoint URL: empty (the clouds' own endpoints) except in tests,
which point the SDKs at a local server that answers with recorded responses."""
