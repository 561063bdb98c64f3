"""Tags every resource carries, so a bill or a console search finds what a stack made."""

from __future__ import annotations


def stack_tags(stack: str, component: str) -> dict[str, str]:
    return {"gpuinfra:stack": stack, "gpuinfra:component": component, "managed-by": "pulumi"}
