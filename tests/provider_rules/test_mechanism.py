"""The provider-rules mechanism: applied to every registration, refusals named, sources cited."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pulumi_aws as aws
import pytest

from gpuinfra.engine import RecordedResource, run_program
from gpuinfra.provider_rules import RULES, ProviderRulesError, check_resources, dropped_falsy, get
from gpuinfra.provider_rules import model as rules_model

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def vpc_rule() -> Iterator[None]:
    """A throw-away rule: VPCs must not use 10.99.0.0/16."""

    @rules_model.provider_rule("aws:ec2/vpc:Vpc", source="test: a rule made up for this test")
    def no_ten_ninety_nine(resource, ctx):  # type: ignore[no-untyped-def]
        """A made-up refusal."""
        if resource.inputs.get("cidrBlock") == "10.99.0.0/16":
            yield "cidrBlock", "10.99.0.0/16 is taken; choose another range"

    yield
    RULES[:] = [r for r in RULES if r.check is not no_ten_ninety_nine]


def test_engine_refuses_a_plan_a_rule_breaks(vpc_rule: None) -> None:
    def program() -> None:
        aws.ec2.Vpc("ok", cidr_block="10.0.0.0/16")
        aws.ec2.Vpc("taken", cidr_block="10.99.0.0/16")

    with pytest.raises(ProviderRulesError) as raised:
        run_program(program, project="p", stack="s", config={})
    (refusal,) = raised.value.refusals
    assert (refusal.name, refusal.field, refusal.type) == ("taken", "cidrBlock", "aws:ec2/vpc:Vpc")
    assert refusal.rule == "test_mechanism.no_ten_ninety_nine"
    text = str(raised.value)
    assert "'taken'" in text and "choose another range" in text and "made up" in text


def test_rules_can_be_left_out_to_build_a_plan_on_purpose(vpc_rule: None) -> None:
    plan = run_program(
        lambda: aws.ec2.Vpc("taken", cidr_block="10.99.0.0/16"),
        project="p",
        stack="s",
        config={},
        provider_rules=False,
    )
    assert [r.field for r in check_resources(plan.resources)] == ["cidrBlock"]


def test_a_rule_without_a_source_is_refused() -> None:
    with pytest.raises(ValueError, match="cites no source"):

        @rules_model.provider_rule("aws:ec2/vpc:Vpc", source=" ")
        def uncited(resource, ctx):  # type: ignore[no-untyped-def]
            return []


def test_get_and_dropped_falsy() -> None:
    inputs = {"a": {"b": [{"c": False}], "d": 0, "e": "x", "f": []}}
    assert get(inputs, "a.b.0.c") is False and get(inputs, "a.b.1.c") is None
    assert dropped_falsy(inputs, "a.b.0.c") and dropped_falsy(inputs, "a.d")
    assert not dropped_falsy(inputs, "a.e") and not dropped_falsy(inputs, "a.missing")
    assert not dropped_falsy(inputs, "a.f")


def _resource(urn: str, deps: list[str], parent: str | None = None) -> RecordedResource:
    return RecordedResource(
        urn=urn, type="t", name=urn, parent=parent, provider=None, custom=True,
        protect=False, inputs={}, outputs={}, id=None, dependencies=deps,
    )  # fmt: skip


def test_by_id_tells_apart_resources_of_other_types_with_the_same_id() -> None:
    group = _resource("group", [])
    rule_set = _resource("rule-set", [])
    group = RecordedResource(**{**group.__dict__, "type": "sg", "id": "sg-1"})
    rule_set = RecordedResource(**{**rule_set.__dict__, "type": "rules", "id": "sg-1"})
    ctx = rules_model.RuleContext([group, rule_set])
    assert ctx.by_id("sg-1", "rules") is rule_set and ctx.by_id("sg-1", "sg") is group
    assert ctx.by_id("sg-1", "other") is None and ctx.by_id(None) is None


def test_depends_on_follows_dependencies_and_ancestor_components() -> None:
    component = _resource("component", [])
    child = _resource("child", [], parent="component")
    middle = _resource("middle", ["component"])
    last = _resource("last", ["middle"])
    ctx = rules_model.RuleContext([component, child, middle, last])
    assert ctx.depends_on(last, child) and ctx.depends_on(middle, child)
    assert not ctx.depends_on(child, last)


def test_every_rule_cites_a_source_says_what_it_checks_and_has_a_test() -> None:
    """Each rule has a test that breaks it: its function name appears in a test here."""
    tests_text = "\n".join(p.read_text() for p in TESTS.glob("test_*.py"))
    for rule in RULES:
        assert rule.source.strip(), rule.id
        assert rule.check.__doc__, f"{rule.id}: say in a docstring what the provider does"
        name = rule.id.rsplit(".", 1)[-1]
        assert re.search(rf"\b{name}\b", tests_text), f"{rule.id} has no test in {TESTS}"


def test_shipped_stacks_pass_the_provider_rules(dev_plan, prod_plan) -> None:  # type: ignore[no-untyped-def]
    """Built with the rules on: building at all means no refusal."""
    assert dev_plan.resources and prod_plan.resources


def test_one_of_names_the_field_the_value_and_what_is_allowed() -> None:
    from gpuinfra.provider_rules.model import one_of

    assert list(one_of("status", "On", ("Enabled", "Disabled"))) == [
        ("status", "'On': allowed Enabled, Disabled")
    ]
    assert list(one_of("type", None, ("gp3",), what="an EBS volume type")) == [
        ("type", "None is not an EBS volume type: allowed gp3")
    ]
    assert list(one_of("status", "Enabled", ("Enabled", "Disabled"))) == []
