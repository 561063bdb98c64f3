"""ACK: the GPU pool is an autoscaled GPU scaling group; the cluster's autoscaler follows config."""

from __future__ import annotations

import pytest

from gpuinfra.engine import Plan
from tests.conftest import build, flat_pool

PREFIX = "gpuinfra-alicloud-dev"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build(
        "alicloud-dev",
        flat_pool(
            "alicloud-dev",
            {"gpuPoolScaleDownDelayMinutes": 15, "gpuPoolMaxNodes": 5, "maxGpus": 3},
        ),
    )


def test_gpu_pool_autoscales_as_a_gpu_group(plan: Plan) -> None:
    pool = plan.one("alicloud:cs/nodePool:NodePool", f"{PREFIX}-gpu-pool")
    scaling = pool.inputs["scalingConfig"]
    assert scaling["enable"] is True
    assert scaling["type"] == "gpu"
    assert scaling["minSize"] == 0
    assert scaling["maxSize"] == 3  # maxGpus 3 on 1-GPU nodes caps gpuPoolMaxNodes 5


def test_cluster_autoscaler_settings_follow_config(plan: Plan) -> None:
    config = plan.one("alicloud:cs/autoscalingConfig:AutoscalingConfig")
    cluster = plan.one("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert config.inputs["clusterId"] == cluster.id
    assert config.inputs["scalerType"] == "cluster-autoscaler"
    assert config.inputs["scaleUpFromZero"] is True
    assert config.inputs["scaleDownEnabled"] is True
    assert config.inputs["unneededDuration"] == "15m"
    assert config.inputs["coolDownDuration"] == "15m"
    assert config.inputs["expander"] == "least-waste"


def test_no_false_the_provider_would_drop(plan: Plan) -> None:
    """Finding 5: Update sends skip_nodes_with_system_pods only when true and reads it back;
    a False would be ignored and show as a diff on every `pulumi up`."""
    config = plan.one("alicloud:cs/autoscalingConfig:AutoscalingConfig").inputs
    assert config["skipNodesWithSystemPods"] is True
    assert "skipNodesWithLocalStorage" not in config  # default false; a false is not sent
    assert [k for k, v in config.items() if v is False] == []


def test_scale_down_delay_range_is_ack_s() -> None:
    """Finding 6: 61 minutes is fine on AWS but not on ACK (1 to 60)."""
    from components.settings import SettingsError

    with pytest.raises(SettingsError, match="between 1 and 60 on alicloud"):
        build("alicloud-dev", {"gpuPoolScaleDownDelayMinutes": 61})
    config = build("alicloud-dev", {"gpuPoolScaleDownDelayMinutes": 60}).one(
        "alicloud:cs/autoscalingConfig:AutoscalingConfig"
    )
    assert config.inputs["unneededDuration"] == "60m"


def test_no_cluster_autoscaler_deployment_of_ours(plan: Plan) -> None:
    assert not plan.of_type("gpuinfra:kubernetes:ClusterAutoscaler")
    assert plan.outputs["gpuNodeScaling"].startswith("ACK cluster-autoscaler: GPU pool gpu 0 to 3")


def test_default_delay_is_ten_minutes() -> None:
    config = build("alicloud-dev").one("alicloud:cs/autoscalingConfig:AutoscalingConfig")
    assert config.inputs["unneededDuration"] == "10m"
