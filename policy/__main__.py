"""CrossGuard policy pack over gpuinfra's shared rule functions (`gpuinfra.policy_rules`).

`pulumi preview --policy-pack policy` runs this file as `__main__`; only then is the
`PolicyPack` built, because building it starts a gRPC server that never returns. Tests import
the module under another name and drive `policies()` through the SDK's analyzer service.

When the engine runs what (pulumi/pulumi pkg/resource/deploy):
- before each resource's step, in `preview` and in `up` (also `up --skip-preview`), it sends
  the resource's inputs to `Analyze`, which runs the `ResourceValidationPolicy`s
  (step_generator.go:1469 `analyzeAll`); in `up` a mandatory violation marks the resource
  invalid and no step is made for it (analyze_snapshot.go:79-81, step_generator.go:1476):
  a forbidden resource is never created;
- after all steps it sends every resource's outputs to `AnalyzeStack`, which runs the
  `StackValidationPolicy`s (deployment_executor.go:410, step_generator.go:3496): in `up`
  the resources already exist by then, so only checks that need the whole stack are
  stack policies (here: an AWS or Alibaba bucket that no configuration resource names).

Unknown values (a preview's ids, ARNs, outputs of resources not created yet) reach the pack
as the engine's sentinel strings. A resource policy reads only the inputs its rule needs; if
one is unknown the SDK reports "can't run policy during preview" for that resource (advisory)
and `up` checks it again with the value known. The stack policies read a plain copy in which
unknown values are `UNKNOWN` and link a bucket's configuration by property dependency.

CrossGuard cannot see the stack's config, so explicit opt-ins reach the pack as policy
config (`pulumi preview --policy-pack-config policy-config.json`, the file
`gpuinfra policy-config --stack <stack>` writes), e.g.
`{"no-world-open-admin-ports": {"allowPublicAdminAccess": true}}`; the findings they accept
are then reported by the advisory `<rule>-accepted` policy instead of the mandatory one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

# The rules live in the project (../gpuinfra, ../components): put the project root first.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError  # noqa: E402

from gpuinfra.planview import UNKNOWN, Resource, StackView, view  # noqa: E402
from gpuinfra.policy_rules import RULES, Level, Rule  # noqa: E402

PACK_NAME = "gpuinfra"
STACK_SUFFIX = "-stack"
"""A rule's stack policy is named `<rule id>-stack` (its resource policy is `<rule id>`)."""
_LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}


def _settings(rule: Rule, given: Mapping[str, Any] | None) -> dict[str, str]:
    """The rule's opt-in from the policy config, as the stack file would give it (text)."""
    if not rule.opt_in or not given or rule.opt_in not in given:
        return {}
    value = given[rule.opt_in]
    return {f"gpuinfra:{rule.opt_in}": str(value).lower() if isinstance(value, bool) else value}


def _cloud(types: Sequence[str]) -> str:
    return next((_CLOUDS[t.split(":")[0]] for t in types if t.split(":")[0] in _CLOUDS), "")


_CLOUDS = {
    "aws": "aws",
    "alicloud": "alicloud",
    "tencentcloud": "tencentcloud",
    "volcenginecc": "volcengine",  # the Volcano Engine SDK's package (issue 27)
}
"""Resource type package -> the `cloud` setting it belongs to."""


# --- resource policies: one resource's inputs, before its step ------------------------------


def _resource_validator(
    rule: Rule, level: Level
) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    check = rule.check_resource
    assert check is not None

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        # `args.props` stays pulumi-policy's proxy: reading an unknown input raises.
        resource = Resource(
            urn=args.urn,
            type=args.resource_type,
            name=args.name,
            inputs=args.props,
            protect=bool(args.opts.protect),
        )
        settings = view(
            [], cloud=_cloud([args.resource_type]), config=_settings(rule, args.get_config())
        )
        for message in check(resource, settings):
            finding = rule.finding(resource, message, settings)
            if finding.level == level:
                report_violation(finding.message, None)

    return validate


# --- stack policies: every resource's outputs, after all steps ------------------------------


def _plain(value: Any) -> Any:
    """A proxy tree as plain data, each unknown value replaced by `UNKNOWN`."""
    if isinstance(value, Mapping):
        out = {}
        for key in value:  # iterating reads keys only
            try:
                out[key] = _plain(value[key])
            except UnknownValueError:
                out[key] = UNKNOWN
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        items = []
        for i in range(len(value)):
            try:
                items.append(_plain(value[i]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def stack_resource(r: PolicyResource) -> Resource:
    props = _plain(r.props)
    resource_id = props.get("id")
    return Resource(
        urn=r.urn,
        type=r.resource_type,
        name=r.name,
        inputs=props,
        protect=bool(r.opts.protect),
        id=resource_id if isinstance(resource_id, str) else None,
        parent=r.parent.urn if r.parent is not None else None,
        links={k: tuple(d.urn for d in deps) for k, deps in r.property_dependencies.items()},
    )


def stack_view(args: StackValidationArgs, rule: Rule) -> StackView:
    resources = [stack_resource(r) for r in args.resources]
    return view(
        resources,
        cloud=_cloud([r.type for r in resources]),
        config=_settings(rule, args.get_config()),
    )


def _stack_validator(rule: Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    check = rule.check_stack
    assert check is not None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        plan = stack_view(args, rule)
        for resource, message in check(plan):
            report_violation(f"{resource.name}: {message}", resource.urn)

    return validate


def policies() -> list[Policy]:
    """Per rule: a resource policy at its level (plus an advisory `<rule>-accepted` twin for
    opt-ins) and, for rules that need the whole stack, a stack policy `<rule>-stack`."""
    made: list[Policy] = []
    for rule in RULES:
        schema = None
        if rule.opt_in:
            kind = "boolean" if rule.opt_in_value in ("true", "false") else "string"
            schema = PolicyConfigSchema(properties={rule.opt_in: {"type": kind}})
        if rule.check_resource is not None:
            made.append(
                ResourceValidationPolicy(
                    name=rule.id,
                    description=rule.description,
                    validate=_resource_validator(rule, rule.level),
                    enforcement_level=_LEVELS[rule.level],
                    config_schema=schema,
                )
            )
            if rule.opt_in and rule.level == "mandatory":
                made.append(
                    ResourceValidationPolicy(
                        name=f"{rule.id}-accepted",
                        description=f"{rule.description} Accepted explicitly "
                        f"(gpuinfra:{rule.opt_in}).",
                        validate=_resource_validator(rule, "advisory"),
                        enforcement_level=EnforcementLevel.ADVISORY,
                        config_schema=schema,
                    )
                )
        if rule.check_stack is not None:
            made.append(
                StackValidationPolicy(
                    name=rule.id + STACK_SUFFIX,
                    description=f"{rule.description} (Whole stack: what no single resource shows.)",
                    validate=_stack_validator(rule),
                    enforcement_level=_LEVELS[rule.level],
                )
            )
    return made


if __name__ == "__main__":
    PolicyPack(name=PACK_NAME, policies=policies())  # serves until the engine stops it
