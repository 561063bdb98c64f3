"""Provider rules for the GPU workstation's instances: each one broken on purpose, and the
shipped workstations passing them."""

from __future__ import annotations

import pulumi_alicloud as alicloud
import pulumi_aws as aws
import pytest
import tencentcloud_iac_pulumi as tencentcloud

from gpuinfra.engine import Plan, run_program
from gpuinfra.provider_rules import check_resources
from tests.workstation.conftest import STACKS, build_ws


def _refusals(program: object) -> list[tuple[str, str]]:
    plan = run_program(program, project="p", stack="s", config={}, provider_rules=False)  # type: ignore[arg-type]
    return [(r.rule.rsplit(".", 1)[-1], r.field) for r in check_resources(plan.resources)]


def _ec2(name: str, **extra: object) -> None:
    aws.ec2.Instance(name, ami="ami-12345678", instance_type="g5.xlarge", **extra)  # type: ignore[arg-type]


def test_persistent_spot_request_outlives_instance() -> None:
    def program() -> None:
        _ec2(
            "persistent",
            instance_market_options={
                "market_type": "spot",
                "spot_options": {
                    "spot_instance_type": "persistent",
                    "instance_interruption_behavior": "stop",
                },
            },
        )
        _ec2(
            "one-time",
            instance_market_options={
                "market_type": "spot",
                "spot_options": {
                    "spot_instance_type": "one-time",
                    "instance_interruption_behavior": "terminate",
                },
            },
        )

    assert _refusals(program) == [
        (
            "persistent_spot_request_outlives_instance",
            "instanceMarketOptions.spotOptions.spotInstanceType",
        )
    ]


@pytest.mark.parametrize("behavior", ["stop", "hibernate"])
def test_spot_stop_needs_persistent_request(behavior: str) -> None:
    def program() -> None:
        _ec2(
            "default-one-time",
            instance_market_options={
                "market_type": "spot",
                "spot_options": {"instance_interruption_behavior": behavior},
            },
        )

    assert _refusals(program) == [
        (
            "spot_stop_needs_persistent_request",
            "instanceMarketOptions.spotOptions.instanceInterruptionBehavior",
        )
    ]


def test_user_data_over_16kb() -> None:
    def program() -> None:
        _ec2("fits", user_data="x" * 16384)
        _ec2("too-long", user_data="x" * 16385)

    assert _refusals(program) == [("user_data_over_16kb", "userData")]


def _ecs(name: str, **extra: object) -> None:
    alicloud.ecs.Instance(
        name,
        image_id="ubuntu",
        instance_type="ecs.gn7i-c8g1.2xlarge",
        **extra,  # type: ignore[arg-type]
    )


def test_metadata_hop_limit_not_available() -> None:
    def program() -> None:
        _ecs("hop-limit", http_tokens="required", http_put_response_hop_limit=1)
        _ecs("tokens-only", http_tokens="required")

    assert _refusals(program) == [("metadata_hop_limit_not_available", "httpPutResponseHopLimit")]


def test_instance_role_name_deprecated() -> None:
    def program() -> None:
        _ecs("with-role-name", role_name="ws-role")
        instance = alicloud.ecs.Instance("attached", image_id="ubuntu", instance_type="t")
        alicloud.ecs.RamRoleAttachment("attach", instance_id=instance.id, ram_role_name="ws-role")

    assert _refusals(program) == [("instance_role_name_deprecated", "roleName")]


def test_user_data_raw_over_16kb() -> None:
    def cvm(name: str, user_data: str) -> None:
        tencentcloud.instance.Instance(
            name,
            image_id="img-1",
            instance_type="GN7.2XLARGE32",
            availability_zone="ap-guangzhou-6",
            user_data_raw=user_data,
        )

    def program() -> None:
        cvm("fits", "x" * 12288)  # 16384 after base64
        cvm("too-long", "x" * 12289)

    assert _refusals(program) == [("user_data_raw_over_16kb", "userDataRaw")]


SPOT_CLOUDS = [c for c in STACKS if c != "tencentcloud"]  # settings refuse a Tencent spot one


@pytest.fixture(scope="module")
def spot_plans() -> dict[str, Plan]:
    plans = {cloud: build_ws(cloud, {"workstationCapacityType": "spot"}) for cloud in SPOT_CLOUDS}
    return {**plans, "tencentcloud": build_ws("tencentcloud")}


@pytest.mark.parametrize("cloud", list(STACKS))
def test_shipped_workstations_pass_the_rules(spot_plans: dict[str, Plan], cloud: str) -> None:
    """Built with the rules on (building at all means no refusal); spot too where allowed."""
    plan = spot_plans[cloud]
    assert check_resources(plan.resources) == []
    assert [r for r in plan.resources if r.name.endswith("-workstation")]
