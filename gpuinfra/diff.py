"""Plan diff: what a change adds, removes and alters, input by input, and what it costs.

Both sides are `gpuinfra preview --json` documents, so a pull request's plan can be compared
with the base branch's without a Pulumi backend or state.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from . import cost
from .planview import from_json

_MISSING = "<absent>"


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """`{"scalingConfig": {"maxSize": 2}}` -> `("scalingConfig.maxSize", 2)`; lists by index."""
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            yield from flatten(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from flatten(item, f"{path}[{i}]")
    else:
        yield path, value


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    before = dict(flatten(old.get("inputs") or {}))
    after = dict(flatten(new.get("inputs") or {}))
    before["(protect)"], after["(protect)"] = old.get("protect"), new.get("protect")
    return [
        {"path": path, "old": before.get(path, _MISSING), "new": after.get(path, _MISSING)}
        for path in sorted(set(before) | set(after))
        if before.get(path, _MISSING) != after.get(path, _MISSING)
    ]


def replaces(resource: Mapping[str, Any], changes: list[dict[str, Any]]) -> bool:
    """True when Pulumi replaces rather than updates: a changed input lies under one of the
    resource's `replaceOnChanges` paths (`*`: any input)."""
    paths = resource.get("replaceOnChanges") or []
    return any(
        p == "*" or c["path"] == p or c["path"].startswith((f"{p}.", f"{p}["))
        for p in paths
        for c in changes
        if c["path"] != "(protect)"
    )


def _cost_totals(plan: Mapping[str, Any], today: dt.date | None) -> dict[str, Any]:
    given = (plan.get("cost") or {}).get("totals")
    if given is not None:
        return dict(given)
    return dict(cost.estimate(from_json(plan), today).totals)


def diff_plans(
    base: Mapping[str, Any], head: Mapping[str, Any], today: dt.date | None = None
) -> dict[str, Any]:
    old = {r["urn"]: r for r in base.get("resources") or []}
    new = {r["urn"]: r for r in head.get("resources") or []}

    def brief(r: Mapping[str, Any]) -> dict[str, Any]:
        return {"urn": r["urn"], "type": r["type"], "name": r["name"]}

    changed = []
    for urn in sorted(set(old) & set(new)):
        changes = _changes(old[urn], new[urn])
        if changes:
            entry = {**brief(new[urn]), "changes": changes}
            if replaces(new[urn], changes):
                entry["replace"] = True
            changed.append(entry)
    base_totals, head_totals = _cost_totals(base, today), _cost_totals(head, today)
    return {
        "added": [brief(new[u]) for u in sorted(set(new) - set(old))],
        "removed": [brief(old[u]) for u in sorted(set(old) - set(new))],
        "changed": changed,
        "cost": {
            "estimate": True,
            "base": base_totals,
            "head": head_totals,
            "delta": cost.delta(base_totals, head_totals),
        },
    }


def has_changes(d: Mapping[str, Any]) -> bool:
    return bool(d["added"] or d["removed"] or d["changed"])
