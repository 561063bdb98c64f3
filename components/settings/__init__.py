"""Typed, validated settings read from Pulumi config (see `schema.py` for every key)."""

from __future__ import annotations

import pulumi
from pulumi.runtime import config as runtime_config

from .clouds import RULES
from .errors import Problem, SettingsError
from .model import Settings
from .schema import KEYS, NAMESPACE
from .validate import parse_settings

__all__ = ["KEYS", "Problem", "Settings", "SettingsError", "load_settings", "parse_settings"]


def _given_config() -> dict[str, str]:
    """Every config key the engine handed the program, qualified (`ns:key`) -> raw string."""
    given: dict[str, str] = {}
    for source in (runtime_config.get_config_env(), runtime_config.CONFIG.get()):
        for key, value in source.items():
            given[key] = value if isinstance(value, str) else str(value)
    return given


def load_settings() -> Settings:
    """Read and validate this stack's config; raises `SettingsError` before any resource exists."""
    given = _given_config()
    prefix = f"{NAMESPACE}:"
    raw = {key[len(prefix) :]: value for key, value in given.items() if key.startswith(prefix)}
    region_keys = {rules.region_key for rules in RULES.values()}
    provider = {key: value for key, value in given.items() if key in region_keys}
    return parse_settings(raw, stack=pulumi.get_stack(), provider_config=provider)
