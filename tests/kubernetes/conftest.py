"""Plans of the bring-your-own-cluster stack, where the GPU layer is all there is."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.conftest import build


@pytest.fixture(scope="session")
def k8s_plan() -> Plan:
    return build("k8s-dev")
