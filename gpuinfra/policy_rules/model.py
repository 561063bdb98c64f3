"""What a policy rule is and what it reports; shared by the preview and the CrossGuard pack."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..planview import Resource, StackView

Level = Literal["mandatory", "advisory"]


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
    check: Callable[[StackView], list[Finding]]
    opt_in: str | None = None
    """The `gpuinfra:` key that, set explicitly to `opt_in_value`, turns findings advisory."""
    opt_in_value: str = "true"

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
) -> Callable[[Callable[[Rule, StackView], list[Finding]]], Rule]:
    """Decorator: `@rule("id", "mandatory", "...")` over `def check(self, view) -> findings`."""

    def wrap(fn: Callable[[Rule, StackView], list[Finding]]) -> Rule:
        holder: list[Rule] = []
        made = Rule(id, level, description, lambda view: fn(holder[0], view), opt_in, opt_in_value)
        holder.append(made)
        return made

    return wrap
