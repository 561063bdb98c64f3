"""GPU pools: the `gpuPools` list, or the one pool the flat `gpuPool*` keys describe.

A stack has one or more GPU node pools, each with its own instance type, capacity type, size
and labels. `gpuPools` (a list of mappings, like `trainingJobs`) names them; every problem is
named `gpuinfra:gpuPools[i].field`. A stack file without `gpuPools` keeps working: its flat
`gpuPool*` keys describe one pool named `gpu`, with the names, labels and taint it always had,
so an update creates and replaces nothing. The two forms do not mix: a flat per-pool key next to
`gpuPools` is refused with the field it becomes.

Per-cloud fields of a pool, and why each is refused elsewhere:
- `extraInstanceTypes` (Alibaba Cloud): more types with the same GPUs in one ACK pool. EKS
  wants same-size types under the Cluster Autoscaler, and no two AWS types share GPU model,
  count, vCPU and memory (README, "What the AWS stack creates"); TKE and VKE pools here take
  one type. Another pool is the way to a second type there.
- `spotStrategy`, `onDemandFallback` (Alibaba Cloud): ECS's spot bidding and ACK's
  pay-as-you-go compensation.
- `spotMaxPrice`: Alibaba Cloud with `SpotWithPriceLimit`; Tencent Cloud, required for a spot
  pool. EKS spot nodes pay the spot price (at most on-demand) and VKE bids `SpotAsPriceGo`:
  no limit to set.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import cast

from components import catalog

from .clouds import RULES
from .model import CapacityType, GpuPoolSettings, PoolSize, SpotStrategy
from .reader import ConfigReader
from .schema import BY_NAME

LIST_KEY = "gpuPools"
LEGACY_POOL_NAME = "gpu"
"""The pool the flat `gpuPool*` keys describe: the name single-pool stacks always had."""
RESERVED_POOL_NAMES = ("system",)
"""The CPU system pool's name: its node label and resources' names."""
POOL_NAME_MAX = 16
"""Pool names become resource names `<namePrefix>-<pool>` (namePrefix: up to 32). The longest
derived name is an EKS node group's: `<namePrefix>-<pool>-nodes` plus the `-xxxxxxx` Pulumi
appends, which fits EKS's 63 characters at 16 (32 + 1 + 16 + 6 + 8). TKE node pool names
(the pool's own name, at most 25) and VKE's (2 to 64) fit too."""
_POOL_NAME = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
KUBELET_ALLOWED_PREFIXES = ("kubelet.kubernetes.io", "node.kubernetes.io")
"""The only `*kubernetes.io`/`*k8s.io` label prefixes a kubelet may give its own node
(NodeRestriction admission, kubernetes.io/docs/reference/access-authn-authz/admission-controllers
/#noderestriction); a node pool label under another such prefix never reaches the node."""
AWS_LABEL_KEY_MAX = 82
"""The Cluster Autoscaler's scale-from-zero tag for a label is
`k8s.io/cluster-autoscaler/node-template/label/<key>` (46 characters before the key), and an
Auto Scaling group tag key has at most 128 (provider rule aws.autoscaling_tag_limits)."""
MAX_POOLS = 10

SPOT_STRATEGIES: tuple[SpotStrategy, ...] = ("SpotAsPriceGo", "SpotWithPriceLimit")
"""ECS spot strategies of an ACK pool (an on-demand pool is `NoSpot`)."""
ALICLOUD_MAX_SYSTEM_DISK_GB = 2048
"""ECS system disks (ESSD PL1, the provider's default level) take 20 to 2048 GiB (ECS
RunInstances, `SystemDisk.Size`)."""
_ALI_PRICE = re.compile(r"^\d+(\.\d+)?$")

LEGACY_KEYS: dict[str, str] = {
    "instanceType": "gpuPoolInstanceType",
    "gpuModel": "gpuPoolGpuModel",
    "gpuCount": "gpuPoolGpuCount",
    "capacityType": "gpuPoolCapacityType",
    "minNodes": "gpuPoolMinNodes",
    "desiredNodes": "gpuPoolDesiredNodes",
    "maxNodes": "gpuPoolMaxNodes",
    "diskSizeGb": "gpuPoolDiskSizeGb",
    "extraInstanceTypes": "gpuPoolExtraInstanceTypes",
    "spotMaxPrice": "gpuPoolSpotMaxPrice",
    "spotStrategy": "gpuPoolSpotStrategy",
    "onDemandFallback": "gpuPoolOnDemandFallback",
}
"""Each `gpuPools` entry field and the flat key that gives it for the single pool."""
POOL_FIELDS = ("name", *LEGACY_KEYS, "labels")
"""Every field a `gpuPools` entry takes."""
_CLOUD_ONLY: dict[str, tuple[tuple[str, ...], str]] = {
    "extraInstanceTypes": (
        ("alicloud",),
        "one instance type per pool here (README: EKS wants same-size types under the Cluster "
        "Autoscaler, and none share GPUs and size; TKE and VKE pools here take one type); add "
        "another pool for another type",
    ),
    "spotStrategy": (("alicloud",), "Alibaba Cloud's ECS spot bidding"),
    "onDemandFallback": (("alicloud",), "ACK's pay-as-you-go compensation of spot stock"),
    "spotMaxPrice": (
        ("alicloud", "tencentcloud"),
        "spot nodes here pay the market price, at most the on-demand price: no limit to set",
    ),
}
_WHY_HERE: dict[tuple[str, str], str] = {
    ("spotMaxPrice", "volcengine"): "VKE node pools bid SpotAsPriceGo only (no price limit)",
    ("spotMaxPrice", "aws"): "EKS spot nodes pay the spot price, at most the on-demand price",
}
"""Where a cloud has its own reason for refusing a field."""
"""Pool fields only some clouds take: (those clouds, what the field is / why not elsewhere)."""


def _key(r: ConfigReader, index: int, field: str) -> str:
    if LIST_KEY in r.raw:
        return f"gpuinfra:{LIST_KEY}[{index}].{field}"
    return f"gpuinfra:{LEGACY_KEYS.get(field, LIST_KEY)}"


def pool_key(r: ConfigReader, pool: str, field: str) -> str:
    """The key a problem with `pool`'s `field` is reported under, in the form the stack uses
    (`gpuinfra:gpuPools[i].field` or the flat key)."""
    index = 0
    if LIST_KEY in r.raw:
        try:
            entries = json.loads(r.raw[LIST_KEY])
        except json.JSONDecodeError:
            entries = []
        names = [e.get("name") if isinstance(e, dict) else None for e in entries or []]
        index = names.index(pool) if pool in names else 0
    return _key(r, index, field)


class _Fields:
    """One pool's fields as typed values; problems name the pool's own keys."""

    def __init__(self, r: ConfigReader, index: int) -> None:
        self.r, self.index = r, index
        self.ok = True

    def key(self, field: str) -> str:
        return _key(self.r, self.index, field)

    def problem(self, field: str, value: object, allowed: str) -> None:
        self.ok = False
        self.r.problem(self.key(field), value, allowed)

    def given(self, field: str) -> bool:
        raise NotImplementedError

    def raw(self, field: str) -> object:
        raise NotImplementedError

    def text(self, field: str) -> str:
        raise NotImplementedError

    def integer(self, field: str) -> int:
        raise NotImplementedError

    def boolean(self, field: str) -> bool:
        raise NotImplementedError

    def strings(self, field: str) -> tuple[str, ...]:
        raise NotImplementedError

    def mapping(self, field: str) -> dict[str, str]:
        raise NotImplementedError


class _FlatKeys(_Fields):
    """The single pool of the flat `gpuPool*` keys (strings, as Pulumi hands config over)."""

    def given(self, field: str) -> bool:
        return field in LEGACY_KEYS and LEGACY_KEYS[field] in self.r.raw

    def raw(self, field: str) -> object:
        return self.r.raw.get(LEGACY_KEYS[field])

    def text(self, field: str) -> str:
        return self.r.string(LEGACY_KEYS[field])

    def integer(self, field: str) -> int:
        return self.r.integer(LEGACY_KEYS[field])

    def boolean(self, field: str) -> bool:
        return self.r.boolean(LEGACY_KEYS[field])

    def strings(self, field: str) -> tuple[str, ...]:
        return self.r.strings(LEGACY_KEYS[field])

    def mapping(self, field: str) -> dict[str, str]:
        return {}


class _Entry(_Fields):
    """One `gpuPools` entry (JSON values); defaults are those of the flat keys."""

    def __init__(self, r: ConfigReader, index: int, entry: Mapping[str, object]) -> None:
        super().__init__(r, index)
        self.entry = entry

    def given(self, field: str) -> bool:
        return field in self.entry

    def raw(self, field: str) -> object:
        return self.entry.get(field)

    def _default(self, field: str) -> object:
        return BY_NAME[LEGACY_KEYS[field]].default

    def text(self, field: str) -> str:
        value = self.entry.get(field)
        if value is None:
            return str(self._default(field))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)  # a YAML number where a text is expected (a price)
        if not isinstance(value, str):
            self.problem(field, value, "must be a string")
            return str(self._default(field))
        return value.strip()

    def integer(self, field: str) -> int:
        value = self.entry.get(field)
        if value is None:
            return cast(int, self._default(field))
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(field, value, "must be a whole number")
            return cast(int, self._default(field))
        return value

    def boolean(self, field: str) -> bool:
        value = self.entry.get(field)
        if value is None:
            return cast(bool, self._default(field))
        if not isinstance(value, bool):
            self.problem(field, value, "must be true or false")
            return cast(bool, self._default(field))
        return value

    def strings(self, field: str) -> tuple[str, ...]:
        value = self.entry.get(field)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(field, value, "must be a list of strings")
            return ()
        return tuple(v.strip() for v in value)

    def mapping(self, field: str) -> dict[str, str]:
        value = self.entry.get(field)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            self.problem(field, value, 'must be a mapping of label: "value" (strings)')
            return {}
        return dict(value)


def parse_gpu_pools(r: ConfigReader, cloud: str) -> tuple[GpuPoolSettings, ...]:
    """The stack's GPU pools, each checked against the catalog and `cloud`'s limits."""
    if LIST_KEY not in r.raw:
        pool = _pool(_FlatKeys(r, 0), cloud, name=LEGACY_POOL_NAME)
        return () if pool is None else (replace(pool, flat=True),)
    for field, key in LEGACY_KEYS.items():
        if key in r.raw:
            r.problem(
                key,
                r.raw[key],
                f"a setting of one GPU pool: with gpuinfra:{LIST_KEY} set, give it on each entry "
                f"as `{field}` (gpuinfra:{LIST_KEY}[i].{field}) and remove {key}",
            )
    entries = r.objects(LIST_KEY)
    if not entries and not r.problems:
        r.problem(
            LIST_KEY,
            [],
            "list at least one pool (name and instanceType, or gpuModel and gpuCount), or remove "
            "it to describe one pool with the gpuPool* keys",
        )
    if len(entries) > MAX_POOLS:
        r.problem(LIST_KEY, f"{len(entries)} pools", f"at most {MAX_POOLS} GPU pools per stack")
    pools: list[GpuPoolSettings] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        fields = _Entry(r, index, entry)
        for field in sorted(set(entry) - set(POOL_FIELDS)):
            fields.problem(field, entry[field], "unknown field; allowed: " + ", ".join(POOL_FIELDS))
        name = _name(fields, seen)
        pool = _pool(fields, cloud, name=name)
        if pool is not None and fields.ok:
            pools.append(pool)
    return tuple(pools)


def _name(fields: _Entry, seen: set[str]) -> str:
    name = fields.entry.get("name")
    if (
        not isinstance(name, str)
        or not 2 <= len(name) <= POOL_NAME_MAX
        or not _POOL_NAME.match(name)
    ):
        fields.problem(
            "name",
            name,
            f"required: 2 to {POOL_NAME_MAX} lowercase letters, digits and '-', starting with a "
            "letter and ending with a letter or digit (it names the pool's resources, node label "
            "and taint)",
        )
        return f"pool-{fields.index}"
    if name in RESERVED_POOL_NAMES:
        fields.problem("name", name, "is the CPU system pool's name; choose another")
    elif name in seen:
        fields.problem("name", name, "another GPU pool has this name; pool names are unique")
    seen.add(name)
    return name


def _instance(f: _Fields, cloud: str) -> catalog.GpuInstanceType | None:
    instance_type = f.text("instanceType")
    model = f.text("gpuModel")
    count = f.integer("gpuCount")
    models = ", ".join(catalog.known_models(cloud))
    if count < 1:
        f.problem("gpuCount", count, "must be 1 or more")
        return None
    if instance_type:
        entry = catalog.find(cloud, instance_type)
        if entry is None:
            elsewhere = catalog.clouds_offering(instance_type)
            where = f" (it is a {', '.join(elsewhere)} type)" if elsewhere else ""
            known = ", ".join(e.instance_type for e in catalog.instance_types(cloud))
            f.problem(
                "instanceType",
                instance_type,
                f"not a GPU instance type the catalog knows on {cloud}{where}; known: {known}",
            )
            return None
        if model and not catalog.matches_model(entry.gpu_model, model):
            f.problem(
                "gpuModel",
                model,
                f"{instance_type} has {entry.gpu_model} GPUs; drop "
                f"{_short(f, 'gpuModel')} or make the two agree",
            )
            return None
        return entry
    if model:
        entry = catalog.pick(cloud, model, count)
        if entry is None:
            counts = sorted(
                {
                    e.gpu_count
                    for e in catalog.instance_types(cloud)
                    if catalog.matches_model(e.gpu_model, model)
                }
            )
            allowed = (
                f"{model} comes with {', '.join(map(str, counts))} GPUs per instance on {cloud} "
                f"({_short(f, 'gpuCount')})"
                if counts
                else f"no {cloud} instance type in the catalog has {model}; known models: {models}"
            )
            f.problem("gpuModel", model, allowed)
        return entry
    example = next(iter(catalog.instance_types(cloud)), None)
    f.problem(
        "instanceType",
        None,
        f"set {_short(f, 'instanceType')} (e.g. "
        f"{example.instance_type if example else 'a catalog type'}) or {_short(f, 'gpuModel')} "
        f"({models})",
    )
    return None


def _short(f: _Fields, field: str) -> str:
    """How a message names a sibling field: the flat key, or the entry's field."""
    return LEGACY_KEYS[field] if isinstance(f, _FlatKeys) else field


def _size(f: _Fields) -> PoolSize:
    lo = f.integer("minNodes")
    mid = f.integer("desiredNodes") if f.given("desiredNodes") or isinstance(f, _FlatKeys) else lo
    hi = f.integer("maxNodes")
    ok = True
    for field, value in (("minNodes", lo), ("desiredNodes", mid), ("maxNodes", hi)):
        if value < 0:
            f.problem(field, value, "must be 0 or more")
            ok = False
    if ok and lo > mid:
        f.problem("minNodes", lo, f"must not exceed {_short(f, 'desiredNodes')} ({mid})")
    if ok and mid > hi:
        f.problem("desiredNodes", mid, f"must not exceed {_short(f, 'maxNodes')} ({hi})")
    if ok and hi < 1:
        f.problem("maxNodes", hi, "must be 1 or more")
    return PoolSize(min_nodes=lo, desired_nodes=mid, max_nodes=hi)


def _labels(f: _Fields, cloud: str) -> dict[str, str]:
    labels = f.mapping("labels")
    for key, value in labels.items():
        if len(key) > 316 or not _LABEL_KEY.match(key) or len(key.rsplit("/", 1)[-1]) > 63:
            f.problem("labels", key, "not a Kubernetes label key ([prefix/]name, name <= 63)")
        elif _reserved_label(key):
            f.problem(
                "labels",
                key,
                "gpuinfra.io/ labels are set by gpuinfra, and a kubelet may not give its node "
                "other kubernetes.io/ or k8s.io/ labels than kubelet.kubernetes.io/ and "
                "node.kubernetes.io/ ones; use your own prefix",
            )
        elif cloud == "aws" and len(key) > AWS_LABEL_KEY_MAX:
            f.problem(
                "labels",
                key,
                f"at most {AWS_LABEL_KEY_MAX} characters on AWS (the Cluster Autoscaler's "
                "scale-from-zero tag for it must fit an Auto Scaling group tag key, 128)",
            )
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            f.problem(
                "labels", f"{key}: {value}", "label values are at most 63 letters, digits, '-', "
                "'_' or '.', starting and ending with a letter or digit",
            )  # fmt: skip
    return labels


def _reserved_label(key: str) -> bool:
    prefix = key.split("/", 1)[0] if "/" in key else ""
    if prefix == "gpuinfra.io" or prefix.endswith(".gpuinfra.io"):
        return True
    kube = prefix in ("kubernetes.io", "k8s.io") or prefix.endswith((".kubernetes.io", ".k8s.io"))
    return kube and prefix not in KUBELET_ALLOWED_PREFIXES


def _pool(f: _Fields, cloud: str, *, name: str) -> GpuPoolSettings | None:
    entry = _instance(f, cloud)
    capacity = cast(CapacityType, f.text("capacityType"))
    if capacity not in ("spot", "onDemand"):
        f.problem("capacityType", capacity, "allowed: spot, onDemand")
        capacity = "spot"
    size = _size(f)
    disk = f.integer("diskSizeGb")
    if not 50 <= disk <= 16384:
        f.problem("diskSizeGb", disk, "must be between 50 and 16384 (GB)")
    elif cloud == "alicloud" and disk > ALICLOUD_MAX_SYSTEM_DISK_GB:
        f.problem(
            "diskSizeGb",
            disk,
            f"an ECS system disk holds at most {ALICLOUD_MAX_SYSTEM_DISK_GB} GiB",
        )
    labels = _labels(f, cloud)
    for field, (clouds, why) in _CLOUD_ONLY.items():
        if f.given(field) and cloud not in clouds:
            title = RULES[cloud].title if cloud in RULES else cloud
            reason = _WHY_HERE.get((field, cloud), why)
            f.problem(field, f.raw(field), f"not used on {title} ({reason}); remove it")
    spot = capacity == "spot"
    strategy: SpotStrategy = "NoSpot"
    price: str | None = None
    extra: tuple[str, ...] = ()
    if cloud == "alicloud":
        strategy = cast(SpotStrategy, f.text("spotStrategy"))
        if strategy not in SPOT_STRATEGIES:
            f.problem("spotStrategy", strategy, "allowed: " + ", ".join(SPOT_STRATEGIES))
            strategy = "SpotAsPriceGo"
        price = _alicloud_spot_price(f, strategy if spot else None)
        strategy = strategy if spot else "NoSpot"
        extra = _extra_instance_types(f, entry)
    elif cloud == "tencentcloud":
        price = _tencent_spot_max_price(f, capacity)
    if entry is None:
        return None
    return GpuPoolSettings(
        name=name,
        instance=entry,
        capacity_type=capacity,
        size=size,
        disk_size_gb=disk,
        extra_instance_types=extra,
        labels=labels,
        spot_max_price=price,
        spot_strategy=strategy,
        on_demand_fallback=f.boolean("onDemandFallback") if cloud == "alicloud" else False,
    )


# --- Alibaba Cloud ---------------------------------------------------------------------------


def _alicloud_spot_price(f: _Fields, strategy: str | None) -> str | None:
    """`strategy` is None for an on-demand pool."""
    price = f.text("spotMaxPrice")
    if strategy == "SpotWithPriceLimit":
        if not price:
            f.problem(
                "spotMaxPrice",
                None,
                f"required with {_short(f, 'spotStrategy')} SpotWithPriceLimit: the most to pay "
                "per instance-hour in the account's billing currency, e.g. 2.5",
            )
            return None
    elif price:
        why = (
            f"{_short(f, 'capacityType')} is onDemand"
            if strategy is None
            else f"{_short(f, 'spotStrategy')} is {strategy}"
        )
        f.problem(
            "spotMaxPrice",
            price,
            f"only valid with {_short(f, 'spotStrategy')} SpotWithPriceLimit ({why}); remove it "
            f"or set {_short(f, 'spotStrategy')} to SpotWithPriceLimit",
        )
        return None
    if not price:
        return None
    if not _ALI_PRICE.match(price) or float(price) <= 0:
        f.problem(
            "spotMaxPrice", price, "must be a positive decimal price per instance-hour, e.g. 2.5"
        )
        return None
    return price


def _extra_instance_types(f: _Fields, base: catalog.GpuInstanceType | None) -> tuple[str, ...]:
    """More types for the same ACK pool: spot capacity comes from whichever has stock.

    Each must give the same GPUs (model and count) as the pool's type, so that Jobs sized for
    one node fit on any node the pool gets.
    """
    extra = f.strings("extraInstanceTypes")
    if base is None:
        return extra
    same = [
        e.instance_type
        for e in catalog.instance_types("alicloud")
        if e.gpu_model == base.gpu_model
        and e.gpu_count == base.gpu_count
        and e.instance_type != base.instance_type
    ]
    seen: set[str] = set()
    for name in extra:
        entry = catalog.find("alicloud", name)
        if name == base.instance_type or name in seen:
            f.problem("extraInstanceTypes", name, "listed twice (or is the pool's type)")
        elif entry is None:
            elsewhere = catalog.clouds_offering(name)
            where = f" (it is a {', '.join(elsewhere)} type)" if elsewhere else ""
            f.problem(
                "extraInstanceTypes",
                name,
                f"not a GPU instance type the catalog knows on alicloud{where}; types with "
                f"{base.gpu_count}x {base.gpu_model} like the pool's: {', '.join(same) or 'none'}",
            )
        elif entry.gpu_model != base.gpu_model or entry.gpu_count != base.gpu_count:
            f.problem(
                "extraInstanceTypes",
                name,
                f"has {entry.gpu_count}x {entry.gpu_model}; the pool's {base.instance_type} has "
                f"{base.gpu_count}x {base.gpu_model}; same GPUs: {', '.join(same) or 'none'}",
            )
        seen.add(name)
    return extra


# --- Tencent Cloud ---------------------------------------------------------------------------


def _tencent_spot_max_price(f: _Fields, capacity_type: str) -> str | None:
    """A spot pool's launch configuration always sends SpotOptions with this price, an empty
    one too (terraform-provider-tencentcloud@v1.82.42
    tencentcloud/services/tke/resource_tc_kubernetes_node_pool_extension.go:1084-1093), and
    the provider documents that SPOTPAID needs both `spot_instance_type` and `spot_max_price`
    (resource_tc_kubernetes_node_pool.go:365-370): so a spot pool needs a price."""
    price = f.text("spotMaxPrice")
    if not price:
        if capacity_type == "spot":
            f.problem(
                "spotMaxPrice",
                None,
                "required for a spot GPU pool on Tencent Cloud (TKE sends the price with every "
                "spot request): the most to pay per GPU node hour, e.g. 3.00 (the on-demand "
                f"price caps what you pay anyway), or set {_short(f, 'capacityType')} to onDemand",
            )
        return None
    if capacity_type != "spot":
        f.problem("spotMaxPrice", price, f"only applies when {_short(f, 'capacityType')} is spot")
        return None
    try:
        valid = Decimal(price) > 0
    except InvalidOperation:
        valid = False
    if not valid:
        f.problem(
            "spotMaxPrice",
            price,
            "must be a positive price per hour such as 1.50 (a decimal number)",
        )
        return None
    return price
