"""Spot reclaim drainer: the agent against fake metadata and API servers, and where it runs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from components.alicloud.nodepool import SPOT_RECLAIM_NOTICE as ALIBABA
from components.kubernetes import spot_reclaim_agent as agent
from components.kubernetes.labels import config_hash
from components.kubernetes.spot_reclaim_drainer import AGENT_IMAGE, agent_source
from components.tencentcloud.nodepool import SPOT_RECLAIM_NOTICE as TENCENT
from tests.conftest import flat_if_pool_keys, gpu_layer_plan
from tests.fake_http import Fake

DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "2026-11-30T10:05:00Z"


def _metadata(scheduled: bool, hardened: bool) -> Callable[..., tuple[int, Any]]:
    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        if method == "PUT" and path == "/latest/api/token":
            return (
                (200, "session")
                if "x-aliyun-ecs-metadata-token-ttl-seconds" in headers
                else (400, "")
            )
        if hardened and headers.get("x-aliyun-ecs-metadata-token") != "session":
            return 401, ""
        return (200, RELEASE) if scheduled else (404, "404 - Not Found")

    return answer


def _env(url: str, token: bool) -> dict[str, str]:
    env = {"TERMINATION_TIME_URL": f"{url}/latest/meta-data/instance/spot/termination-time"}
    if token:
        env |= {
            "TOKEN_URL": f"{url}/latest/api/token",
            "TOKEN_TTL_HEADER": ALIBABA.token_ttl_header,
            "TOKEN_HEADER": ALIBABA.token_header,
        }
    return env


@pytest.mark.parametrize("hardened", [False, True])
def test_reclaim_is_seen_only_once_announced(serve: Callable[..., Fake], hardened: bool) -> None:
    quiet = serve(_metadata(scheduled=False, hardened=hardened))
    assert agent.reclaim_scheduled(_env(quiet.url, token=True)) is None
    announced = serve(_metadata(scheduled=True, hardened=hardened))
    assert agent.reclaim_scheduled(_env(announced.url, token=True)) == RELEASE
    # Without the token step, a hardened metadata service answers nothing useful.
    expected = None if hardened else RELEASE
    assert agent.reclaim_scheduled(_env(announced.url, token=False)) == expected


@pytest.mark.parametrize(
    ("body", "utc"),
    [
        # CVM (https://intl.cloud.tencent.com/document/product/213/32487): the OS time, UTC+8.
        ("2018-08-18 12:05:33", "2018-08-18T04:05:33+00:00"),
        # ECS and EC2: ISO 8601 in UTC.
        ("2015-01-05T18:02:00Z", "2015-01-05T18:02:00+00:00"),
        ("2026-11-30T10:05:00+00:00", "2026-11-30T10:05:00+00:00"),
    ],
)
def test_each_clouds_reclaim_time_format(serve: Callable[..., Fake], body: str, utc: str) -> None:
    when = agent.parse_reclaim_time(body + "\n")
    assert when is not None and when.astimezone(dt.timezone.utc).isoformat() == utc
    tencent = serve(lambda *_: (200, body))
    url = f"{tencent.url}/latest/meta-data/spot/termination-time"
    assert agent.reclaim_scheduled({"TERMINATION_TIME_URL": url}) == body


def test_the_drainer_rolls_when_the_agent_changes() -> None:
    plan = gpu_layer_plan("tencentcloud-dev")
    [ds] = [
        r for r in plan.of_type(DAEMONSET) if r.inputs["metadata"]["name"] == "spot-reclaim-drainer"
    ]
    template = ds.inputs["spec"]["template"]["metadata"]["annotations"]
    assert (
        template["gpuinfra.io/config-sha256"]
        == config_hash(agent_source())["gpuinfra.io/config-sha256"]
    )


def test_a_body_that_is_not_a_time_is_no_reclaim(serve: Callable[..., Fake]) -> None:
    for body in ("", "404 - Not Found", "<html>maintenance</html>", "2026-11-30T10:05"):
        odd = serve(lambda *_, body=body: (200, body))
        assert agent.reclaim_scheduled(_env(odd.url, token=False)) is None
    assert agent.reclaim_scheduled({"TERMINATION_TIME_URL": "http://127.0.0.1:9/x"}) is None


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "training", **meta}}


PODS = [
    _pod("trainer-0"),
    _pod("dcgm-exporter-x", ownerReferences=[{"kind": "DaemonSet", "name": "dcgm-exporter"}]),
    _pod("static", annotations={"kubernetes.io/config.mirror": "abc"}),
    _pod("leaving", deletionTimestamp="2026-11-30T10:00:00Z"),
    _pod("trainer-1", ownerReferences=[{"kind": "Job", "name": "resnet"}]),
]


def _api(
    refuse_first: set[str], refuse_always: frozenset[str] = frozenset()
) -> Callable[..., tuple[int, Any]]:
    refused: set[str] = set()

    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        assert headers["authorization"] == "Bearer sa-token"
        if method == "GET" and path.startswith("/api/v1/pods?"):
            return 200, {"items": PODS}
        if method == "POST" and path.endswith("/eviction"):
            name = body["metadata"]["name"]
            if name in refuse_always or (name in refuse_first and name not in refused):
                refused.add(name)
                return 429, {}  # a PodDisruptionBudget: not now
            return 201, {}
        return 200, {}

    return answer


def test_drain_cordons_then_evicts_the_nodes_workload_pods(serve: Callable[..., Fake]) -> None:
    api = serve(_api(refuse_first={"trainer-1"}))
    client = agent.KubernetesApi(api.url, "sa-token", None)
    left = agent.drain(client, "node-7", deadline=float("inf"), retry_seconds=0)
    assert left == 0
    method, path, headers, body = api.seen[0]
    assert (method, path, body) == (
        "PATCH",
        "/api/v1/nodes/node-7",
        {"spec": {"unschedulable": True}},
    )
    assert headers["content-type"] == "application/merge-patch+json"
    assert api.seen[1][:2] == ("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-7")
    evictions = [(p, b) for m, p, _, b in api.seen if m == "POST"]
    # Not the DaemonSet's, the static or the terminating pod; trainer-1 again after the 429.
    assert [p.rsplit("/", 2)[-2] for p, _ in evictions] == ["trainer-0", "trainer-1", "trainer-1"]
    assert evictions[0] == (
        "/api/v1/namespaces/training/pods/trainer-0/eviction",
        {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "trainer-0", "namespace": "training"},
        },
    )


def test_drain_gives_up_at_the_deadline(serve: Callable[..., Fake]) -> None:
    api = serve(_api(refuse_first=set(), refuse_always=frozenset({"trainer-0", "trainer-1"})))
    client = agent.KubernetesApi(api.url, "sa-token", None)
    ticks = iter([0.0, 10.0])
    left = agent.drain(client, "n", deadline=5.0, clock=lambda: next(ticks), retry_seconds=0)
    assert left == 2
    # Two rounds (before and at the deadline), each asking for both pods.
    assert sum(m == "POST" for m, *_ in api.seen) == 4


@pytest.mark.parametrize(
    ("stack", "notice"), [("alicloud-dev", ALIBABA), ("tencentcloud-dev", TENCENT)]
)
def test_runs_on_spot_gpu_nodes_of_ack_and_tke(stack: str, notice: Any) -> None:
    """On the spot pool's nodes only (the dev stacks' `small`): the on-demand `large` pool is
    never reclaimed, so no agent waits there."""
    plan = gpu_layer_plan(stack)
    [ds] = [
        r for r in plan.of_type(DAEMONSET) if r.inputs["metadata"]["name"] == "spot-reclaim-drainer"
    ]
    pod = ds.inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["gpuinfra.io/accelerator"]
    assert pod["nodeSelector"]["gpuinfra.io/pool"] == "small"
    assert pod["nodeSelector"]["gpuinfra.io/capacity-type"] == "spot"
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "gpuinfra.io/pool", "operator": "Exists", "effect": "NoSchedule"},
    ]
    [container] = pod["containers"]
    assert container["image"] == AGENT_IMAGE and ":" in AGENT_IMAGE.rsplit("/", 1)[-1]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["TERMINATION_TIME_URL"] == notice.termination_time_url
    assert ("TOKEN_URL" in env) == bool(notice.token_url)
    assert pod["securityContext"]["runAsNonRoot"] is True
    [script] = [
        r
        for r in plan.of_type("kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["name"] == "spot-reclaim-drainer-agent"
    ]
    assert script.inputs["data"]["agent.py"] == agent_source()
    [role] = [
        r
        for r in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if "spot-reclaim-drainer" in r.inputs["metadata"]["name"]
    ]
    assert {(tuple(r["resources"]), tuple(r["verbs"])) for r in role.inputs["rules"]} == {
        (("nodes",), ("get", "patch")),
        (("pods",), ("list",)),
        (("pods/eviction",), ("create",)),
    }


@pytest.mark.parametrize(
    ("stack", "overrides"),
    [
        ("dev", {}),  # EKS managed node groups drain spot nodes themselves
        ("k8s-dev", {}),  # an existing cluster: its owner's business
        # single-pool stack files whose one pool is on-demand
        ("alicloud-dev", {"gpuPoolCapacityType": "onDemand"}),
        ("tencentcloud-dev", {"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": None}),
        # every pool of gpuPools on-demand
        (
            "tencentcloud-dev",
            {
                "gpuPools": [
                    {
                        "name": "ondemand",
                        "instanceType": "GN7.2XLARGE32",
                        "capacityType": "onDemand",
                    }
                ]
            },
        ),
    ],
)
def test_absent_where_nothing_needs_draining(stack: str, overrides: dict) -> None:
    plan = gpu_layer_plan(stack, flat_if_pool_keys(stack, overrides))
    names = [r.inputs["metadata"]["name"] for r in plan.of_type(DAEMONSET)]
    assert "spot-reclaim-drainer" not in names and "dcgm-exporter" in names
