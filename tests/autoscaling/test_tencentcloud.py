"""TKE: auto scaling on for the GPU pool; the cluster's autoscaler settings follow config."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.conftest import build, flat_pool

PREFIX = "gpuinfra-tencentcloud-dev"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build(
        "tencentcloud-dev",
        flat_pool(
            "tencentcloud-dev",
            {"gpuPoolScaleDownDelayMinutes": 20, "gpuPoolMaxNodes": 4, "maxGpus": 2},
        ),
    )


def test_gpu_pool_autoscales_to_the_capped_maximum(plan: Plan) -> None:
    pool = plan.one("tencentcloud:Kubernetes/nodePool:NodePool", f"{PREFIX}-gpu-pool")
    assert pool.inputs["enableAutoScale"] is True
    assert pool.inputs["minSize"] == 0
    assert pool.inputs["maxSize"] == 2  # maxGpus 2 on 1-GPU nodes caps gpuPoolMaxNodes 4
    assert "desiredCapacity" in pool.ignore_changes


def test_cluster_autoscaler_settings_follow_config(plan: Plan) -> None:
    cluster = plan.one("tencentcloud:Kubernetes/cluster:Cluster")
    (config,) = cluster.inputs["nodePoolGlobalConfigs"]
    assert config["isScaleInEnabled"] is True
    assert config["scaleInUnneededTime"] == 20
    assert config["scaleInDelay"] == 20
    assert config["expander"] == "least-waste"
    assert config["skipNodesWithSystemPods"] is False


def test_no_cluster_autoscaler_deployment_of_ours(plan: Plan) -> None:
    assert not plan.of_type("gpuinfra:kubernetes:ClusterAutoscaler")
    assert plan.outputs["gpuNodeScaling"].startswith("TKE autoscaler: GPU pool gpu 0 to 2 nodes")
