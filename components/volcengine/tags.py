"""Tags as Volcano Engine resources take them: a list of `{key, value}` (not a mapping)."""

from __future__ import annotations

from collections.abc import Mapping


def tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in sorted(tags.items())]
