"""Plan diff: what a change adds, removes, updates and replaces, input by input, and what it
costs.

Both sides are `gpuinfra preview --json` documents, so a pull request's plan can be compared
with the base branch's without a Pulumi backend or state. Whether a change replaces its
resource comes from the provider's ForceNew fields (`provider_rules.force_new`); a replace
or delete of a `protect`ed resource is marked blocked, because Pulumi refuses it. Secret
inputs are compared by their keyed digests (`secret_digest`) and never printed.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from typing import Any

from . import cost
from .planview import from_json
from .provider_rules.force_new import covers, replacement

_MISSING = "<absent>"
SECRET = "[secret]"

UPDATE, REPLACE, BLOCKED = "update", "replace", "replace-blocked"
"""Actions of a changed resource. BLOCKED: a replace of a protected resource, which Pulumi
refuses (it would have to delete the resource first)."""


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


def _json_document(value: Any) -> Any:
    """A JSON object or array held in a string (IAM policies, ...), else None."""
    if not isinstance(value, str) or not value.lstrip().startswith(("{", "[")):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) and parsed else None


def _focused(path: str, old: Any, new: Any) -> list[dict[str, Any]]:
    """One change, or for two JSON documents the leaves that differ (`policy{Statement[0]}`),
    so a one-word change in a long policy shows as that word, not two cut-off strings."""
    old_doc, new_doc = _json_document(old), _json_document(new)
    if old_doc is None or new_doc is None:
        return [{"path": path, "old": old, "new": new}]
    before, after = dict(flatten(old_doc)), dict(flatten(new_doc))
    return [
        {
            "path": f"{path}{{{inner}}}",
            "old": before.get(inner, _MISSING),
            "new": after.get(inner, _MISSING),
        }
        for inner in sorted(set(before) | set(after))
        if before.get(inner, _MISSING) != after.get(inner, _MISSING)
    ]


def _secret_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    before = old.get("secretDigests") or {}
    after = new.get("secretDigests") or {}
    return [
        {"path": key, "old": SECRET, "new": SECRET, "secret": True}
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    before = dict(flatten(old.get("inputs") or {}))
    after = dict(flatten(new.get("inputs") or {}))
    before["(protect)"], after["(protect)"] = old.get("protect"), new.get("protect")
    found: list[dict[str, Any]] = []
    for path in sorted(set(before) | set(after)):
        b, a = before.get(path, _MISSING), after.get(path, _MISSING)
        if b != a:
            found.extend(_focused(path, b, a))
    return found + _secret_changes(old, new)


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


def _changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any] | None:
    changes = _changes(old, new)
    if not changes:
        return None
    paths = [c["path"].split("{", 1)[0] for c in changes if c["path"] != "(protect)"]
    found = replacement(new["type"], old.get("inputs") or {}, new.get("inputs") or {}, paths)
    entry: dict[str, Any] = {**_brief(new), "action": UPDATE, "changes": changes}
    if found is not None:
        # Pulumi refuses when both the state and the program protect it (unprotect-and-replace
        # in one update is allowed): pulumi/pulumi pkg/resource/deploy/step_generator.go:1957.
        blocked = bool(old.get("protect")) and bool(new.get("protect"))
        entry["action"] = BLOCKED if blocked else REPLACE
        entry["replaceBecause"] = list(found.fields) + list(found.reasons)
        entry["replaceSource"] = found.source
    elif replaces(new, changes):
        # The program asked for it (training Jobs: a Job's pod template is immutable).
        entry["action"] = REPLACE
        entry["replaceBecause"] = [f"replaceOnChanges {new.get('replaceOnChanges')}"]
        entry["replaceSource"] = "the resource's replaceOnChanges option"
    elif not covers(new["type"]) and new["type"].split(":")[0] in _PROVIDERS:
        entry["replaceUnknown"] = True
    return entry


_PROVIDERS = ("aws", "alicloud", "tencentcloud", "volcenginecc", "kubernetes")


def _brief(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"urn": r["urn"], "type": r["type"], "name": r["name"]}


def _cost_doc(plan: Mapping[str, Any], today: dt.date | None) -> dict[str, Any]:
    given = plan.get("cost")
    if given is not None and "lines" in given:
        return dict(given)
    return cost.estimate(from_json(plan), today).to_json()


def diff_plans(
    base: Mapping[str, Any], head: Mapping[str, Any], today: dt.date | None = None
) -> dict[str, Any]:
    old = {r["urn"]: r for r in base.get("resources") or []}
    new = {r["urn"]: r for r in head.get("resources") or []}
    changed = [c for urn in sorted(set(old) & set(new)) if (c := _changed(old[urn], new[urn]))]
    removed = []
    for urn in sorted(set(old) - set(new)):
        entry = _brief(old[urn])
        if old[urn].get("protect"):
            # Pulumi refuses to delete a protected resource: deploy/step.go:644.
            entry["blocked"] = True
        removed.append(entry)
    base_cost, head_cost = _cost_doc(base, today), _cost_doc(head, today)
    deltas = cost.delta(base_cost, head_cost)
    return {
        "added": [_brief(new[u]) for u in sorted(set(new) - set(old))],
        "removed": removed,
        "changed": changed,
        "blocked": sum(c["action"] == BLOCKED for c in changed)
        + sum(bool(r.get("blocked")) for r in removed),
        "cost": {
            "estimate": True,
            "currency": head_cost.get("currency") or "USD",
            "base": base_cost.get("totals") or {},
            "head": head_cost.get("totals") or {},
            "delta": {k: d.exact for k, d in deltas.items()},
            "deltaPriced": {k: d.usd for k, d in deltas.items()},
            "deltaUnknown": {k: list(d.unknown) for k, d in deltas.items()},
            "unchangedUnpriced": deltas["monthly"].unchanged_unpriced,
        },
    }


def has_changes(d: Mapping[str, Any]) -> bool:
    return bool(d["added"] or d["removed"] or d["changed"])
