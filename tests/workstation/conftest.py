"""Each cloud's dev stack with the GPU workstation on, built once under the mock engine."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import build

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0v8kqfZr3X0yq7xWQy1u3z you@laptop"
)
ON = {"workstationEnabled": True, "workstationSshPublicKey": SSH_KEY}
STACKS = {"aws": "dev", "alicloud": "alicloud-dev", "tencentcloud": "tencentcloud-dev"}
INSTANCE = {
    "aws": "aws:ec2/instance:Instance",
    "alicloud": "alicloud:ecs/instance:Instance",
    "tencentcloud": "tencentcloud:Instance/instance:Instance",
}
USER_DATA = {"aws": "userData", "alicloud": "userData", "tencentcloud": "userDataRaw"}


def build_ws(cloud: str, overrides: dict[str, object] | None = None) -> Plan:
    return build(STACKS[cloud], {**ON, **(overrides or {})})


@pytest.fixture(scope="session")
def ws_plans() -> dict[str, Plan]:
    return {cloud: build_ws(cloud) for cloud in STACKS}


def instance(plan: Plan, cloud: str) -> RecordedResource:
    return plan.one(INSTANCE[cloud])


def token(plan: Plan) -> str:
    return str(plan.one("random:index/randomPassword:RandomPassword").outputs["result"])
