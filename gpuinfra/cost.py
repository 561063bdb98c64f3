"""Cost estimate of a plan: per resource and in total, from the catalog and the fee table.

Every figure is an estimate from list prices (with their source and date), never a quote.
A price the catalog does not know is `None` and shows as "unknown": it is never guessed, and
it never counts as $0: a total over unpriced lines is a lower bound ("at least $X, n
unpriced"), and a delta with an unpriced side is unknown (`delta`). Each line keeps the
currency its price is quoted in, and amounts in different currencies are never added: the
totals are per currency (`totals_by_currency`). Instance prices refreshed from the cloud's
price API (`gpuinfra prices`, `gpuinfra/prices/file.py`) win over the catalog's, and their
current spot prices over the spot factor. Each cloud's billable
resource types plug in through `EXTRACTORS` (type token -> function); types that cost
nothing by themselves are listed in `NOT_BILLED` with why; any other type becomes an
unpriced line, so nothing the stacks create drops out of the estimate silently.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from components import catalog
from components.catalog import fees
from components.catalog.fees import HOURS_PER_MONTH, Fee, UsageFee
from components.catalog.spot import spot_factor
from components.settings.schema import BY_NAME

from .currency import billing_currency, money
from .planview import Resource, StackView
from .prices import file as price_file

POOL_LABEL = "gpuinfra.io/pool"
"""The node label naming a node's pool (components/cluster_handle.py POOL_LABEL)."""

DISCLAIMER = (
    "Estimate from list prices (on-demand; spot = the current spot price from a refreshed "
    "price file, else on-demand x spot factor), not a quote: taxes, discounts and data "
    "transfer are left out; usage-based charges (NAT data processing, log ingestion, "
    "requests) are listed with their rates but not totalled; amounts in different currencies "
    "are never added together."
)

REGION_KEYS = {
    "aws": "aws:region",
    "alicloud": "alicloud:region",
    "tencentcloud": "tencentcloud:region",
    "volcengine": "volcenginecc:region",
}
"""Where each cloud's stack names its region (the provider's own config key)."""
ZONE_SETTINGS = {"tencentcloud": "tkeZones", "volcengine": "vkeZones"}
"""Settings that pin a stack's zones (the others use every zone of the region)."""


@dataclass(frozen=True)
class Assumptions:
    gpu_hours_per_month: int
    storage_gb: int
    spot_factor: float | None
    spot_source: str
    today: dt.date
    region: str = ""
    zones: tuple[str, ...] = ()
    currency: str = "USD"
    """The currency the stack is billed in: the refreshed file's, else `billing_currency`."""
    prices: price_file.PriceFile | None = None
    """Prices refreshed from the cloud's API for this cloud and region, when there are."""
    spot_factor_explicit: bool = False
    """`gpuinfra:costSpotFactor` is set: it wins over refreshed spot prices too."""


@dataclass(frozen=True)
class CostLine:
    """What one resource adds, in `currency`. None: unknown (`note` says why)."""

    resource: str
    type: str
    what: str
    hourly_desired: float | None
    hourly_max: float | None
    hourly_idle: float | None
    monthly: float | None
    source: str
    price_date: str
    note: str = ""
    item: str = ""
    """What of the resource this line prices ("pool", "root volume", "data processing"):
    with `resource` and `type` it pairs a line of the base plan with its head line."""
    currency: str = "USD"
    node_per_hour: float | None = None
    """A node pool's (or a VM's) price per node-hour, spot or on-demand as the line says."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource, self.type, self.item or self.what)


@dataclass
class CostReport:
    cloud: str
    lines: list[CostLine]
    assumptions: Assumptions
    totals: dict[str, float | None] = field(default_factory=dict)
    """Per figure, the sum of the lines priced in `currency`: a lower bound when `unpriced`
    or when other currencies have lines (`totals_by_currency`)."""
    unknown: int = 0
    """Lines whose monthly figure is unknown."""
    unpriced: dict[str, int] = field(default_factory=dict)
    """Per figure, how many lines have no price (not counted in any total)."""
    currency: str = "USD"
    totals_by_currency: dict[str, dict[str, float]] = field(default_factory=dict)
    """Currency -> figure -> the sum of the lines priced in it (never added across)."""

    def to_json(self) -> dict[str, Any]:
        dates = sorted({line.price_date for line in self.lines})
        a = self.assumptions
        refreshed = a.prices
        return {
            "estimate": True,
            "disclaimer": DISCLAIMER,
            "currency": self.currency,
            "priceDates": dates,
            "assumptions": {
                "gpuHoursPerMonth": a.gpu_hours_per_month,
                "storageGb": a.storage_gb,
                "spotFactor": a.spot_factor,
                "spotFactorSource": a.spot_source,
                "hoursPerMonth": HOURS_PER_MONTH,
                "date": a.today.isoformat(),
                "region": a.region,
                "zones": list(a.zones),
                "refreshedPrices": None
                if refreshed is None
                else {
                    "file": str(refreshed.path) if refreshed.path else None,
                    "refreshed": refreshed.refreshed,
                    "source": refreshed.source,
                    "currency": refreshed.currency,
                },
            },
            "lines": [asdict(line) for line in self.lines],
            "totals": dict(self.totals),
            "totalsByCurrency": {c: dict(t) for c, t in self.totals_by_currency.items()},
            "unpricedLines": dict(self.unpriced),
            "unknownLines": self.unknown,
        }


def _int_setting(view: StackView, name: str) -> int:
    raw = view.setting(name)
    default = BY_NAME[name].default if name in BY_NAME else 0
    fallback = default if isinstance(default, int) else 0
    try:
        return int(raw) if raw else fallback
    except ValueError:
        return fallback


def _zones(view: StackView) -> tuple[str, ...]:
    name = ZONE_SETTINGS.get(view.cloud)
    raw = (view.setting(name) or "").strip() if name else ""
    if not raw:
        return ()
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = [raw]
    return tuple(str(z) for z in parsed) if isinstance(parsed, list) else (str(parsed),)


def assumptions(view: StackView, today: dt.date | None = None) -> Assumptions:
    override = (view.setting("costSpotFactor") or "").strip()
    catalog_factor = spot_factor(view.cloud)
    if override:
        factor: float | None = float(override)
        source = "gpuinfra:costSpotFactor (stack setting)"
    elif catalog_factor is not None:
        factor = catalog_factor.factor
        source = f"{catalog_factor.source}; {catalog_factor.note}"
    else:
        factor, source = None, f"no spot factor for cloud '{view.cloud}'"
    region = str(view.config.get(REGION_KEYS.get(view.cloud, ""), "") or "")
    refreshed = price_file.load(view.cloud, region) if region else None
    currency = refreshed.currency if refreshed is not None else billing_currency(view.cloud, region)
    return Assumptions(
        gpu_hours_per_month=_int_setting(view, "costGpuHoursPerMonth"),
        storage_gb=_int_setting(view, "costStorageGb"),
        spot_factor=factor,
        spot_source=source,
        today=today or dt.date.today(),
        region=region,
        zones=_zones(view),
        currency=currency,
        prices=refreshed,
        spot_factor_explicit=bool(override),
    )


Extractor = Callable[[Resource, StackView, Assumptions], list[CostLine]]


def _fixed(resource: Resource, what: str, fee: Fee, count: float = 1.0, item: str = "") -> CostLine:
    """A fee from the fee table: its figures are USD list prices (`fees`)."""
    hourly = None if fee.usd_per_hour is None else fee.usd_per_hour * count
    return CostLine(
        resource=resource.name,
        type=resource.type,
        what=what,
        hourly_desired=hourly,
        hourly_max=hourly,
        hourly_idle=hourly,
        monthly=None if hourly is None else hourly * HOURS_PER_MONTH,
        source=fee.source,
        price_date=fee.date,
        note=fee.note,
        item=item or what,
        currency="USD",
    )


def _usage(resource: Resource, what: str, fee: UsageFee, note: str = "") -> CostLine:
    """A charge billed per unit of use: listed with its rate, never totalled."""
    return CostLine(
        resource=resource.name,
        type=resource.type,
        what=what,
        hourly_desired=None,
        hourly_max=None,
        hourly_idle=None,
        monthly=None,
        source=fee.source,
        price_date=fee.date,
        note="; ".join(x for x in (f"usage-based: {fee.rate}", note) if x),
        item=what,
    )


def _unpriced(resource: Resource, what: str, why: str, today: dt.date) -> CostLine:
    return CostLine(
        resource=resource.name,
        type=resource.type,
        what=what,
        hourly_desired=None,
        hourly_max=None,
        hourly_idle=None,
        monthly=None,
        source="not in the fee table",
        price_date=today.isoformat(),
        note=why,
        item=what,
    )


# --- node pools (shared by the three clouds) ------------------------------------------------


@dataclass(frozen=True)
class _Pool:
    instance_type: str
    spot: bool
    min_nodes: int
    desired_nodes: int
    max_nodes: int
    disk_gb: int | None = None
    disk_fee: Fee | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """The node labels the pool gives its nodes (a Job's node selector picks a pool by them)."""

    @property
    def name(self) -> str:
        """The GPU pool's name (`gpuinfra.io/pool`), or "" for a pool without one."""
        return str(self.labels.get(POOL_LABEL, ""))


@dataclass(frozen=True)
class _NodePrice:
    per_hour: float | None
    currency: str
    source: str
    date: str
    notes: list[str]


def _refreshed_note(a: Assumptions) -> str:
    """How old the refreshed file is, when that matters."""
    assert a.prices is not None
    age = a.prices.age_days(a.today)
    if age > price_file.STALE_AFTER_DAYS:
        return (
            f"refreshed {age} days ago ({a.prices.date}): spot prices move hourly; run "
            "`gpuinfra prices --stack <stack>` again"
        )
    return ""


def _on_demand(view: StackView, a: Assumptions, instance_type: str) -> _NodePrice:
    """One node's on-demand price: refreshed from the cloud's API, else the catalog's (GPU
    types) or the fee table's (AWS system-pool types)."""
    refreshed = a.prices
    if refreshed is not None and instance_type in refreshed.on_demand:
        return _NodePrice(
            refreshed.on_demand[instance_type],
            refreshed.currency,
            f"{refreshed.source} ({refreshed.region}, refreshed {refreshed.refreshed})",
            refreshed.date,
            [_refreshed_note(a)],
        )
    gpu = catalog.find(view.cloud, instance_type)
    cpu_fee = fees.AWS_CPU_INSTANCES.get(instance_type) if view.cloud == "aws" else None
    notes: list[str] = []
    if refreshed is not None and instance_type in refreshed.unavailable:
        notes.append(
            f"no on-demand price from the price API: {refreshed.unavailable[instance_type]}"
        )
    if gpu is not None:
        price = gpu.price
        if price.per_hour is None:
            notes.append(price.note)
        elif a.region and price.region not in (a.region, "all"):
            notes.append(
                f"list price in {price.region}; the stack is in {a.region} (refresh with "
                "`gpuinfra prices` for its own)"
            )
        return _NodePrice(price.per_hour, price.currency, price.source, price.date, notes)
    if cpu_fee is not None:
        return _NodePrice(cpu_fee.usd_per_hour, "USD", cpu_fee.source, cpu_fee.date, notes)
    notes.append(
        f"no price for {instance_type} in the catalog or the fee table"
        + ("" if refreshed is not None else "; `gpuinfra prices --stack <stack>` reads it")
    )
    return _NodePrice(None, a.currency, "not in the catalog", a.today.isoformat(), notes)


def _node_price(view: StackView, a: Assumptions, pool: _Pool) -> _NodePrice:
    """One node of the pool per hour: on-demand, or for spot pools the current spot price of
    a refreshed file (the highest over the stack's zones), else on-demand x the spot factor."""
    price = _on_demand(view, a, pool.instance_type)
    node, currency, source, date = price.per_hour, price.currency, price.source, price.date
    notes = list(price.notes)
    if pool.spot:
        refreshed = a.prices
        quote = (
            refreshed.spot_price(pool.instance_type, a.zones)
            if refreshed is not None and not a.spot_factor_explicit
            else None
        )
        if quote is not None:
            assert refreshed is not None
            node, currency = quote.per_hour, refreshed.currency
            source = f"{refreshed.source} ({refreshed.region}, refreshed {refreshed.refreshed})"
            date = refreshed.date
            zones = "the stack's zones" if a.zones else "the zones read"
            notes = [n for n in notes if not n.startswith("no on-demand price from the price API")]
            notes.append(
                f"spot = current spot price {money(quote.per_hour, currency)}/h in {quote.zone} "
                f"at {quote.at or refreshed.refreshed} (the highest of {zones})"
            )
            if (age := _refreshed_note(a)) and age not in notes:
                notes.append(age)
        elif node is None:
            pass
        elif a.spot_factor is None:
            node = None
            notes.append(a.spot_source)
        else:
            node = node * a.spot_factor
            notes.append(f"spot = on-demand x {a.spot_factor:g}")
    if node is not None and pool.disk_gb and pool.disk_fee and pool.disk_fee.usd_per_hour:
        if currency == "USD":
            node += pool.disk_gb * pool.disk_fee.usd_per_hour
            notes.append(f"incl. {pool.disk_gb} GB root volume per node")
        else:
            notes.append(f"{pool.disk_gb} GB root volume per node not included (priced in USD)")
    return _NodePrice(node, currency, source, date, notes)


def _pool_line(
    resource: Resource, view: StackView, a: Assumptions, pool: _Pool, *, budget: bool = True
) -> CostLine:
    """`budget`: the pool the `costGpuHoursPerMonth` GPU hours are priced on (a stack's first
    GPU pool, where a Job that names no pool runs); others count their minimum size only."""
    gpu = catalog.find(view.cloud, pool.instance_type)
    price = _node_price(view, a, pool)
    node, source, date, notes = price.per_hour, price.source, price.date, list(price.notes)
    capacity = "spot" if pool.spot else "on-demand"
    size = f"{pool.min_nodes}/{pool.desired_nodes}/{pool.max_nodes}"
    if gpu is not None:
        named = f"GPU pool {pool.name} " if pool.name else "GPU pool "
        what = f"{named}{size} (min/desired/max) x {pool.instance_type} ({capacity})"
        # Monthly: nodes held at min all month, plus the GPU hours the config budgets,
        # run on nodes with gpu_count GPUs each (on the first GPU pool only).
        hours = a.gpu_hours_per_month if budget else 0
        node_hours = pool.min_nodes * HOURS_PER_MONTH + hours / gpu.gpu_count
        notes.append(
            f"monthly = min size all month + {hours} GPU hours ({gpu.gpu_count} GPU per node)"
            + ("" if budget else "; gpuinfra:costGpuHoursPerMonth is priced on the first GPU pool")
        )
        # The pool's max is the autoscaler's limit, lowered by gpuinfra:maxGpus where set.
        notes.append(
            f"idle = {pool.min_nodes} nodes (autoscaled down); max = worst case "
            f"{pool.max_nodes} nodes x {gpu.gpu_count} = {pool.max_nodes * gpu.gpu_count} GPUs "
            "(the autoscaler's limit, gpuinfra:maxGpus)"
        )
    else:
        what = f"node pool {size} (min/desired/max) x {pool.instance_type} ({capacity})"
        node_hours = pool.desired_nodes * HOURS_PER_MONTH
    return CostLine(
        resource=resource.name,
        type=resource.type,
        what=what,
        hourly_desired=None if node is None else node * pool.desired_nodes,
        hourly_max=None if node is None else node * pool.max_nodes,
        hourly_idle=None if node is None else node * pool.min_nodes,
        monthly=None if node is None else node * node_hours,
        source=source,
        price_date=date,
        note="; ".join(n for n in notes if n),
        item="pool",
        currency=price.currency,
        node_per_hour=node,
    )


def _labels(value: Any) -> dict[str, str]:
    """Node pool labels as a mapping: EKS and TKE take a map, ACK and VKE a list of
    `{key, value}`."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {
            str(item.get("key")): str(item.get("value"))
            for item in value
            if isinstance(item, Mapping) and item.get("key") is not None
        }
    return {}


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# --- AWS -------------------------------------------------------------------------------------


def _months_later(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, 28))


def eks_control_plane_fee(version: str, today: dt.date) -> tuple[Fee, str]:
    end = fees.EKS_END_OF_STANDARD_SUPPORT.get(version)
    if end is None:
        return fees.EKS_STANDARD, f"Kubernetes {version} not in the EKS calendar table"
    standard_end = dt.date.fromisoformat(end)
    extended_end = _months_later(standard_end, fees.EKS_EXTENDED_SUPPORT_MONTHS)
    if today > extended_end:
        gone = Fee(
            None,
            "cluster",
            "all",
            fees.EKS_STANDARD.source,
            fees.EKS_STANDARD.date,
            f"Kubernetes {version} is past EKS extended support (ended about "
            f"{extended_end.isoformat()}): EKS upgrades such a control plane itself, so "
            "this version is not what would run or be billed; pick a supported version",
        )
        return gone, gone.note
    if today > standard_end:
        return fees.EKS_EXTENDED, (
            f"Kubernetes {version} left EKS standard support on {end}: extended support "
            f"pricing applies until about {extended_end.isoformat()}; upgrade to return to "
            "$0.10/h"
        )
    return fees.EKS_STANDARD, f"Kubernetes {version} in standard support until {end}"


def _aws_cluster(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    version = str(r.inputs.get("version") or "")
    fee, why = eks_control_plane_fee(version, a.today)
    line = _fixed(
        r, f"EKS control plane ({version or 'default version'})", fee, item="control plane"
    )
    note = why if fee.usd_per_hour is None else f"{why}. {fee.note}"
    return [CostLine(**{**asdict(line), "note": note})]


def _aws_nat(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    return [
        _fixed(r, "NAT gateway", fees.AWS_NAT_GATEWAY),
        _usage(r, "NAT data processing", fees.AWS_NAT_DATA_PROCESSING),
    ]


def _aws_log_group(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    """EKS control-plane logs: ingestion and storage grow with the log types and retention."""
    retention = r.inputs.get("retentionInDays")
    kept = f"kept {retention} days" if retention else "kept forever (no retention set)"
    types = sorted(
        {
            str(t)
            for c in view.of_type("aws:eks/cluster:Cluster")
            for t in c.inputs.get("enabledClusterLogTypes") or []
        }
    )
    what = f"control-plane logs: {len(types)} log types, {kept}"
    note = f"log types: {', '.join(types)}" if types else ""
    return [_usage(r, what, fees.AWS_CLOUDWATCH_LOGS, note)]


def _aws_pool(r: Resource, view: StackView) -> _Pool:
    scaling = r.inputs.get("scalingConfig") or {}
    types = r.inputs.get("instanceTypes") or ["t3.medium"]  # EKS's default when none is given
    template = view.by_id((r.inputs.get("launchTemplate") or {}).get("id"))
    disk = None
    if template is not None:
        for mapping in template.inputs.get("blockDeviceMappings") or []:
            disk = _int((mapping.get("ebs") or {}).get("volumeSize")) or None
    else:
        disk = _int(r.inputs.get("diskSize"), 20)  # EKS's default root volume
    return _Pool(
        instance_type=str(types[0]),
        spot=r.inputs.get("capacityType") == "SPOT",
        min_nodes=_int(scaling.get("minSize")),
        desired_nodes=_int(scaling.get("desiredSize")),
        max_nodes=_int(scaling.get("maxSize")),
        disk_gb=disk,
        disk_fee=fees.AWS_EBS_GP3,
        labels=_labels(r.inputs.get("labels")),
    )


def _storage(fee: Fee, requests: UsageFee | None = None) -> Extractor:
    def extract(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
        line = _fixed(
            r,
            f"bucket storage at {a.storage_gb} GB (gpuinfra:costStorageGb)",
            fee,
            item="storage",
        )
        extra = [_usage(r, "bucket requests", requests)] if requests else []
        if fee.usd_per_hour is None:
            return [line, *extra]
        hourly = fee.usd_per_hour * a.storage_gb
        return [
            CostLine(
                **{
                    **asdict(line),
                    "hourly_desired": hourly,
                    "hourly_max": hourly,
                    "hourly_idle": hourly,
                    "monthly": hourly * HOURS_PER_MONTH,
                }
            ),
            *extra,
        ]

    return extract


def _fee(what: str, fee: Fee) -> Extractor:
    return lambda r, view, a: [_fixed(r, what, fee)]


def _tke_endpoint(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    """TKE serves a cluster endpoint, public or VPC-internal, through a CLB of its own."""
    kind = "public" if r.inputs.get("clusterInternet") is True else "internal"
    return [_fixed(r, f"{kind} API endpoint load balancer (CLB)", fees.TENCENT_CLB, item="clb")]


# --- Alibaba Cloud ---------------------------------------------------------------------------


def _ack_cluster(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    spec = str(r.inputs.get("clusterSpec") or "ack.standard")
    if spec.startswith("ack.pro"):
        return [_fixed(r, f"ACK Pro cluster management ({spec})", fees.ACK_PRO, item="fee")]
    basic = Fee(0.0, "cluster", "all", fees.ACK_PRO.source, fees.ACK_PRO.date, "Basic: no fee")
    return [_fixed(r, f"ACK cluster management ({spec})", basic, item="fee")]


def _ack_pool(r: Resource, view: StackView) -> _Pool:
    scaling = r.inputs.get("scalingConfig") or {}
    types = r.inputs.get("instanceTypes") or ["unknown"]
    desired = r.inputs.get("desiredSize", r.inputs.get("nodeCount"))
    return _Pool(
        instance_type=str(types[0]),
        spot=str(r.inputs.get("spotStrategy") or "NoSpot") != "NoSpot",
        min_nodes=_int(scaling.get("minSize"), _int(desired)),
        desired_nodes=_int(desired),
        max_nodes=_int(scaling.get("maxSize"), _int(desired)),
        labels=_labels(r.inputs.get("labels")),
    )


# --- Tencent Cloud ---------------------------------------------------------------------------


def _tke_pool(r: Resource, view: StackView) -> _Pool:
    config = r.inputs.get("autoScalingConfig") or {}
    return _Pool(
        instance_type=str(config.get("instanceType") or "unknown"),
        spot=config.get("instanceChargeType") == "SPOTPAID",
        min_nodes=_int(r.inputs.get("minSize")),
        desired_nodes=_int(r.inputs.get("desiredCapacity"), _int(r.inputs.get("minSize"))),
        max_nodes=_int(r.inputs.get("maxSize")),
        labels=_labels(r.inputs.get("labels")),
    )


# --- Volcano Engine (issue 27) ---------------------------------------------------------------


def _vke_pool(r: Resource, view: StackView) -> _Pool:
    scaling = r.inputs.get("autoScaling") or {}
    node = r.inputs.get("nodeConfig") or {}
    types = node.get("instanceTypeIds") or ["unknown"]
    return _Pool(
        instance_type=str(types[0]),
        spot=node.get("spotStrategy") == "SpotAsPriceGo",
        min_nodes=_int(scaling.get("minReplicas")),
        desired_nodes=_int(scaling.get("desiredReplicas"), _int(scaling.get("minReplicas"))),
        max_nodes=_int(scaling.get("maxReplicas")),
        labels=_labels((r.inputs.get("kubernetesConfig") or {}).get("labels")),
    )


PoolReader = Callable[[Resource, StackView], _Pool]
POOLS: dict[str, PoolReader] = {
    "aws:eks/nodeGroup:NodeGroup": _aws_pool,
    "alicloud:cs/nodePool:NodePool": _ack_pool,
    "tencentcloud:Kubernetes/nodePool:NodePool": _tke_pool,
    "volcenginecc:vke/nodePool:NodePool": _vke_pool,
}
"""Node pool resource types, and how each cloud's reads as a `_Pool`."""


def _pool(read: PoolReader) -> Extractor:
    def extract(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
        pool = read(r, view)
        first = _first_gpu_pool(view)
        return [_pool_line(r, view, a, pool, budget=first is None or first.urn == r.urn)]

    return extract


def _gpu_pools(view: StackView) -> list[tuple[Resource, _Pool]]:
    """The plan's GPU node pools in `gpuPools` order (the stack config's), not the plan's:
    resources are recorded as their registrations complete, in no fixed order."""
    found = []
    for resource in view.resources:
        read = POOLS.get(resource.type)
        if read is None:
            continue
        pool = read(resource, view)
        if catalog.find(view.cloud, pool.instance_type) is not None:
            found.append((resource, pool))
    order = _pool_order(view)
    return sorted(found, key=lambda item: (order.get(item[1].name, len(order)), item[0].name))


def _pool_order(view: StackView) -> dict[str, int]:
    """Pool name -> its index in the stack's `gpuPools` (empty: one pool, or not given)."""
    try:
        entries = json.loads(view.setting("gpuPools") or "[]")
    except json.JSONDecodeError:
        return {}
    names = (
        [e.get("name") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    )
    return {str(name): index for index, name in enumerate(names)}


def _first_gpu_pool(view: StackView) -> Resource | None:
    pools = _gpu_pools(view)
    return pools[0][0] if pools else None


@dataclass(frozen=True)
class GpuHourPrice:
    """What one GPU of a GPU pool costs per hour (its node's price / its GPUs)."""

    instance_type: str
    gpus_per_node: int
    usd: float | None
    """The price per GPU-hour, in `currency` (the name predates currencies)."""
    note: str
    pool: str = ""
    """The pool's name (`gpuinfra.io/pool`), "" where its nodes carry none."""
    spot: bool = True
    currency: str = "USD"


def gpu_hour_price(
    view: StackView, a: Assumptions, node_selector: Mapping[str, str] | None = None
) -> GpuHourPrice | None:
    """The GPU pool whose node labels hold `node_selector` (a Job's), or the first GPU pool
    without one; None when the stack has no such pool (e.g. an existing cluster)."""
    for _resource, pool in _gpu_pools(view):
        if node_selector and any(pool.labels.get(k) != v for k, v in node_selector.items()):
            continue
        gpu = catalog.find(view.cloud, pool.instance_type)
        assert gpu is not None  # _gpu_pools keeps GPU pools only
        price = _node_price(view, a, pool)
        per_gpu = None if price.per_hour is None else price.per_hour / gpu.gpu_count
        return GpuHourPrice(
            pool.instance_type,
            gpu.gpu_count,
            per_gpu,
            "; ".join(n for n in price.notes if n),
            pool=pool.name,
            spot=pool.spot,
            currency=price.currency,
        )
    return None


# --- GPU workstation (one VM, any cloud) -----------------------------------------------------


DiskReader = Callable[[Mapping[str, Any]], tuple[int | None, str]]
"""A VM's inputs -> (root disk GB or None when not set, disk type)."""


def _aws_root(i: Mapping[str, Any]) -> tuple[int | None, str]:
    root = i.get("rootBlockDevice") or {}
    return _int(root.get("volumeSize")) or None, str(root.get("volumeType") or "gp3")


def _ali_root(i: Mapping[str, Any]) -> tuple[int | None, str]:
    return _int(i.get("systemDiskSize")) or None, str(
        i.get("systemDiskCategory") or "cloud_efficiency"
    )


def _tencent_root(i: Mapping[str, Any]) -> tuple[int | None, str]:
    return _int(i.get("systemDiskSize")) or None, str(i.get("systemDiskType") or "CLOUD_PREMIUM")


_ROOT_FEES: dict[str, Fee] = {
    "gp3": fees.AWS_EBS_GP3,
    "cloud_essd": fees.ALICLOUD_ESSD,
    "CLOUD_PREMIUM": fees.TENCENT_CBS_PREMIUM,
}


def _root_volume(r: Resource, read: DiskReader, a: Assumptions) -> CostLine:
    size, kind = read(r.inputs)
    fee = _ROOT_FEES.get(kind)
    if size is None:
        return _unpriced(r, "root volume", "size not set: the image's default applies", a.today)
    if fee is None:
        return _unpriced(r, "root volume", f"{size} GB {kind}: no price for {kind}", a.today)
    line = _fixed(r, f"root volume {size} GB {kind}", fee, count=size, item="root volume")
    return line


def _workstation(
    type_key: str, spot: Callable[[Mapping[str, Any]], bool], root: DiskReader
) -> Extractor:
    """One always-on GPU VM: a pool of exactly one node, priced from the catalog, plus its
    root volume (billed whether the VM runs or not)."""

    def extract(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
        pool = _Pool(
            instance_type=str(r.inputs.get(type_key) or "unknown"),
            spot=spot(r.inputs),
            min_nodes=1,
            desired_nodes=1,
            max_nodes=1,
        )
        line = _pool_line(r, view, a, pool)
        # Runs all month: the GPU-hours budget is for the pool, not for the workstation.
        hourly = line.hourly_desired
        capacity = "spot" if pool.spot else "on-demand"
        return [
            CostLine(
                **{
                    **asdict(line),
                    "what": f"GPU workstation {pool.instance_type} ({capacity}), always on",
                    "monthly": None if hourly is None else hourly * HOURS_PER_MONTH,
                    "note": "; ".join(
                        n for n in line.note.split("; ") if not n.startswith("monthly =")
                    ),
                    "item": "instance",
                }
            ),
            _root_volume(r, root, a),
        ]

    return extract


EXTRACTORS: dict[str, Extractor] = {
    "aws:ec2/instance:Instance": _workstation(
        "instanceType",
        lambda i: (i.get("instanceMarketOptions") or {}).get("marketType") == "spot",
        _aws_root,
    ),
    "alicloud:ecs/instance:Instance": _workstation(
        "instanceType", lambda i: str(i.get("spotStrategy") or "NoSpot") != "NoSpot", _ali_root
    ),
    "tencentcloud:Instance/instance:Instance": _workstation(
        "instanceType", lambda i: i.get("instanceChargeType") == "SPOTPAID", _tencent_root
    ),
    "aws:eks/cluster:Cluster": _aws_cluster,
    "aws:eks/nodeGroup:NodeGroup": _pool(_aws_pool),
    "aws:ec2/natGateway:NatGateway": _aws_nat,
    "aws:ec2/eip:Eip": _fee("public IPv4 address", fees.AWS_PUBLIC_IPV4),
    "aws:kms/key:Key": _fee("KMS key", fees.AWS_KMS_KEY),
    "aws:s3/bucket:Bucket": _storage(fees.AWS_S3_STANDARD, fees.AWS_S3_REQUESTS),
    "aws:cloudwatch/logGroup:LogGroup": _aws_log_group,
    "alicloud:cs/managedKubernetes:ManagedKubernetes": _ack_cluster,
    "alicloud:cs/nodePool:NodePool": _pool(_ack_pool),
    "alicloud:vpc/natGateway:NatGateway": _fee("NAT gateway", fees.ALICLOUD_NAT_GATEWAY),
    "alicloud:oss/bucket:Bucket": _storage(fees.ALICLOUD_OSS_STANDARD),
    "alicloud:ecs/eipAddress:EipAddress": _fee("elastic IP address", fees.ALICLOUD_EIP),
    "alicloud:kms/key:Key": _fee("KMS key", fees.ALICLOUD_KMS_KEY),
    "tencentcloud:Kubernetes/cluster:Cluster": _fee("TKE cluster management", fees.TKE_MANAGEMENT),
    "tencentcloud:Kubernetes/nodePool:NodePool": _pool(_tke_pool),
    "tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint": _tke_endpoint,
    "tencentcloud:Nat/gateway:Gateway": _fee("NAT gateway", fees.TENCENT_NAT_GATEWAY),
    "tencentcloud:Cos/bucket:Bucket": _storage(fees.TENCENT_COS_STANDARD),
    "tencentcloud:Eip/instance:Instance": _fee("elastic IP address", fees.TENCENT_EIP),
    "tencentcloud:Kms/key:Key": _fee("KMS key", fees.TENCENT_KMS_KEY),
    # Volcano Engine (issue 27)
    "volcenginecc:vke/cluster:Cluster": _fee("VKE cluster management", fees.VKE_MANAGEMENT),
    "volcenginecc:vke/nodePool:NodePool": _pool(_vke_pool),
    "volcenginecc:natgateway/ngw:Ngw": _fee("NAT gateway", fees.VOLCENGINE_NAT_GATEWAY),
    "volcenginecc:vpc/eip:Eip": _fee("elastic IP address", fees.VOLCENGINE_EIP),
    "volcenginecc:tos/bucket:Bucket": _storage(fees.VOLCENGINE_TOS_STANDARD),
}

_FREE_AWS = (
    "no charge for the resource itself (https://aws.amazon.com/vpc/pricing/, "
    "https://aws.amazon.com/iam/, https://aws.amazon.com/s3/pricing/, "
    "https://aws.amazon.com/eks/pricing/ (cluster access entries); 2026-11-30)"
)
_FREE_ALI = "no charge for the resource itself (Alibaba Cloud VPC, RAM, OSS configuration)"
_FREE_TENCENT = "no charge for the resource itself (Tencent Cloud VPC, CAM, security groups)"
_FREE_VOLC = (
    "no charge for the resource itself (Volcano Engine VPC, IAM, TOS configuration; "
    "VKE add-ons run on the nodes priced above)"
)
NOT_BILLED: dict[str, str] = {
    # the Mountpoint for S3 CSI add-on: EKS add-ons carry no fee of their own (their pods run
    # on the nodes priced above; S3 requests are billed with the bucket)
    "aws:eks/addon:Addon": _FREE_AWS,
    **{
        t: _FREE_AWS
        for t in (
            "aws:autoscaling/tag:Tag",
            "aws:eks/accessEntry:AccessEntry",
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
            "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
            "aws:ec2/internetGateway:InternetGateway",
            "aws:ec2/keyPair:KeyPair",
            "aws:ec2/launchTemplate:LaunchTemplate",
            "aws:ec2/routeTable:RouteTable",
            "aws:ec2/routeTableAssociation:RouteTableAssociation",
            "aws:ec2/securityGroup:SecurityGroup",
            "aws:ec2/subnet:Subnet",
            "aws:ec2/vpc:Vpc",
            "aws:iam/instanceProfile:InstanceProfile",
            "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
            "aws:iam/role:Role",
            "aws:iam/rolePolicy:RolePolicy",
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "aws:kms/alias:Alias",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
            "aws:s3/bucketPolicy:BucketPolicy",
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "aws:s3/bucketVersioning:BucketVersioning",
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        )
    },
    **{
        t: _FREE_ALI
        for t in (
            "alicloud:cs/autoscalingConfig:AutoscalingConfig",
            "alicloud:ecs/ecsKeyPair:EcsKeyPair",
            "alicloud:ecs/eipAssociation:EipAssociation",
            "alicloud:ecs/ramRoleAttachment:RamRoleAttachment",
            "alicloud:ecs/securityGroup:SecurityGroup",
            "alicloud:ecs/securityGroupRule:SecurityGroupRule",
            "alicloud:kms/alias:Alias",
            "alicloud:oss/bucketAcl:BucketAcl",
            "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock",
            "alicloud:ram/policy:Policy",
            "alicloud:ram/role:Role",
            "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
            "alicloud:vpc/network:Network",
            "alicloud:vpc/snatEntry:SnatEntry",
            "alicloud:vpc/switch:Switch",
        )
    },
    **{
        t: _FREE_TENCENT
        for t in (
            "tencentcloud:Cam/policy:Policy",
            "tencentcloud:Cam/role:Role",
            "tencentcloud:Cam/rolePolicyAttachment:RolePolicyAttachment",
            "tencentcloud:Key/pair:Pair",
            "tencentcloud:Kubernetes/authAttachment:AuthAttachment",
            "tencentcloud:Kubernetes/encryptionProtection:EncryptionProtection",
            "tencentcloud:Route/table:Table",
            "tencentcloud:Route/tableEntry:TableEntry",
            "tencentcloud:Security/group:Group",
            "tencentcloud:Security/groupRuleSet:GroupRuleSet",
            "tencentcloud:Subnet/instance:Instance",
            "tencentcloud:Vpc/instance:Instance",
        )
    },
    **{
        t: _FREE_VOLC
        for t in (
            "volcenginecc:iam/policy:Policy",
            "volcenginecc:iam/role:Role",
            "volcenginecc:natgateway/snatentry:Snatentry",
            "volcenginecc:tos/bucketEncryption:BucketEncryption",
            "volcenginecc:vke/addon:Addon",
            "volcenginecc:vke/kubeconfig:Kubeconfig",
            "volcenginecc:vpc/routeTable:RouteTable",
            "volcenginecc:vpc/securityGroup:SecurityGroup",
            "volcenginecc:vpc/subnet:Subnet",
            "volcenginecc:vpc/vpc:Vpc",
        )
    },
}
"""Resource types that cost nothing by themselves, with why."""

_LOAD_BALANCER = "a cloud load balancer the cluster creates for it: not priced here"


def not_billed(resource: Resource) -> str | None:
    """Why `resource` adds no cost, or None when it may cost something."""
    t = resource.type
    if t in NOT_BILLED:
        return NOT_BILLED[t]
    if t.startswith(("gpuinfra:", "pulumi:providers:", "random:")):
        return "a component, provider or generated value: no cloud resource of its own"
    if t == "aws:ec2/vpcEndpoint:VpcEndpoint":
        gateway = resource.inputs.get("vpcEndpointType") == "Gateway"
        return (
            "gateway endpoint: no charge (https://aws.amazon.com/vpc/pricing/)" if gateway else None
        )
    if t == "kubernetes:core/v1:Service":
        kind = (resource.inputs.get("spec") or {}).get("type")
        return None if kind == "LoadBalancer" else "runs on the nodes priced above"
    if t == "kubernetes:core/v1:PersistentVolumeClaim" and (resource.inputs.get("spec") or {}).get(
        "volumeName"
    ):
        # a static claim (datasets): it binds the PersistentVolume the stack declares and
        # provisions no disk; the bucket's requests are priced with the bucket
        return "binds a volume of this stack: no disk provisioned"
    if t.startswith("kubernetes:") and t != "kubernetes:core/v1:PersistentVolumeClaim":
        return "runs on the nodes priced above"
    return None


def _unlisted(r: Resource, a: Assumptions) -> CostLine:
    why = (
        _LOAD_BALANCER
        if r.type == "kubernetes:core/v1:Service"
        else f"{r.type} is not in the cost model: it may be billed"
    )
    return _unpriced(r, "not priced", why, a.today)


_TOTALS = ("hourly_desired", "hourly_max", "hourly_idle", "monthly")


def _say_foreign_currency(line: CostLine, a: Assumptions) -> CostLine:
    """A priced line quoted in another currency than the stack is billed in (the USD ACK fee
    on a mainland-China stack) says so: it is not converted, and what the account pays in its
    own currency for it is not confirmed."""
    if line.currency == a.currency or all(getattr(line, k) is None for k in _TOTALS):
        return line
    said = (
        f"quoted in {line.currency}, not converted: the stack's billing currency is taken to be "
        f"{a.currency}, and the {a.currency} price of this is not confirmed"
    )
    return replace(line, note="; ".join(n for n in (line.note, said) if n))


def estimate(view: StackView, today: dt.date | None = None) -> CostReport:
    a = assumptions(view, today)
    lines: list[CostLine] = []
    for resource in sorted(view.resources, key=lambda r: (r.type, r.name)):
        extractor = EXTRACTORS.get(resource.type)
        if extractor is not None:
            lines.extend(extractor(resource, view, a))
        elif not_billed(resource) is None:
            lines.append(_unlisted(resource, a))
    lines = [_say_foreign_currency(line, a) for line in lines]
    by_currency: dict[str, dict[str, float]] = {}
    unpriced: dict[str, int] = {}
    for key in _TOTALS:
        unpriced[key] = sum(1 for line in lines if getattr(line, key) is None)
        for line in lines:
            value = getattr(line, key)
            if value is not None:
                sums = by_currency.setdefault(line.currency, dict.fromkeys(_TOTALS, 0.0))
                sums[key] += value
    by_currency = {c: {k: round(v, 4) for k, v in t.items()} for c, t in by_currency.items()}
    totals: dict[str, float | None] = dict(
        by_currency.get(a.currency) or dict.fromkeys(_TOTALS, 0.0)
    )
    unknown = sum(1 for line in lines if line.monthly is None)
    return CostReport(
        cloud=view.cloud,
        lines=lines,
        assumptions=a,
        totals=totals,
        unknown=unknown,
        unpriced=unpriced,
        currency=a.currency,
        totals_by_currency=by_currency,
    )


@dataclass(frozen=True)
class Delta:
    """Head minus base for one figure. `usd` covers the lines priced on both sides (or on the
    only side they exist); `unknown` lists the lines whose change cannot be priced (added,
    removed or changed with no price on a side). Unpriced lines identical on both sides
    cancel out and are only counted (`unchanged_unpriced`)."""

    usd: float
    unknown: tuple[str, ...]
    unchanged_unpriced: int

    @property
    def exact(self) -> float | None:
        return None if self.unknown else self.usd


def _line_dicts(plan_cost: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    found: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for line in plan_cost.get("lines") or []:
        key = (
            str(line.get("resource")),
            str(line.get("type")),
            str(line.get("item") or line.get("what")),
        )
        found[key] = line
    return found


def _label(line: Mapping[str, Any]) -> str:
    return f"{line.get('resource')}: {line.get('what')}"


def delta(base: Mapping[str, Any], head: Mapping[str, Any]) -> dict[str, Delta]:
    """Per figure, head minus base, pairing lines by resource and item (both are
    `CostReport.to_json()` documents). A pair with an unpriced side is unknown: a price on
    one side and none on the other is not a saving of the whole price. `usd` is in the head's
    currency (`currency`, USD for documents from before currencies); a changed line priced in
    another currency, or in a different one on each side, is unknown too: amounts in two
    currencies are never subtracted or added."""
    old, new = _line_dicts(base), _line_dicts(head)
    currency = str(head.get("currency") or "USD")
    result: dict[str, Delta] = {}
    for figure in _TOTALS:
        usd, unknown, unchanged = 0.0, [], 0
        for key in sorted(set(old) | set(new)):
            before, after = old.get(key), new.get(key)
            b = None if before is None else before.get(figure)
            h = None if after is None else after.get(figure)
            sides = [
                str(line.get("currency") or "USD")
                for line, value in ((before, b), (after, h))
                if line is not None and value is not None
            ]
            if (b != h or len(set(sides)) > 1) and any(c != currency for c in sides):
                line = after if after is not None else before
                assert line is not None
                unknown.append(
                    f"{_label(line)} (changed, priced in {' and '.join(sorted(set(sides)))}): "
                    f"not added to a {currency} delta"
                )
                continue
            if before is not None and after is not None and b is None and h is None:
                if before.get("what") == after.get("what"):
                    unchanged += 1
                else:
                    unknown.append(f"{_label(after)} (was {before.get('what')}): no price")
                continue
            if (before is not None and b is None) or (after is not None and h is None):
                line = after if after is not None and h is None else before
                assert line is not None
                change = "added" if before is None else "removed" if after is None else "changed"
                unknown.append(f"{_label(line)} ({change}): no price")
                continue
            usd += (h or 0.0) - (b or 0.0)
        result[figure] = Delta(round(usd, 4), tuple(unknown), unchanged)
    return result
