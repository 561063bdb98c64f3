"""pulumi-random: the values it would generate, stable per resource name (no real randomness)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .common import CloudMocks, ResourceHandler, digest


def _password(name: str, inputs: Mapping[str, Any], state: dict[str, Any], region: str) -> None:
    length = int(inputs.get("length") or 16)
    # Hex is alphanumeric, so it fits `special=False`; repeated to reach the length.
    text = "".join(digest("random-password", name, str(i), length=64) for i in range(4))
    state["result"] = text[:length]
    state["bcryptHash"] = "$2a$10$" + digest("bcrypt", name, length=53)


_RESOURCES: dict[str, ResourceHandler] = {
    "random:index/randomPassword:RandomPassword": _password,
}

MOCKS = CloudMocks(resources=_RESOURCES)
