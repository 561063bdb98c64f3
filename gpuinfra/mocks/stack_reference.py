"""The answer to `pulumi.StackReference` with no backend: the referenced stack's outputs from
its own offline preview (see `gpuinfra.preview.referenced_stacks`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STACK_REFERENCE = "pulumi:pulumi:StackReference"


@dataclass(frozen=True)
class StackOutputs:
    """What a referenced stack exports, as its last update left them."""

    outputs: Mapping[str, Any]
    secret: frozenset[str] = field(default_factory=frozenset)


class UnresolvedStackReferenceError(Exception):
    """The program references a stack the offline engine was given no outputs for."""


def stack_reference_outputs(
    inputs: Mapping[str, Any], references: Mapping[str, StackOutputs]
) -> dict[str, Any]:
    """The state a StackReference resource has after registration: `outputs` and
    `secretOutputNames`, as the engine fills them in from the referenced stack."""
    name = str(inputs.get("name", ""))
    found = references.get(name)
    if found is None:
        known = ", ".join(sorted(references)) or "none"
        raise UnresolvedStackReferenceError(
            f"the offline engine cannot answer the StackReference to {name!r} (previewed: "
            f"{known}); it previews referenced stacks of this project only"
        )
    return {
        "name": name,
        "outputs": dict(found.outputs),
        "secretOutputNames": sorted(found.secret),
    }
