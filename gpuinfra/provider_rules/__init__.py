"""The offline preview as the providers' stand-in: what each real provider would refuse.

Mocks accept whatever the program sends; the providers do not. For every resource type the
stacks create, the modules here hold the checks the provider makes (one module per
provider: `aws`, `alicloud`, `tencentcloud`, `kubernetes`), each citing its source. The mock
engine applies them to every registration, so tests, `gpuinfra preview` and the PR comment
fail where `pulumi up` would. See ../shared/notes/provider-fidelity.md for the traps.
"""

from __future__ import annotations

from . import alicloud, aws, kubernetes, tencentcloud, volcengine  # noqa: F401 (they register their rules)
from .model import (
    RULES,
    ProviderRule,
    ProviderRulesError,
    Refusal,
    RuleContext,
    check_resources,
    dropped_falsy,
    get,
    provider_rule,
    rules_for,
)

__all__ = [
    "RULES",
    "ProviderRule",
    "ProviderRulesError",
    "Refusal",
    "RuleContext",
    "check_resources",
    "dropped_falsy",
    "get",
    "provider_rule",
    "rules_for",
]
