"""Helpers for the autoscaling tests: settings parsed as the program parses them."""

from __future__ import annotations

import pytest

from components.settings import Settings, SettingsError, parse_settings
from gpuinfra.engine import Plan
from tests.conftest import build, stack_config

REGION_KEYS = ("aws:region", "alicloud:region", "tencentcloud:region")


def parse(stack: str, overrides: dict[str, object] | None = None) -> Settings:
    config = stack_config(stack, overrides)
    raw = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpuinfra:")}
    provider = {k: v for k, v in config.items() if k in REGION_KEYS}
    return parse_settings(raw, stack=stack, provider_config=provider)


def problems(stack: str, overrides: dict[str, object]) -> dict[str, str]:
    """Each refused key with its message."""
    with pytest.raises(SettingsError) as error:
        parse(stack, overrides)
    return {p.key: str(p) for p in error.value.problems}


@pytest.fixture(scope="session")
def k8s_plan() -> Plan:
    return build("k8s-dev")
