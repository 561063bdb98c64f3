"""CrossGuard policy pack over gpuinfra's shared rule functions (`gpuinfra.policy_rules`).

`pulumi preview --policy-pack policy` runs this file as `__main__`; only then is the
`PolicyPack` built, because building it starts a gRPC server that never returns. Tests import
the module under another name and check `policies()`.

CrossGuard cannot see the stack's config, so explicit opt-ins reach the pack as policy
config (`pulumi preview --policy-pack-config policy-config.json`, the file
`gpuinfra policy-config --stack <stack>` writes), e.g.
`{"no-world-open-admin-ports": {"allowPublicAdminAccess": true}}`; the findings they accept
are then reported by the advisory `<rule>-accepted` policy instead of the mandatory one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The rules live in the project (../gpuinfra, ../components): put the project root first.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

from gpuinfra.planview import Resource, StackView, view  # noqa: E402
from gpuinfra.policy_rules import RULES, Level, Rule  # noqa: E402

PACK_NAME = "gpuinfra"
_LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}


def _cloud(resources: list[Resource]) -> str:
    for r in resources:
        package = r.type.split(":")[0]
        if package in ("aws", "alicloud", "tencentcloud"):
            return package
        if package == "volcenginecc":  # Volcano Engine (issue 27)
            return "volcengine"
    return ""


def to_view(args: StackValidationArgs, opt_in: tuple[str, str] | None) -> StackView:
    """CrossGuard's resources (engine-named props, as the preview records them) as a view."""
    resources = [_resource(r) for r in args.resources]
    config: dict[str, str] = {}
    if opt_in is not None:
        key, _ = opt_in
        given: Mapping[str, Any] = args.get_config() or {}
        if key in given:
            value = given[key]
            config[f"gpuinfra:{key}"] = str(value).lower() if isinstance(value, bool) else value
    return view(resources, cloud=_cloud(resources), config=config)


def _resource(r: PolicyResource) -> Resource:
    return Resource(
        urn=r.urn,
        type=r.resource_type,
        name=r.name,
        inputs=dict(r.props),
        protect=bool(r.opts.protect),
        id=r.props.get("id"),
        parent=r.parent.urn if r.parent is not None else None,
    )


def _validator(rule: Rule, level: Level) -> Callable[[StackValidationArgs, ReportViolation], None]:
    opt_in = (rule.opt_in, rule.opt_in_value) if rule.opt_in else None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for finding in rule.check(to_view(args, opt_in)):
            if finding.level == level:
                report_violation(f"{finding.resource}: {finding.message}", finding.urn or None)

    return validate


def policies() -> list[StackValidationPolicy]:
    """One policy per rule at its level, plus an advisory `<rule>-accepted` for opt-ins."""
    made = []
    for rule in RULES:
        schema = None
        if rule.opt_in:
            kind = "boolean" if rule.opt_in_value in ("true", "false") else "string"
            schema = PolicyConfigSchema(properties={rule.opt_in: {"type": kind}})
        made.append(
            StackValidationPolicy(
                name=rule.id,
                description=rule.description,
                validate=_validator(rule, rule.level),
                enforcement_level=_LEVELS[rule.level],
                config_schema=schema,
            )
        )
        if rule.opt_in and rule.level == "mandatory":
            made.append(
                StackValidationPolicy(
                    name=f"{rule.id}-accepted",
                    description=f"{rule.description} Accepted explicitly (gpuinfra:{rule.opt_in}).",
                    validate=_validator(rule, "advisory"),
                    enforcement_level=EnforcementLevel.ADVISORY,
                    config_schema=PolicyConfigSchema(properties={rule.opt_in: {"type": "boolean"}}),
                )
            )
    return made


if __name__ == "__main__":
    PolicyPack(name=PACK_NAME, policies=policies())  # serves until the engine stops it
