"""What a provider rule is, what it reports, and the registry the engine applies.

A rule is one check a real provider makes that our mocks would not: a Create-time check
outside the schema, a validator, a falsy value `d.GetOk` never sends, a ForceNew field fed
by a lookup, an await the Kubernetes provider performs. Each cites where it comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine import RecordedResource


@dataclass(frozen=True)
class Refusal:
    """What the provider would answer to one resource: the field and how to fix it."""

    rule: str
    type: str
    name: str
    field: str
    message: str
    source: str
    urn: str = ""

    def __str__(self) -> str:
        where = f"{self.type} {self.name!r}: {self.field}"
        return f"{where}: {self.message} (rule {self.rule}; {self.source})"


class RuleContext:
    """What a rule may read besides the resource it checks: every resource of the plan."""

    def __init__(
        self, resources: Sequence[RecordedResource], config: Mapping[str, str] | None = None
    ) -> None:
        self.resources = list(resources)
        self.config: Mapping[str, str] = config or {}
        self._by_id: dict[str, list[RecordedResource]] = {}
        for r in self.resources:
            if r.id:
                self._by_id.setdefault(r.id, []).append(r)
        self._by_urn = {r.urn: r for r in self.resources}

    def by_id(self, resource_id: Any, *types: str) -> RecordedResource | None:
        """The resource whose (mocked) id is `resource_id`: how inputs reference others.

        Ids are unique per type only (a Tencent security-group rule set has its group's id),
        so name the types the input may point at; the first registered of several wins."""
        if not isinstance(resource_id, str):
            return None
        found = [r for r in self._by_id.get(resource_id, []) if not types or r.type in types]
        return found[0] if found else None

    def by_urn(self, urn: str) -> RecordedResource | None:
        return self._by_urn.get(urn)

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def depends_on(self, resource: RecordedResource, other: RecordedResource) -> bool:
        """True when `resource` waits for `other`, directly or through its ancestors'
        dependencies (Pulumi waits for a component's children when it is a dependency)."""
        targets = {other.urn}
        parent = other.parent
        while parent:  # a dependency on an ancestor component covers its children
            targets.add(parent)
            found = self.by_urn(parent)
            parent = found.parent if found else None
        seen: set[str] = set()
        pending = list(resource.dependencies)
        while pending:
            urn = pending.pop()
            if urn in targets:
                return True
            if urn in seen:
                continue
            seen.add(urn)
            found = self.by_urn(urn)
            if found is not None:
                pending.extend(found.dependencies)
        return False


Problem = tuple[str, str]
"""(field, message): the input at fault, in the engine's camelCase path, and the fix."""
Check = Callable[["RecordedResource", RuleContext], Iterable[Problem]]


@dataclass(frozen=True)
class ProviderRule:
    id: str
    types: tuple[str, ...]
    """Resource type tokens the rule applies to (`aws:eks/nodeGroup:NodeGroup`)."""
    source: str
    """Where the provider does this: repository@tag path:line, or a documentation URL."""
    check: Check

    @property
    def description(self) -> str:
        doc = (self.check.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else self.id


RULES: list[ProviderRule] = []


def provider_rule(*types: str, source: str) -> Callable[[Check], Check]:
    """Register a check for resource types. The function's docstring says what the provider
    does (first line) and `source` where it does it; the rule id is `<module>.<function>`."""

    def register(fn: Check) -> Check:
        module = fn.__module__.rsplit(".", 1)[-1]
        rule_id = f"{module}.{fn.__name__}"
        if any(r.id == rule_id for r in RULES):
            raise ValueError(f"provider rule {rule_id} registered twice")
        if not source.strip():
            raise ValueError(f"provider rule {rule_id} cites no source")
        RULES.append(ProviderRule(rule_id, tuple(types), source, fn))
        return fn

    return register


def rules_for(type_: str) -> Iterator[ProviderRule]:
    return (r for r in RULES if type_ in r.types)


def check_resources(
    resources: Sequence[RecordedResource], config: Mapping[str, str] | None = None
) -> list[Refusal]:
    """Every refusal the providers would give this plan, in registration order."""
    ctx = RuleContext(resources, config)
    refusals: list[Refusal] = []
    for resource in resources:
        for rule in rules_for(resource.type):
            for field, message in rule.check(resource, ctx):
                refusals.append(
                    Refusal(
                        rule=rule.id,
                        type=resource.type,
                        name=resource.name,
                        field=field,
                        message=message,
                        source=rule.source,
                        urn=resource.urn,
                    )
                )
    return refusals


class ProviderRulesError(Exception):
    """The plan holds resources a real provider would refuse (a program bug, or a setting the
    provider does not allow that settings validation let through)."""

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        self.refusals = list(refusals)
        lines = "\n".join(f"  - {r}" for r in self.refusals)
        super().__init__(
            f"{len(self.refusals)} resource(s) the provider would refuse at `pulumi up`:\n{lines}"
        )


def get(value: Any, path: str) -> Any:
    """`inputs` at a dotted camelCase path (`autoScalingConfig.instanceType`); list items by
    index (`taints.0.key`). None where any step is missing."""
    for step in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


def dropped_falsy(inputs: Mapping[str, Any], path: str) -> bool:
    """True when the program passes a falsy value (False, 0, "") at `path` that a Create
    reading it with `d.GetOk` never sends: the API default applies instead."""
    value = get(inputs, path)
    return value is not None and not value and value != [] and value != {}


def one_of(field: str, value: Any, allowed: Sequence[str], *, what: str = "") -> Iterator[Problem]:
    """The refusal of `value` at `field` when it is not one of the provider's `allowed` values
    (an enum its schema validates, `validation.StringInSlice` and the like): it names the
    value, `what` it should be, and what is allowed. A rule whose field may stay unset checks
    only a value that is set."""
    if value not in allowed:
        is_not = f" is not {what}" if what else ""
        yield field, f"{value!r}{is_not}: allowed {', '.join(allowed)}"
