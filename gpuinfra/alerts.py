"""The alerts a stack gets: the alerting rules of the PrometheusRules in its plan.

Read from the plan (not from settings), so the preview lists what `pulumi up` would create,
and a saved `--json` plan lists the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .planview import StackView

PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
EXPORTER = "dcgm-exporter"
NO_RULE_NOTE = (
    "none: GPU metrics are collected, but the GPU alerts need the Prometheus operator "
    "(gpuinfra:monitoringPrometheusOperator: true, with gpuinfra:gpuAlerts: true)"
)


@dataclass(frozen=True)
class StackAlert:
    alert: str
    severity: str
    after: str
    """How long the condition must hold (`for`), "at once" for none."""
    expr: str
    rule: str
    """The PrometheusRule holding it, `namespace/name`."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def stack_alerts(view: StackView) -> list[StackAlert]:
    found = []
    for resource in view.of_type(PROMETHEUS_RULE):
        metadata: Mapping[str, Any] = resource.inputs.get("metadata") or {}
        where = f"{_text(metadata.get('namespace'))}/{_text(metadata.get('name'))}"
        spec: Mapping[str, Any] = resource.inputs.get("spec") or {}
        for group in spec.get("groups") or []:
            for rule in group.get("rules") or []:
                if "alert" not in rule:
                    continue  # a recording rule
                found.append(
                    StackAlert(
                        alert=_text(rule["alert"]),
                        severity=_text((rule.get("labels") or {}).get("severity")) or "none",
                        after=_text(rule.get("for")) or "at once",
                        expr=" ".join(str(rule.get("expr", "")).split()),
                        rule=where,
                    )
                )
    return found


def alerts_note(view: StackView, alerts: list[StackAlert]) -> str | None:
    """Why a stack that collects GPU metrics has no alerts; None when it has some, or when it
    deploys no GPU layer (a cluster stack whose layer another stack deploys)."""
    if alerts:
        return None
    for daemonset in view.of_type(DAEMONSET):
        if (daemonset.inputs.get("metadata") or {}).get("name") == EXPORTER:
            return NO_RULE_NOTE
    return None
