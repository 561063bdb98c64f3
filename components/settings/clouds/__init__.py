"""Cloud-specific validation rules. Adding a cloud here makes `gpuinfra:cloud` accept it."""

from __future__ import annotations

from . import alicloud, aws, kubernetes, tencentcloud, volcengine
from .rules import CloudRules

RULES: dict[str, CloudRules] = {
    rules.cloud: rules
    for rules in (aws.RULES, alicloud.RULES, tencentcloud.RULES, volcengine.RULES, kubernetes.RULES)
}

__all__ = ["RULES", "CloudRules"]
