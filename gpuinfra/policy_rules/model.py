"""What a policy rule is and what it reports; shared by the preview and the CrossGuard pack.

A rule checks one resource at a time (`check_resource`: its own inputs only) wherever it can,
because that is what the engine runs before each step of `pulumi preview` and `pulumi up`
(CrossGuard's resource policies): a forbidden resource is refused before it is created. Only
what needs other resources (an AWS bucket and the separate resources that configure it)
is a stack check (`check_stack`), which the engine runs once after all steps.

Inputs are read with `Mapping.get`, and only the inputs a rule needs: in the pack they are
pulumi-policy's proxies, which raise `UnknownValueError` when a rule reads a value that is
not known yet (during a preview: ids, ARNs, outputs of resources not created yet). The SDK
then reports that rule for that resource as "can't run during preview" (advisory), and the
engine runs it again with known values before the create in `pulumi up`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ..planview import Resource, StackView

Level = Literal["mandatory", "advisory"]

ResourceCheck = Callable[[Resource, StackView], Iterable[str]]
"""One resource (and the stack's settings) -> a message for each problem it has."""
StackCheck = Callable[[StackView], Iterable[tuple[Resource, str]]]
"""The whole plan -> (resource, message) for each problem only the whole plan shows."""


@dataclass(frozen=True)
class Finding:
    rule: str
    level: Level
    resource: str
    """The resource's name (`urn` has the full address)."""
    type: str
    message: str
    urn: str = ""


@dataclass(frozen=True)
class Rule:
    id: str
    level: Level
    description: str
    check_resource: ResourceCheck | None = None
    check_stack: StackCheck | None = None
    opt_in: str | None = None
    """The `gpuinfra:` key that, set explicitly to `opt_in_value`, turns findings advisory."""
    opt_in_value: str = "true"

    def check(self, view: StackView) -> list[Finding]:
        """Every finding of this rule in the plan: each resource, then the stack check."""
        found = []
        if self.check_resource is not None:
            for resource in view.resources:
                found += [
                    self.finding(resource, m, view) for m in self.check_resource(resource, view)
                ]
        if self.check_stack is not None:
            found += [self.finding(r, m, view) for r, m in self.check_stack(view)]
        return found

    def finding(self, resource: Resource, message: str, view: StackView) -> Finding:
        """A finding at the rule's level, or advisory when the stack opted in explicitly."""
        level: Level = self.level
        given = (view.setting(self.opt_in) or "").strip().lower() if self.opt_in else ""
        if self.opt_in and given == self.opt_in_value:
            level = "advisory"
            message += f" (accepted explicitly: gpuinfra:{self.opt_in} is {given})"
        return Finding(self.id, level, resource.name, resource.type, message, resource.urn)


def rule(
    id: str,
    level: Level,
    description: str,
    opt_in: str | None = None,
    opt_in_value: str = "true",
) -> Callable[[ResourceCheck], Rule]:
    """Decorator: `@rule("id", "mandatory", "...")` over a resource check
    `def check(resource, view) -> messages`."""

    def wrap(fn: ResourceCheck) -> Rule:
        return Rule(id, level, description, fn, None, opt_in, opt_in_value)

    return wrap
