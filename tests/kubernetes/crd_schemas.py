"""Offline validation of custom resources against their CRDs' schemas (vendored fixtures).

kubernetes-validate knows no CRD, so the Prometheus operator's objects are checked here, as
strictly as the built-in kinds: an object schema that lists its properties refuses any other
(the API server would prune such a field without a word, and the setting would be lost),
unless the schema keeps unknown fields (`x-kubernetes-preserve-unknown-fields`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCHEMAS = {
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrules.v0.88.1.schema.yaml",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitors.v0.88.1.schema.yaml",
}


def strict(schema: Any) -> Any:
    """An object schema that lists its properties refuses others (the API server would prune
    them silently), unless it keeps unknown fields. Used for every CRD schema the tests check."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    pattern = out.get("pattern")
    if isinstance(pattern, str) and pattern.startswith("^(?i)"):
        out["pattern"] = "(?i)^" + pattern[5:]  # Go's RE2 takes flags anywhere; Python first
    if (
        out.get("type") == "object"
        and isinstance(out.get("properties"), dict)
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@cache
def validator(api_version: str, kind: str) -> jsonschema.Draft7Validator:
    schema = yaml.safe_load((FIXTURES / SCHEMAS[(api_version, kind)]).read_text())
    return jsonschema.Draft7Validator(strict(schema))


def has_schema(obj: dict[str, Any]) -> bool:
    return (obj.get("apiVersion"), obj.get("kind")) in SCHEMAS


def validate(obj: dict[str, Any]) -> None:
    """Raises jsonschema.ValidationError for the first problem."""
    validator(obj["apiVersion"], obj["kind"]).validate(obj)
