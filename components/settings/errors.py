"""The one error a user sees for bad settings: every problem, each naming its key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class Problem:
    key: str
    """Fully qualified config key, e.g. `gpuinfra:gpuPoolMinNodes`."""
    value: object
    """The value as given; `None` when the key is missing."""
    allowed: str
    """What would be accepted instead."""

    def __str__(self) -> str:
        shown = "(not set)" if self.value is None else _show(self.value)
        return f"{self.key} = {shown}: {self.allowed}"


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


class SettingsError(pulumi.RunError):
    """Raised before any resource is registered.

    A `pulumi.RunError` so that `pulumi up` prints the message without a traceback.
    """

    def __init__(self, stack: str, problems: Sequence[Problem]) -> None:
        self.stack = stack
        self.problems = tuple(problems)
        count = len(self.problems)
        lines = [f"invalid settings for stack '{stack}' ({count} problem{'s' * (count != 1)}):"]
        lines += [f"  - {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))
