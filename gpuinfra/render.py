"""Turns a recorded plan into what people and tools read: a `pulumi preview`-like tree, or JSON."""

from __future__ import annotations

from typing import Any

from .engine import Plan, RecordedResource

_STACK_TYPE = "pulumi:pulumi:Stack"


def display_type(type_: str) -> str:
    """`aws:ec2/vpc:Vpc` -> `aws:ec2:Vpc`, as the Pulumi CLI shows it."""
    parts = type_.split(":")
    if len(parts) == 3 and "/" in parts[1]:
        parts[1] = parts[1].split("/")[0]
    return ":".join(parts)


def tree(plan: Plan) -> str:
    by_parent: dict[str | None, list[RecordedResource]] = {}
    urns = {r.urn for r in plan.resources}
    for resource in plan.resources:
        parent = resource.parent if resource.parent in urns else None
        by_parent.setdefault(parent, []).append(resource)

    rows: list[tuple[str, str]] = [(display_type(_STACK_TYPE), f"{plan.project}-{plan.stack}")]

    def walk(parent: str | None, indent: str) -> None:
        # Registration order depends on when outputs resolve: sort for a stable display.
        children = sorted(by_parent.get(parent, []), key=lambda r: (r.type, r.name))
        for i, child in enumerate(children):
            last = i == len(children) - 1
            branch = "└─ " if last else "├─ "
            name = child.name + ("  [protected]" if child.protect else "")
            rows.append((indent + branch + display_type(child.type), name))
            walk(child.urn, indent + ("   " if last else "│  "))

    walk(None, "")
    width = max(len(t) for t, _ in rows) + 3
    lines = [f"Previewing update ({plan.stack}), offline: mock engine, no cloud calls", ""]
    lines.append(f"     {'Type'.ljust(width)}Name")
    lines += [f" +   {t.ljust(width)}{n}" for t, n in rows]
    lines += ["", "Outputs:"]
    for key in sorted(plan.outputs):
        value = "[secret]" if key in plan.secret_outputs else _short(plan.outputs[key])
        lines.append(f"    {key}: {value}")
    count = len(plan.resources) + 1
    lines += ["", "Resources:", f"    + {count} to create"]
    return "\n".join(lines)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def plan_json(plan: Plan, cloud: str) -> dict[str, Any]:
    from .secret_digest import digest

    return {
        "project": plan.project,
        "stack": plan.stack,
        "cloud": cloud,
        "config": dict(sorted(plan.config.items())),
        "resources": [
            {
                "urn": r.urn,
                "type": r.type,
                "name": r.name,
                "id": r.id,
                "parent": r.parent,
                "protect": r.protect,
                **({"replaceOnChanges": r.replace_on_changes} if r.replace_on_changes else {}),
                "inputs": {
                    key: "[secret]" if key in r.secret_inputs else value
                    for key, value in r.inputs.items()
                },
                # Keyed digests, so the diff sees a changed secret (gpuinfra.secret_digest).
                **(
                    {"secretDigests": {k: digest(r.inputs.get(k)) for k in r.secret_inputs}}
                    if r.secret_inputs
                    else {}
                ),
            }
            for r in sorted(plan.resources, key=lambda r: r.urn)
        ],
        "outputs": {
            key: "[secret]" if key in plan.secret_outputs else value
            for key, value in sorted(plan.outputs.items())
        },
        "deployFrom": plan.outputs.get("deployFrom"),
    }
