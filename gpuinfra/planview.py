"""One read-only view of a plan for the cost estimate, the policy rules and the diff.

It is built from a recorded plan (the preview), from a `--json` plan file (the diff's base,
hand-edited plans) or from CrossGuard's resources (the policy pack), so each analysis is
written once against plain data: type token, name, engine (camelCase) inputs, `protect`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the policy pack imports this module without the mock engine
    from .engine import Plan


class _Unknown:
    """A value not known yet (a real preview's ids, ARNs, outputs of resources to create).
    Equal to nothing but itself and false, so a rule never mistakes it for a match."""

    def __repr__(self) -> str:
        return "<unknown>"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()
"""Where the policy pack's stack view puts an unknown value (resource checks never see it:
they read pulumi-policy's proxies, which raise on an unknown value instead)."""

try:  # what pulumi-policy's proxies raise on reading an unknown value (the pack has it)
    from pulumi_policy.proxy import UnknownValueError as _UnknownReadError
except ImportError:  # the offline preview runs without pulumi-policy: nothing raises it

    class _UnknownReadError(Exception):  # type: ignore[no-redef]
        pass


def known(container: Any, key: Any, default: Any = None) -> Any:
    """`container[key]` (a mapping's key or a list's index), `default` when absent, or
    `UNKNOWN` where the value is not known yet: for a rule that can decide without this value
    (a value it only walks past)."""
    try:
        return container[key]
    except (KeyError, IndexError):
        return default
    except _UnknownReadError:
        return UNKNOWN


@dataclass(frozen=True)
class Resource:
    urn: str
    type: str
    name: str
    inputs: Mapping[str, Any]
    protect: bool = False
    id: str | None = None
    parent: str | None = None
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Input name -> URNs of the resources its value comes from (the engine's property
    dependencies; the policy pack's stack view has them, recorded plans need not)."""


@dataclass(frozen=True)
class StackView:
    project: str
    stack: str
    cloud: str
    resources: tuple[Resource, ...]
    config: Mapping[str, str] = field(default_factory=dict)
    """Qualified keys (`gpuinfra:allowPublicAdminAccess`) as the engine passed them: text."""

    def of_type(self, *types: str) -> list[Resource]:
        return [r for r in self.resources if r.type in types]

    def by_id(self, resource_id: object) -> Resource | None:
        for resource in self.resources:
            if resource.id is not None and resource.id == resource_id:
                return resource
        return None

    def setting(self, name: str) -> str | None:
        """A `gpuinfra:` key as given in the stack file, or None when it is not set."""
        return self.config.get(f"gpuinfra:{name}")

    def flag(self, name: str) -> bool:
        """True only when the stack explicitly sets the boolean key to true."""
        return (self.setting(name) or "").strip().lower() == "true"


def from_plan(plan: Plan, cloud: str) -> StackView:
    return StackView(
        project=plan.project,
        stack=plan.stack,
        cloud=cloud,
        config=dict(plan.config),
        resources=tuple(
            Resource(
                urn=r.urn,
                type=r.type,
                name=r.name,
                inputs=r.inputs,
                protect=r.protect,
                id=r.id,
                parent=r.parent,
            )
            for r in plan.resources
        ),
    )


def from_json(data: Mapping[str, Any]) -> StackView:
    """From `gpuinfra preview --json` output (or a hand-edited copy of it)."""
    return StackView(
        project=str(data.get("project", "")),
        stack=str(data.get("stack", "")),
        cloud=str(data.get("cloud", "")),
        config=dict(data.get("config") or {}),
        resources=tuple(_resource(r) for r in data.get("resources") or []),
    )


def _resource(r: Mapping[str, Any]) -> Resource:
    return Resource(
        urn=str(r.get("urn", "")),
        type=str(r.get("type", "")),
        name=str(r.get("name", "")),
        inputs=dict(r.get("inputs") or {}),
        protect=bool(r.get("protect", False)),
        id=r.get("id"),
        parent=r.get("parent"),
    )


def view(
    resources: Iterable[Resource],
    *,
    cloud: str = "",
    config: Mapping[str, str] | None = None,
    stack: str = "test",
) -> StackView:
    """A view from hand-made resources (tests, the policy pack)."""
    return StackView(
        project="gpuinfra",
        stack=stack,
        cloud=cloud,
        resources=tuple(resources),
        config=dict(config or {}),
    )
