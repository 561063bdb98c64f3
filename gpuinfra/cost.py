"""Cost estimate of a plan: per resource and in total, from the catalog and the fee table.

Every figure is an estimate from list prices (with their source and date), never a quote.
A price the catalog does not know is `None` and shows as "unknown": it is never guessed.
Each cloud's billable resource types plug in through `EXTRACTORS` (type token -> function).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from components import catalog
from components.catalog import fees
from components.catalog.fees import HOURS_PER_MONTH, Fee
from components.catalog.spot import spot_factor
from components.settings.schema import BY_NAME

from .planview import Resource, StackView

DISCLAIMER = (
    "Estimate from public list prices (on-demand; spot = on-demand x spot factor), not a "
    "quote: taxes, discounts, data transfer and request charges are left out."
)


@dataclass(frozen=True)
class Assumptions:
    gpu_hours_per_month: int
    storage_gb: int
    spot_factor: float | None
    spot_source: str
    today: dt.date


@dataclass(frozen=True)
class CostLine:
    """What one resource adds, in USD. None: unknown (`note` says why)."""

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


@dataclass
class CostReport:
    cloud: str
    lines: list[CostLine]
    assumptions: Assumptions
    totals: dict[str, float | None] = field(default_factory=dict)
    unknown: int = 0

    def to_json(self) -> dict[str, Any]:
        dates = sorted({line.price_date for line in self.lines})
        a = self.assumptions
        return {
            "estimate": True,
            "disclaimer": DISCLAIMER,
            "currency": "USD",
            "priceDates": dates,
            "assumptions": {
                "gpuHoursPerMonth": a.gpu_hours_per_month,
                "storageGb": a.storage_gb,
                "spotFactor": a.spot_factor,
                "spotFactorSource": a.spot_source,
                "hoursPerMonth": HOURS_PER_MONTH,
                "date": a.today.isoformat(),
            },
            "lines": [asdict(line) for line in self.lines],
            "totals": dict(self.totals),
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
    return Assumptions(
        gpu_hours_per_month=_int_setting(view, "costGpuHoursPerMonth"),
        storage_gb=_int_setting(view, "costStorageGb"),
        spot_factor=factor,
        spot_source=source,
        today=today or dt.date.today(),
    )


Extractor = Callable[[Resource, StackView, Assumptions], list[CostLine]]


def _fixed(resource: Resource, what: str, fee: Fee, count: float = 1.0) -> CostLine:
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


@dataclass(frozen=True)
class _NodePrice:
    usd_per_hour: float | None
    source: str
    date: str
    notes: list[str]


def _node_price(view: StackView, a: Assumptions, pool: _Pool) -> _NodePrice:
    """One node of the pool per hour: list price, times the spot factor for spot pools."""
    gpu = catalog.find(view.cloud, pool.instance_type)
    cpu_fee = fees.AWS_CPU_INSTANCES.get(pool.instance_type) if view.cloud == "aws" else None
    notes: list[str] = []
    if gpu is not None:
        on_demand, source, date = gpu.price.usd_per_hour, gpu.price.source, gpu.price.date
        if on_demand is None:
            notes.append(gpu.price.note)
    elif cpu_fee is not None:
        on_demand, source, date = cpu_fee.usd_per_hour, cpu_fee.source, cpu_fee.date
    else:
        on_demand, source, date = None, "not in the catalog", a.today.isoformat()
        notes.append(f"no price for {pool.instance_type} in the catalog or the fee table")
    node = on_demand
    if node is not None and pool.spot:
        if a.spot_factor is None:
            node = None
            notes.append(a.spot_source)
        else:
            node = node * a.spot_factor
            notes.append(f"spot = on-demand x {a.spot_factor:g}")
    if node is not None and pool.disk_gb and pool.disk_fee and pool.disk_fee.usd_per_hour:
        node += pool.disk_gb * pool.disk_fee.usd_per_hour
        notes.append(f"incl. {pool.disk_gb} GB root volume per node")
    return _NodePrice(node, source, date, notes)


def _pool_line(resource: Resource, view: StackView, a: Assumptions, pool: _Pool) -> CostLine:
    gpu = catalog.find(view.cloud, pool.instance_type)
    price = _node_price(view, a, pool)
    node, source, date, notes = price.usd_per_hour, price.source, price.date, list(price.notes)
    capacity = "spot" if pool.spot else "on-demand"
    size = f"{pool.min_nodes}/{pool.desired_nodes}/{pool.max_nodes}"
    if gpu is not None:
        what = f"GPU pool {size} (min/desired/max) x {pool.instance_type} ({capacity})"
        # Monthly: nodes held at min all month, plus the GPU hours the config budgets,
        # run on nodes with gpu_count GPUs each.
        node_hours = pool.min_nodes * HOURS_PER_MONTH + a.gpu_hours_per_month / gpu.gpu_count
        notes.append(
            f"monthly = min size all month + {a.gpu_hours_per_month} GPU hours "
            f"({gpu.gpu_count} GPU per node)"
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
    )


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# --- AWS -------------------------------------------------------------------------------------


def eks_control_plane_fee(version: str, today: dt.date) -> tuple[Fee, str]:
    end = fees.EKS_END_OF_STANDARD_SUPPORT.get(version)
    if end is None:
        return fees.EKS_STANDARD, f"Kubernetes {version} not in the EKS calendar table"
    if today > dt.date.fromisoformat(end):
        return fees.EKS_EXTENDED, (
            f"Kubernetes {version} left EKS standard support on {end}: extended support "
            "pricing applies; upgrade to return to $0.10/h"
        )
    return fees.EKS_STANDARD, f"Kubernetes {version} in standard support until {end}"


def _aws_cluster(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    version = str(r.inputs.get("version") or "")
    fee, why = eks_control_plane_fee(version, a.today)
    line = _fixed(r, f"EKS control plane ({version or 'default version'})", fee)
    return [CostLine(**{**asdict(line), "note": f"{why}. {fee.note}"})]


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
    )


def _storage(fee: Fee) -> Extractor:
    def extract(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
        line = _fixed(r, f"bucket storage at {a.storage_gb} GB (gpuinfra:costStorageGb)", fee)
        if fee.usd_per_hour is None:
            return [line]
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
            )
        ]

    return extract


def _fee(what: str, fee: Fee) -> Extractor:
    return lambda r, view, a: [_fixed(r, what, fee)]


# --- Alibaba Cloud ---------------------------------------------------------------------------


def _ack_cluster(r: Resource, view: StackView, a: Assumptions) -> list[CostLine]:
    spec = str(r.inputs.get("clusterSpec") or "ack.standard")
    if spec.startswith("ack.pro"):
        return [_fixed(r, f"ACK Pro cluster management ({spec})", fees.ACK_PRO)]
    basic = Fee(0.0, "cluster", "all", fees.ACK_PRO.source, fees.ACK_PRO.date, "Basic: no fee")
    return [_fixed(r, f"ACK cluster management ({spec})", basic)]


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
    return lambda r, view, a: [_pool_line(r, view, a, read(r, view))]


@dataclass(frozen=True)
class GpuHourPrice:
    """What one GPU of the stack's GPU pool costs per hour (its node's price / its GPUs)."""

    instance_type: str
    gpus_per_node: int
    usd: float | None
    note: str


def gpu_hour_price(view: StackView, a: Assumptions) -> GpuHourPrice | None:
    """None when the stack has no GPU pool (e.g. an existing cluster)."""
    for resource in sorted(view.resources, key=lambda r: r.name):
        read = POOLS.get(resource.type)
        if read is None:
            continue
        pool = read(resource, view)
        gpu = catalog.find(view.cloud, pool.instance_type)
        if gpu is None:
            continue
        price = _node_price(view, a, pool)
        usd = None if price.usd_per_hour is None else price.usd_per_hour / gpu.gpu_count
        return GpuHourPrice(pool.instance_type, gpu.gpu_count, usd, "; ".join(price.notes))
    return None


# --- GPU workstation (one VM, any cloud) -----------------------------------------------------


def _workstation(type_key: str, spot: Callable[[Mapping[str, Any]], bool]) -> Extractor:
    """One always-on GPU VM: a pool of exactly one node, priced from the catalog."""

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
                }
            )
        ]

    return extract


EXTRACTORS: dict[str, Extractor] = {
    "aws:ec2/instance:Instance": _workstation(
        "instanceType", lambda i: (i.get("instanceMarketOptions") or {}).get("marketType") == "spot"
    ),
    "alicloud:ecs/instance:Instance": _workstation(
        "instanceType", lambda i: str(i.get("spotStrategy") or "NoSpot") != "NoSpot"
    ),
    "tencentcloud:Instance/instance:Instance": _workstation(
        "instanceType", lambda i: i.get("instanceChargeType") == "SPOTPAID"
    ),
    "aws:eks/cluster:Cluster": _aws_cluster,
    "aws:eks/nodeGroup:NodeGroup": _pool(_aws_pool),
    "aws:ec2/natGateway:NatGateway": _fee("NAT gateway", fees.AWS_NAT_GATEWAY),
    "aws:ec2/eip:Eip": _fee("public IPv4 address", fees.AWS_PUBLIC_IPV4),
    "aws:kms/key:Key": _fee("KMS key", fees.AWS_KMS_KEY),
    "aws:s3/bucket:Bucket": _storage(fees.AWS_S3_STANDARD),
    "alicloud:cs/managedKubernetes:ManagedKubernetes": _ack_cluster,
    "alicloud:cs/nodePool:NodePool": _pool(_ack_pool),
    "alicloud:vpc/natGateway:NatGateway": _fee("NAT gateway", fees.ALICLOUD_NAT_GATEWAY),
    "alicloud:oss/bucket:Bucket": _storage(fees.ALICLOUD_OSS_STANDARD),
    "tencentcloud:Kubernetes/cluster:Cluster": _fee("TKE cluster management", fees.TKE_MANAGEMENT),
    "tencentcloud:Kubernetes/nodePool:NodePool": _pool(_tke_pool),
    "tencentcloud:Nat/gateway:Gateway": _fee("NAT gateway", fees.TENCENT_NAT_GATEWAY),
    "tencentcloud:Cos/bucket:Bucket": _storage(fees.TENCENT_COS_STANDARD),
    # Volcano Engine (issue 27)
    "volcenginecc:vke/cluster:Cluster": _fee("VKE cluster management", fees.VKE_MANAGEMENT),
    "volcenginecc:vke/nodePool:NodePool": _pool(_vke_pool),
    "volcenginecc:natgateway/ngw:Ngw": _fee("NAT gateway", fees.VOLCENGINE_NAT_GATEWAY),
    "volcenginecc:tos/bucket:Bucket": _storage(fees.VOLCENGINE_TOS_STANDARD),
}

_TOTALS = ("hourly_desired", "hourly_max", "hourly_idle", "monthly")


def estimate(view: StackView, today: dt.date | None = None) -> CostReport:
    a = assumptions(view, today)
    lines: list[CostLine] = []
    for resource in sorted(view.resources, key=lambda r: (r.type, r.name)):
        extractor = EXTRACTORS.get(resource.type)
        if extractor is not None:
            lines.extend(extractor(resource, view, a))
    totals: dict[str, float | None] = {}
    for key in _TOTALS:
        totals[key] = round(sum(getattr(line, key) or 0.0 for line in lines), 4)
    unknown = sum(1 for line in lines if line.monthly is None)
    return CostReport(cloud=view.cloud, lines=lines, assumptions=a, totals=totals, unknown=unknown)


def delta(base: Mapping[str, Any], head: Mapping[str, Any]) -> dict[str, float]:
    """Head minus base, per total (both `CostReport.to_json()["totals"]`)."""
    return {key: round((head.get(key) or 0.0) - (base.get(key) or 0.0), 4) for key in _TOTALS}
