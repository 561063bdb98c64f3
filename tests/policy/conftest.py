"""The CrossGuard pack, loaded as a module without starting its server, and ways to run it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pulumi_policy import PolicyResource, PolicyResourceOptions, StackValidationArgs

PACK = Path(__file__).resolve().parents[2] / "policy" / "__main__.py"


@pytest.fixture(scope="module")
def pack() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpuinfra_policy_pack", PACK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # would block forever if it built the PolicyPack
    return module


def resource(type_: str, props: dict[str, Any], protect: bool = False) -> PolicyResource:
    opts = PolicyResourceOptions(
        protect=protect, ignore_changes=[], delete_before_replace=None, aliases=[],
        custom_timeouts=None, additional_secret_outputs=[],  # type: ignore[arg-type]
    )  # fmt: skip
    return PolicyResource(type_, props, f"urn:{type_}::r", "r", opts, None, None, [], {})


def run(pack: ModuleType, name: str, resources: list, config: dict | None = None) -> list[str]:
    [policy] = [p for p in pack.policies() if p.name == name]
    reported: list[str] = []
    args = StackValidationArgs(resources, config or {})
    policy.validate(args, lambda message, urn=None: reported.append(message))
    return reported
