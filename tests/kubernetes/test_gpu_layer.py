"""The GPU layer: GPU-only DaemonSets, the device plugin only where needed, restartable Jobs."""

from __future__ import annotations

from typing import Any

import pytest

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import BuildStack, gpu_layer_plan

DAEMONSET = "kubernetes:apps/v1:DaemonSet"
JOB = "kubernetes:batch/v1:Job"
SERVICE = "kubernetes:core/v1:Service"
BASE_FIELDS = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_XID_ERRORS",
)


def _named(plan: Plan, type_: str, name: str) -> RecordedResource:
    found = [r for r in plan.of_type(type_) if r.inputs["metadata"]["name"] == name]
    assert len(found) == 1, [r.inputs["metadata"]["name"] for r in plan.of_type(type_)]
    return found[0]


def _pod(resource: RecordedResource) -> dict[str, Any]:
    return resource.inputs["spec"]["template"]["spec"]


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
POOL_TOLERATION = {"key": "gpuinfra.io/pool", "operator": "Exists", "effect": "NoSchedule"}


def test_both_daemonsets_run_only_on_gpu_nodes(dev_plan: Plan, k8s_plan: Plan) -> None:
    """On every GPU node of every pool and nowhere else: dev's two A10G pools share the model
    and the `gpuinfra.io/gpu` mark (each pool's taint tolerated); prod's single flat pool keeps
    the selector and toleration it always had; an existing cluster uses its own label."""
    for plan, labels, tolerations in (
        (
            dev_plan,
            {"gpuinfra.io/accelerator": "A10G", "gpuinfra.io/gpu": "true"},
            [GPU_TOLERATION, POOL_TOLERATION],
        ),
        (
            gpu_layer_plan("prod"),  # prod-gpu deploys prod's GPU layer
            {"gpuinfra.io/accelerator": "A100-80GB", "gpuinfra.io/pool": "gpu"},
            [GPU_TOLERATION],
        ),
        (k8s_plan, {"nvidia.com/gpu.present": "true"}, [GPU_TOLERATION]),
    ):
        for name in ("nvidia-device-plugin", "dcgm-exporter"):
            pod = _pod(_named(plan, DAEMONSET, name))
            assert pod["nodeSelector"] == labels
            assert pod["tolerations"] == tolerations
            assert pod["priorityClassName"] == "system-node-critical"


def test_daemonsets_select_every_pool_of_different_gpu_models(
    build_stack_plan: BuildStack,
) -> None:
    """Pools of different GPU models share no model label: the DaemonSets select on the mark
    every `gpuPools` node carries, so the big pool's nodes get a device plugin too."""
    pools = [
        {"name": "small", "instanceType": "g5.xlarge", "maxNodes": 2},
        {"name": "big", "instanceType": "p4d.24xlarge", "capacityType": "onDemand", "maxNodes": 1},
    ]
    plan = build_stack_plan("dev", {"gpuPools": pools})
    for name in ("nvidia-device-plugin", "dcgm-exporter"):
        assert _pod(_named(plan, DAEMONSET, name))["nodeSelector"] == {"gpuinfra.io/gpu": "true"}


def test_device_plugin_hardening_and_pinned_image(k8s_plan: Plan) -> None:
    pod = _pod(_named(k8s_plan, DAEMONSET, "nvidia-device-plugin"))
    [container] = pod["containers"]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert set(container["resources"]) == {"requests", "limits"}
    [host] = [v for v in pod["volumes"] if "hostPath" in v]
    assert host["hostPath"]["path"] == "/var/lib/kubelet/device-plugins"


def test_no_device_plugin_where_the_platform_runs_one(build_stack_plan: BuildStack) -> None:
    ali = gpu_layer_plan("alicloud-dev")
    names = [r.inputs["metadata"]["name"] for r in ali.of_type(DAEMONSET)]
    assert "nvidia-device-plugin" not in names and "dcgm-exporter" in names
    forced = gpu_layer_plan("alicloud-dev", layer={"devicePlugin": "always"})
    assert "nvidia-device-plugin" in [
        r.inputs["metadata"]["name"] for r in forced.of_type(DAEMONSET)
    ]
    none = build_stack_plan("dev", {"devicePlugin": "never"})
    assert [r.inputs["metadata"]["name"] for r in none.of_type(DAEMONSET)] == ["dcgm-exporter"]


def test_time_slicing_and_mig_go_into_the_plugin_config(build_stack_plan: BuildStack) -> None:
    import yaml

    plan = build_stack_plan(
        "dev", {"devicePluginTimeSlicingReplicas": 4, "devicePluginMigStrategy": "single"}
    )
    [config] = [
        r for r in plan.of_type("kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["name"] == "nvidia-device-plugin-config"
    ]  # fmt: skip
    parsed = yaml.safe_load(config.inputs["data"]["config.yaml"])
    assert parsed["flags"]["migStrategy"] == "single"
    assert parsed["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 4}
    ]


def test_dcgm_exporter_runs_as_upstream_gives_it(build_stack_plan: BuildStack) -> None:
    """Root for the kubelet's root-only pod-resources socket (else no metric names a pod),
    SYS_ADMIN as upstream's manifest gives it, profiling or not; nothing else."""
    for profiling in (False, True):
        plan = build_stack_plan("dev", {"dcgmProfilingMetrics": profiling})
        pod = _pod(_named(plan, DAEMONSET, "dcgm-exporter"))
        [container] = pod["containers"]
        security = container["securityContext"]
        assert security["runAsUser"] == 0 and security["runAsNonRoot"] is False
        assert security["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
        assert security["allowPrivilegeEscalation"] is False
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["DCGM_EXPORTER_KUBERNETES"] == "true"
        [socket] = [m for m in container["volumeMounts"] if m["name"] == "pod-resources"]
        assert socket["mountPath"] == "/var/lib/kubelet/pod-resources" and socket["readOnly"]
        counters = next(
            r for r in plan.of_type("kubernetes:core/v1:ConfigMap")
            if r.inputs["metadata"]["name"] == "dcgm-exporter-counters"
        ).inputs["data"]["counters.csv"]  # fmt: skip
        for field in BASE_FIELDS:
            assert field in counters
        assert ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" in counters) is profiling
        service = _named(plan, SERVICE, "dcgm-exporter")
        assert service.inputs["spec"]["ports"] == [
            {"name": "metrics", "port": 9400, "targetPort": "metrics"}
        ]


MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"


def test_service_monitor_keeps_the_pod_labels_and_is_selected(
    dev_plan: Plan, k8s_plan: Plan, build_stack_plan: BuildStack
) -> None:
    """honorLabels keeps dcgm-exporter's pod/namespace (else Prometheus renames them
    exported_* and names the exporter); `release` is what kube-prometheus-stack selects."""
    assert dev_plan.of_type(MONITOR) == []
    [monitor] = k8s_plan.of_type(MONITOR)
    [endpoint] = monitor.inputs["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True and endpoint["port"] == "metrics"
    assert monitor.inputs["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    mine = build_stack_plan("k8s-dev", {"monitoringPrometheusRelease": "prom"})
    assert mine.one(MONITOR).inputs["metadata"]["labels"]["release"] == "prom"
    none = build_stack_plan("k8s-dev", {"monitoringPrometheusRelease": ""})
    assert "release" not in none.one(MONITOR).inputs["metadata"]["labels"]


def _dashboard(plan: Plan) -> dict[str, Any]:
    import json

    [dashboard] = [
        r for r in plan.of_type("kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["labels"].get("grafana_dashboard") == "1"
    ]  # fmt: skip
    return dict(json.loads(dashboard.inputs["data"]["gpuinfra-gpus.json"]))


def test_dashboard_names_nodes_with_either_exporters_label(k8s_plan: Plan) -> None:
    """dcgm-exporter 4.5.3-4.8.2 writes `Hostname`, main writes `hostname`: every per-node
    panel copies `hostname` into `Hostname` before grouping by it."""
    exprs = [t["expr"] for p in _dashboard(k8s_plan)["panels"] for t in p.get("targets", [])]
    per_node = [e for e in exprs if "by (Hostname" in e]
    assert len(per_node) == 7
    for expr in per_node:
        selectors = expr.count("DCGM_FI_")
        assert expr.count("label_replace(DCGM_FI_") == selectors, expr
        assert expr.count('"Hostname", "$1", "hostname", "(.+)"') == selectors, expr
    assert any("by (namespace, pod)" in e for e in exprs)


def _template_hash(plan: Plan, name: str) -> str:
    annotations = _named(plan, DAEMONSET, name).inputs["spec"]["template"]["metadata"]
    return str(annotations["annotations"]["gpuinfra.io/config-sha256"])


def test_daemonsets_roll_when_the_file_they_read_at_start_changes(
    build_stack_plan: BuildStack, k8s_plan: Plan
) -> None:
    """The plugin reads its config, the exporter its counters, once: a changed ConfigMap
    must change the pod template, or nothing restarts."""
    sliced = build_stack_plan("k8s-dev", {"devicePluginTimeSlicingReplicas": 4})
    assert _template_hash(sliced, "nvidia-device-plugin") != _template_hash(
        k8s_plan, "nvidia-device-plugin"
    )
    assert _template_hash(sliced, "dcgm-exporter") == _template_hash(k8s_plan, "dcgm-exporter")
    unprofiled = build_stack_plan("k8s-dev", {"dcgmProfilingMetrics": False})
    assert _template_hash(unprofiled, "dcgm-exporter") != _template_hash(k8s_plan, "dcgm-exporter")
    daemonset = _named(k8s_plan, DAEMONSET, "nvidia-device-plugin").inputs
    assert "gpuinfra.io/config-sha256" not in daemonset["metadata"]["annotations"]


GPU_POOLS = {
    "dev": ("aws:eks/nodeGroup:NodeGroup", "gpuinfra-dev-{}-nodes", "labels"),
    "alicloud-dev": ("alicloud:cs/nodePool:NodePool", "gpuinfra-alicloud-dev-{}-pool", "labels"),
    "tencentcloud-dev": (
        "tencentcloud:Kubernetes/nodePool:NodePool",
        "gpuinfra-tencentcloud-dev-{}-pool",
        "labels",
    ),
}


def _labels(value: Any) -> dict[str, str]:
    if isinstance(value, list):  # ACK: [{key, value}]
        return {item["key"]: item["value"] for item in value}
    return dict(value)


@pytest.mark.parametrize("stack", sorted(GPU_POOLS))
def test_gpu_selectors_are_labels_the_gpu_pool_sets(
    stack: str, build_stack_plan: BuildStack
) -> None:
    """Every label the GPU DaemonSets select on is one every GPU node pool puts on its nodes,
    and each Job's selector is its own pool's labels (EKS node group / ACK / TKE node pool
    `labels`): a Job that names no pool on the first, `pool: large` on the large one."""
    type_, name, field = GPU_POOLS[stack]
    plan = build_stack_plan(stack)
    nodes = {
        pool: _labels(plan.one(type_, name.format(pool)).inputs[field])
        for pool in ("small", "large")
    }
    jobs = [{"name": "a"}, {"name": "b", "pool": "large"}]
    layer = gpu_layer_plan(stack, layer={"trainingJobs": jobs})
    daemonsets = {
        ds.inputs["metadata"]["name"]: _pod(ds)["nodeSelector"] for ds in layer.of_type(DAEMONSET)
    }
    assert "dcgm-exporter" in daemonsets
    for name, selector in daemonsets.items():
        # The drain agent runs on the spot pool (`small`) only; the others on every pool.
        pools = ("small",) if name == "spot-reclaim-drainer" else ("small", "large")
        for pool in pools:
            assert selector and selector.items() <= nodes[pool].items(), (name, selector, pool)
    by_job = {job.inputs["metadata"]["name"]: _pod(job) for job in layer.of_type(JOB)}
    assert set(by_job) == {"a", "b"}
    for job, pool in (("a", "small"), ("b", "large")):
        selector = by_job[job]["nodeSelector"]
        assert selector["gpuinfra.io/pool"] == pool
        assert selector.items() <= nodes[pool].items(), (selector, nodes[pool])
        assert {"key": "gpuinfra.io/pool", "operator": "Exists", "effect": "NoSchedule"} in (
            by_job[job]["tolerations"]
        )


def test_existing_cluster_must_name_its_gpu_node_label() -> None:
    """Nothing labels GPU nodes on a plain cluster: no default, and the message says which
    labels real setups carry."""
    from components.settings import SettingsError
    from tests.conftest import build

    with pytest.raises(SettingsError) as caught:
        build("k8s-dev", {"existingGpuNodeLabels": None})
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuinfra:existingGpuNodeLabels = (not set): required")
    assert "nvidia.com/gpu.present=true" in problem and "pci-10de" in problem


def test_namespaces_and_default_deny(k8s_plan: Plan) -> None:
    namespaces = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
        for r in k8s_plan.of_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces["gpu-system"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert namespaces["training"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert namespaces["training"]["pod-security.kubernetes.io/warn"] == "restricted"
    [policy] = k8s_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    spec = policy.inputs["spec"]
    assert spec["podSelector"] == {} and spec["policyTypes"] == ["Ingress"]
    sources = [rule["from"][0] for rule in spec["ingress"]]
    assert {"podSelector": {}} in sources
    assert any("namespaceSelector" in s for s in sources)


def test_rrsa_label_on_the_alibaba_training_namespace(build_stack_plan: BuildStack) -> None:
    plan = gpu_layer_plan("alicloud-dev")
    [training] = [
        r for r in plan.of_type("kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] == "training"
    ]  # fmt: skip
    assert training.inputs["metadata"]["labels"]["pod-identity.alibabacloud.com/injection"] == "on"


def test_every_kubernetes_object_uses_the_layers_provider(dev_plan: Plan, k8s_plan: Plan) -> None:
    for plan in (dev_plan, k8s_plan):
        [provider] = plan.of_type("pulumi:providers:kubernetes")
        objects = [r for r in plan.resources if r.custom and r.type.startswith("kubernetes:")]
        assert objects
        for obj in objects:
            assert obj.provider is not None and obj.provider.startswith(provider.urn), obj.name


def test_aws_service_account_carries_the_irsa_role(dev_plan: Plan) -> None:
    account = dev_plan.one("kubernetes:core/v1:ServiceAccount", "gpuinfra-dev-trainer-sa")
    assert account.inputs["metadata"]["namespace"] == "training"
    assert account.inputs["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": dev_plan.outputs["trainingRoleArn"]
    }


def test_priority_class_is_preemptible_but_scales_up(k8s_plan: Plan) -> None:
    [priority] = k8s_plan.of_type("kubernetes:scheduling.k8s.io/v1:PriorityClass")
    assert -10 <= priority.inputs["value"] < 0
    assert priority.inputs["preemptionPolicy"] == "Never"
