"""Reads raw config strings as typed values, collecting problems instead of stopping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from .errors import Problem
from .schema import BY_NAME, NAMESPACE


class ConfigReader:
    """Reads typed values, recording a problem (and returning the default) on bad input."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = raw
        self.problems: list[Problem] = []

    def problem(self, name: str, value: object, allowed: str) -> None:
        key = name if ":" in name else f"{NAMESPACE}:{name}"
        self.problems.append(Problem(key, value, allowed))

    def _given(self, name: str) -> str | None:
        return self.raw.get(name)

    def string(self, name: str) -> str:
        key = BY_NAME[name]
        given = self._given(name)
        return str(key.default) if given is None else given.strip()

    def integer(self, name: str) -> int:
        key = BY_NAME[name]
        given = self._given(name)
        if given is None:
            return cast(int, key.default)
        try:
            return int(given.strip())
        except ValueError:
            self.problem(name, given, "must be a whole number")
            return cast(int, key.default)

    def boolean(self, name: str) -> bool:
        key = BY_NAME[name]
        given = self._given(name)
        if given is None:
            return cast(bool, key.default)
        lowered = given.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        self.problem(name, given, "must be true or false")
        return cast(bool, key.default)

    def strings(self, name: str) -> tuple[str, ...]:
        key = BY_NAME[name]
        given = self._given(name)
        if given is None:
            return tuple(cast(list[str], key.default))
        try:
            value = json.loads(given)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(name, given, 'must be a list of strings, e.g. ["10.0.0.0/24"]')
            return tuple(cast(list[str], key.default))
        return tuple(v.strip() for v in value)

    def objects(self, name: str) -> list[dict[str, object]]:
        """A list of mappings (given as JSON, as Pulumi passes structured values)."""
        given = self._given(name)
        if given is None:
            return []
        try:
            value = json.loads(given)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.problem(name, given, "must be a list of mappings")
            return []
        return value

    def one_of(self, name: str, allowed: tuple[str, ...]) -> str:
        value = self.string(name)
        if value not in allowed:
            self.problem(name, value, "allowed: " + ", ".join(allowed))
            return cast(str, BY_NAME[name].default)
        return value
