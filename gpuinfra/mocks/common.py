"""Helpers every cloud's mock outputs share: stable hashes, auto-names, a fake CA."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

ACCOUNT_ID = "123456789012"
FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIB-offline-preview-not-a-real-certificate\n"
    b"-----END CERTIFICATE-----\n"
).decode()

ResourceHandler = Callable[[str, Mapping[str, Any], dict[str, Any], str], None]
"""(logical name, inputs, state to fill in, region) -> None."""
CallHandler = Callable[[Mapping[str, Any], str], dict[str, Any]]
"""(lookup args, region) -> result, with camelCase keys."""


class UnmockedCallError(Exception):
    """The program made a lookup the mock engine cannot answer: add it to gpuinfra/mocks/."""


def digest(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("::".join(parts).encode()).hexdigest()[:length]


def autoname(type_: str, name: str) -> str:
    """What a provider's auto-naming would produce: the logical name plus a suffix."""
    return f"{name}-{digest(type_, name, length=7)}"


@dataclass(frozen=True)
class CloudMocks:
    """One cloud's answers: per resource type, per lookup token."""

    resources: Mapping[str, ResourceHandler] = field(default_factory=dict)
    id_prefixes: Mapping[str, str] = field(default_factory=dict)
    """Resource type -> prefix of its id (e.g. `vpc` for `vpc-0a1b...`)."""
    calls: Mapping[str, CallHandler] = field(default_factory=dict)
    finish: Callable[[str, str, dict[str, Any], str, str], None] | None = None
    """(type, name, state, id, region): last touches every resource of this cloud gets."""
