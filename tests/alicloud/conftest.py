"""The Alibaba Cloud dev stack, built once under the mock engine."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.conftest import build

STACK = "alicloud-dev"
PREFIX = "gpuinfra-alicloud-dev"


@pytest.fixture(scope="session")
def ali_plan() -> Plan:
    return build(STACK)
