"""`gpuPools`: each entry validated on its own (`gpuPools[i].field`), and single-pool stack
files (the flat `gpuPool*` keys) behaving as the README's "GPU pools" section documents."""

from __future__ import annotations

import json

import pytest

from components.cluster_handle import GPU_NODE_LABEL, POOL_LABEL
from components.settings import SettingsError, parse_settings
from gpuinfra.engine import Plan
from tests.conftest import BuildStack, flat_pool

REGION = {"aws:region": "us-east-1"}
BASE = {"gpuLayer": "separate"}
SMALL = {"name": "small", "instanceType": "g5.xlarge", "maxNodes": 2}
LARGE = {"name": "large", "instanceType": "g5.12xlarge", "capacityType": "onDemand"}
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def _pools(*entries: object) -> dict[str, str]:
    return {**BASE, "gpuPools": json.dumps(list(entries))}


def _problems(raw: dict[str, str], provider: dict[str, str] | None = None) -> dict[str, str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(raw, stack="dev", provider_config=provider or REGION)
    return {p.key: str(p) for p in caught.value.problems}


def test_two_pools_in_order_with_their_own_fields() -> None:
    settings = parse_settings(_pools(SMALL, LARGE), stack="dev", provider_config=REGION)
    small, large = settings.gpu_pools
    assert (small.name, small.gpus_per_node, small.capacity_type) == ("small", 1, "spot")
    assert (large.name, large.gpus_per_node, large.capacity_type) == ("large", 4, "onDemand")
    assert (large.size.min_nodes, large.size.desired_nodes, large.size.max_nodes) == (
        0,
        0,
        2,
    )  # maxNodes: the gpuPoolMaxNodes default
    assert not small.flat and not large.flat


@pytest.mark.parametrize(
    ("entry", "key", "fragment"),
    [
        ({"instanceType": "g5.xlarge"}, "gpuPools[0].name", "required"),
        ({"name": "System", "instanceType": "g5.xlarge"}, "gpuPools[0].name", "lowercase"),
        ({"name": "system", "instanceType": "g5.xlarge"}, "gpuPools[0].name", "system pool"),
        ({"name": "a" * 17, "instanceType": "g5.xlarge"}, "gpuPools[0].name", "2 to 16"),
        ({"name": "x1", "instanceType": "g9.huge"}, "gpuPools[0].instanceType", "catalog"),
        ({"name": "x1", "gpuModel": "A10G", "gpuCount": 3}, "gpuPools[0].gpuModel", "1, 4, 8"),
        ({"name": "x1", "instanceType": "g5.xlarge", "maxNodes": -1}, "gpuPools[0].maxNodes", "0"),
        (
            {"name": "x1", "instanceType": "g5.xlarge", "capacityType": "x"},
            "gpuPools[0].capacityType",
            "spot",
        ),
        (
            {"name": "x1", "instanceType": "g5.xlarge", "colour": "red"},
            "gpuPools[0].colour",
            "unknown field",
        ),
        (
            {"name": "x1", "instanceType": "g5.xlarge", "spotMaxPrice": "1"},
            "gpuPools[0].spotMaxPrice",
            "not used on",
        ),
        (
            {"name": "x1", "instanceType": "g5.xlarge", "labels": {"gpuinfra.io/x": "y"}},
            "gpuPools[0].labels",
            "set by gpuinfra",
        ),
        (
            {"name": "x1", "instanceType": "g5.xlarge", "labels": {"team": "a b"}},
            "gpuPools[0].labels",
            "label values",
        ),
    ],
)
def test_each_bad_field_is_named_by_its_entry(entry: dict, key: str, fragment: str) -> None:
    found = _problems(_pools(entry))
    assert f"gpuinfra:{key}" in found, found
    assert fragment in found[f"gpuinfra:{key}"], found


def test_the_second_entry_is_named_and_names_are_unique() -> None:
    found = _problems(_pools(SMALL, {**LARGE, "name": "small"}, {**LARGE, "minNodes": -2}))
    assert "unique" in found["gpuinfra:gpuPools[1].name"]
    assert "gpuinfra:gpuPools[2].minNodes" in found
    assert not any(k.startswith("gpuinfra:gpuPools[0]") for k in found)


def test_flat_keys_next_to_gpu_pools_are_refused_with_their_new_form() -> None:
    found = _problems({**_pools(SMALL), "gpuPoolMaxNodes": "3"})
    assert "gpuinfra:gpuPools[i].maxNodes" in found["gpuinfra:gpuPoolMaxNodes"]


def test_an_empty_list_is_refused() -> None:
    assert "at least one pool" in _problems(_pools())["gpuinfra:gpuPools"]


def test_flat_keys_are_one_pool_named_gpu() -> None:
    settings = parse_settings(
        {**BASE, "gpuPoolInstanceType": "g5.xlarge"}, stack="dev", provider_config=REGION
    )
    [pool] = settings.gpu_pools
    assert (pool.name, pool.flat, pool.instance.instance_type) == ("gpu", True, "g5.xlarge")
    # Problems keep the flat keys' names.
    found = _problems({**BASE, "gpuPoolInstanceType": "g5.xlarge", "gpuPoolMaxNodes": "-1"})
    assert "gpuinfra:gpuPoolMaxNodes" in found


def _pool_nodes(plan: Plan, name: str) -> tuple[dict, list]:
    inputs = plan.one(NODE_GROUP, name).inputs
    return inputs["labels"], inputs["taints"]


def test_a_single_pool_stack_file_keeps_its_names_labels_and_taint(
    build_stack_plan: BuildStack,
) -> None:
    """README, "GPU pools": a stack file of the gpuPool* keys keeps working unchanged; its pool
    is named `gpu`, its node group `<namePrefix>-gpu-nodes`, its nodes keep the accelerator and
    pool labels and the GPU taint only, and its Jobs select what they always selected, so an
    update replaces nothing."""
    plan = build_stack_plan("dev", flat_pool("dev", {"trainingJobs": [{"name": "a"}]}))
    groups = [g.name for g in plan.of_type(NODE_GROUP)]
    assert groups == ["gpuinfra-dev-system-nodes", "gpuinfra-dev-gpu-nodes"]
    labels, taints = _pool_nodes(plan, "gpuinfra-dev-gpu-nodes")
    assert {k: v for k, v in labels.items() if k.startswith("gpuinfra.io/")} == {
        GPU_NODE_LABEL: "A10G",
        POOL_LABEL: "gpu",
    }
    assert taints == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    [job] = [
        r for r in plan.of_type("kubernetes:batch/v1:Job") if r.inputs["metadata"]["name"] == "a"
    ]
    pod = job.inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {GPU_NODE_LABEL: "A10G", POOL_LABEL: "gpu"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_two_pools_get_distinct_labels_taints_and_autoscaler_templates(dev_plan: Plan) -> None:
    """EKS: each pool's node group and its Auto Scaling group's scale-from-zero tags carry its
    own pool label, taint and GPU count."""
    template = "k8s.io/cluster-autoscaler/node-template/"
    by_pool: dict[str, dict[str, str]] = {}
    for tag in dev_plan.of_type("aws:autoscaling/tag:Tag"):
        key, value = tag.inputs["tag"]["key"], tag.inputs["tag"]["value"]
        for pool in ("small", "large"):
            if f"-{pool}-" in tag.name and key.startswith(template):
                by_pool.setdefault(pool, {})[key] = value
    for pool, gpus in (("small", "1"), ("large", "4")):
        labels, taints = _pool_nodes(dev_plan, f"gpuinfra-dev-{pool}-nodes")
        assert labels[POOL_LABEL] == pool
        assert {"key": POOL_LABEL, "value": pool, "effect": "NO_SCHEDULE"} in taints
        found = by_pool[pool]
        assert found[f"{template}label/{POOL_LABEL}"] == pool
        assert found[f"{template}taint/{POOL_LABEL}"] == f"{pool}:NoSchedule"
        assert found[f"{template}resources/nvidia.com/gpu"] == gpus


def test_the_idle_node_alert_spares_every_pools_minimum() -> None:
    """The exporter's series name a node, not its pool: the GpuNodeIdle alert fires only past
    the nodes all pools keep at their minima together (1 + 2 here)."""
    settings = parse_settings(
        _pools({**SMALL, "minNodes": 1, "desiredNodes": 1}, {**LARGE, "minNodes": 2}),
        stack="dev",
        provider_config=REGION,
    )
    assert settings.gpu_layer.alerts.min_gpu_nodes == 3


def test_a_gpu_layer_stack_takes_the_pools_minima_from_the_cluster_stacks_handle() -> None:
    """A separate GPU-layer stack has no autoscaling settings of its own: the minima come
    from the handle's `gpu_pools`, so its idle-node alert spares the same nodes."""
    from tests.conftest import gpu_layer_plan

    pools = [
        {"name": "small", "instanceType": "g5.xlarge", "minNodes": 1, "desiredNodes": 1},
        {"name": "large", "instanceType": "g5.12xlarge", "minNodes": 2, "maxNodes": 2},
    ]
    plan = gpu_layer_plan(
        "dev",
        {"gpuLayer": "separate", "gpuPools": pools},
        {"monitoringPrometheusOperator": True},
    )
    [rule] = plan.of_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    [idle] = [
        r for g in rule.inputs["spec"]["groups"] for r in g["rules"] if r["alert"] == "GpuNodeIdle"
    ]
    assert idle["expr"].endswith("> 3)")
    assert "keep 3 node(s) at their minimum sizes" in idle["annotations"]["description"]
