"""Kueue (issue 19): the pinned release installed CRDs first, a flavor per GPU pool, the GPU
quota, queued and suspended training Jobs, ProvisioningRequests on EKS, preemption by Kueue
taking the checkpoint path."""

from __future__ import annotations

import copy
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.cluster_handle import GpuPool, common_labels, gpu_pool_of
from components.kubernetes import kueue_release, vendored
from components.kubernetes.cluster_autoscaler import PROVISIONING_REQUEST_FLAGS
from components.kubernetes.kueue import (
    ATOMIC_SCALE_UP,
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    PROVISIONING_CHECK,
    QUEUE_LABEL,
)
from components.kubernetes.training_job import CONTAINER
from components.settings import Settings, SettingsError, parse_settings
from components.settings.gpu_layer import PREEMPTED_EXIT_CODE, USER_ERROR_EXIT_CODE
from gpuinfra.cost import estimate
from gpuinfra.engine import Plan, RecordedResource
from gpuinfra.manifests import manifests
from gpuinfra.planview import from_plan
from gpuinfra.provider_rules.model import RuleContext
from gpuinfra.queue import QueueReport, queue_report
from gpuinfra.report import text_summary
from tests.conftest import build, gpu_layer_plan, stack_config
from tests.kubernetes import crd_schemas

JOB = "kubernetes:batch/v1:Job"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
INSTALL = "gpuinfra:kubernetes:KueueInstall"
STACKS = ("k8s-dev", "dev", "alicloud-dev", "tencentcloud-dev")


JOBS = [
    {"name": "one-node", "gpusPerNode": 1},
    {"name": "two-nodes", "gpusPerNode": 1, "nodes": 2},
    {"name": "on-large", "pool": "large", "gpusPerNode": 1},
]
"""The cloud stacks ship no Jobs: these are theirs here (every dev stack has the pools
`small`, where a Job that names none runs, and `large`)."""


def _pools(stack: str, overrides: dict[str, object] | None = None) -> tuple[GpuPool, ...]:
    """The GPU pools the stack's ClusterHandle carries (a GPU-layer stack's: its cluster
    stack's), as the stacks build them from settings."""
    return tuple(gpu_pool_of(p) for p in _settings(stack, overrides).require_gpu_pools())


def _settings(stack: str, overrides: dict[str, object] | None = None) -> Settings:
    config = stack_config(stack, overrides)
    raw = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpuinfra:")}
    provider = {k: v for k, v in config.items() if k.endswith(":region")}
    return parse_settings(raw, stack=stack, provider_config=provider)


@cache
def _plan(stack: str) -> Plan:
    if stack == "k8s-dev":
        return build("k8s-dev")
    return gpu_layer_plan(stack, layer={"trainingJobs": JOBS})


@cache
def _off() -> Plan:
    return build("k8s-dev", {"kueue": "off", "kueueGpuQuota": None})


def _kueue(plan: Plan, kind: str) -> list[RecordedResource]:
    return plan.of_type(KUEUE + kind)


def _installed(plan: Plan) -> list[RecordedResource]:
    [install] = plan.of_type(INSTALL)
    return [r for r in plan.resources if r.parent == install.urn]


# --- the release, vendored ---


def test_the_vendored_release_is_the_pinned_one() -> None:
    objects = kueue_release.release_objects()
    kinds = [o["kind"] for o in objects]
    assert kinds.count("CustomResourceDefinition") == 11
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.k8s.io/kueue/kueue:v0.19.2"
    header = (vendored.VENDOR / kueue_release.KUEUE_MANIFEST).read_text()[:1500]
    assert "kubernetes-sigs/kueue@v0.19.2 (8eab68778fc1" in header


def test_an_edited_vendored_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_ = tmp_path / kueue_release.KUEUE_MANIFEST
    shutil.copy(vendored.VENDOR / kueue_release.KUEUE_MANIFEST, copy_)
    copy_.write_text(copy_.read_text().replace("v0.19.2", "v0.19.3", 1))
    monkeypatch.setattr(vendored, "VENDOR", tmp_path)
    with pytest.raises(vendored.VendoredManifestError, match="was edited"):
        vendored.vendored_objects(kueue_release.KUEUE_MANIFEST, kueue_release.KUEUE_MANIFEST_SHA256)


# --- install order ---


def test_crds_come_before_everything_else() -> None:
    """Every other object of the install waits for every CRD and the namespace (a custom
    resource or a webhook naming them fails otherwise); the queue's custom resources also
    wait for the controller whose webhooks (failurePolicy Fail) admit them; Jobs for the
    LocalQueue."""
    plan = _plan("k8s-dev")
    installed = _installed(plan)
    crds = [r for r in installed if r.type == CRD]
    assert len(crds) == 11
    first = {r.urn for r in crds} | {
        r.urn for r in installed if r.type == "kubernetes:core/v1:Namespace"
    }
    ctx = RuleContext(plan.resources)
    for r in installed:
        if r.urn not in first:
            assert first <= set(r.dependencies), r.name
    controller = next(r for r in installed if r.type == "kubernetes:apps/v1:Deployment")
    for r in [r for r in plan.resources if r.type.startswith(KUEUE)]:
        assert ctx.depends_on(r, controller), r.name
        assert all(ctx.depends_on(r, crd) for crd in crds), r.name
    [local] = _kueue(plan, "LocalQueue")
    for job in plan.of_type(JOB):
        assert ctx.depends_on(job, local)


# --- training Jobs in the queue ---


@pytest.mark.parametrize("stack", STACKS)
def test_every_training_job_is_suspended_in_the_queue(stack: str) -> None:
    plan = _plan(stack)
    jobs = plan.of_type(JOB)
    assert jobs
    for job in jobs:
        assert job.inputs["metadata"]["labels"][QUEUE_LABEL] == LOCAL_QUEUE
        assert job.inputs["spec"]["suspend"] is True
        # Kueue flips it on admission: a refresh reading `false` back must not make the next
        # `pulumi up` replace (kill) a running Job, whose whole spec is replace_on_changes.
        # The engine got the path in its own (camelCase) form, naming the input set above.
        assert "spec" in job.replace_on_changes
        assert job.ignore_changes == ["spec.suspend"]
    [local] = _kueue(plan, "LocalQueue")
    assert local.inputs["spec"] == {"clusterQueue": CLUSTER_QUEUE}
    assert {job.inputs["metadata"]["namespace"] for job in jobs} == {
        local.inputs["metadata"]["namespace"]
    }


def test_kueue_off_starts_jobs_at_once() -> None:
    plan = _off()
    for job in plan.of_type(JOB):
        assert QUEUE_LABEL not in job.inputs["metadata"]["labels"]
        assert "suspend" not in job.inputs["spec"]
        assert job.ignore_changes == []  # not queued: its suspend is Pulumi's, not Kueue's
    assert not plan.of_type(INSTALL) and not [r for r in plan.resources if KUEUE in r.type]


def test_existing_kueue_gets_only_the_queue() -> None:
    plan = build("k8s-dev", {"kueue": "existing"})
    assert not plan.of_type(INSTALL) and not plan.of_type(CRD)
    assert len(_kueue(plan, "ClusterQueue")) == 1
    assert all(j.inputs["spec"]["suspend"] for j in plan.of_type(JOB))


# --- quota and flavors ---


def _gpu_quotas(plan: Plan) -> list[str]:
    [queue] = _kueue(plan, "ClusterQueue")
    [group] = queue.inputs["spec"]["resourceGroups"]
    return [
        resource["nominalQuota"]
        for flavor in group["flavors"]
        for resource in flavor["resources"]
        if resource["name"] == "nvidia.com/gpu"
    ]


def test_the_gpu_quota_is_the_setting_or_the_pools_maxima() -> None:
    assert _gpu_quotas(_plan("k8s-dev")) == ["2"]  # Pulumi.k8s-dev.yaml
    assert _gpu_quotas(build("k8s-dev", {"kueueGpuQuota": 5})) == ["5"]
    # A cloud stack: each pool's maximum (dev: small 2 nodes x 1 GPU, large 1 node x 4 GPUs),
    # 6 together, the maxGpus default; the setting wins, capped by each pool's maximum.
    pools = _pools("dev")
    assert [p.name for p in pools] == ["small", "large"]
    assert _gpu_quotas(_plan("dev")) == [str(p.max_nodes * p.gpus_per_node) for p in pools]
    assert sum(map(int, _gpu_quotas(_plan("dev")))) == 6
    assert _gpu_quotas(build("dev", {"kueueGpuQuota": 1})) == ["1", "1"]
    assert _gpu_quotas(build("dev", {"kueueGpuQuota": 3})) == ["2", "3"]
    # maxGpus lowers a pool's maximum, and with it the queue's (prod: 4 nodes x 8 GPUs, its
    # GPU layer in prod-gpu).
    assert _gpu_quotas(gpu_layer_plan("prod", {"maxGpus": 24})) == ["24"]


@pytest.mark.parametrize("stack", ["alicloud-dev", "volcengine-dev"])
def test_a_gpu_layer_stack_takes_the_quota_from_its_cluster_stacks_pools(stack: str) -> None:
    """`gpuLayer: separate`: the GPU-layer stack reads the pools off the cluster stack's
    handle; `kueueGpuQuota` still wins."""
    pools = _pools(stack)
    assert len(pools) >= 2
    assert _gpu_quotas(gpu_layer_plan(stack)) == [str(p.max_nodes * p.gpus_per_node) for p in pools]
    assert _gpu_quotas(gpu_layer_plan(stack, layer={"kueueGpuQuota": 1})) == ["1"] * len(pools)


def test_a_bad_quota_is_refused_naming_the_key() -> None:
    with pytest.raises(SettingsError) as error:
        _settings("dev", {"kueueGpuQuota": -1})
    [problem] = [p for p in error.value.problems if p.key == "gpuinfra:kueueGpuQuota"]
    assert problem.value == -1
    assert "must be 0 (each GPU pool's maximum" in str(problem)


def test_cpu_and_memory_never_limit_before_gpus() -> None:
    """Kueue admits only requests its ClusterQueue covers: CPU and memory are covered at
    least as generously per GPU as the hungriest configured Job asks."""
    plan = build("k8s-dev", {"kueueGpuQuota": 4})
    [queue] = _kueue(plan, "ClusterQueue")
    [flavor] = queue.inputs["spec"]["resourceGroups"][0]["flavors"]
    quota = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    assert quota == {"cpu": "128", "memory": "1024Gi", "nvidia.com/gpu": "4"}
    hungry = [{"name": "big", "gpusPerNode": 1, "cpu": "48", "memory": "400Gi", "shmSizeGi": 8}]
    plan = build("k8s-dev", {"kueueGpuQuota": 4, "trainingJobs": hungry})
    [queue] = _kueue(plan, "ClusterQueue")
    [flavor] = queue.inputs["spec"]["resourceGroups"][0]["flavors"]
    quota = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    assert quota == {"cpu": "192", "memory": "1600Gi", "nvidia.com/gpu": "4"}


def _eligible(flavor: RecordedResource, pod: dict[str, Any]) -> bool:
    """Kueue's flavor check for a pod (kueue v0.19.2 pkg/scheduler/flavorassigner/
    flavorassigner.go:1227-1254, `checkFlavorForPodSets`): every NoSchedule/NoExecute taint
    of the flavor tolerated, and the pod's nodeSelector, on the flavor's label keys only,
    matching the flavor's nodeLabels."""
    spec = flavor.inputs["spec"]
    tolerated = {(t["key"], t.get("value"), t["effect"]) for t in pod.get("tolerations", [])}
    for taint in spec.get("nodeTaints", []):
        if not any(
            (key, effect) == (taint["key"], taint["effect"])
            and (value is None or value == taint["value"])
            for key, value, effect in tolerated
        ):
            return False
    labels = spec.get("nodeLabels", {})
    return all(labels[k] == v for k, v in pod.get("nodeSelector", {}).items() if k in labels)


@pytest.mark.parametrize("stack", STACKS)
def test_flavors_match_the_gpu_pools(stack: str) -> None:
    """A flavor per pool of the stack's handle: its node labels those the pool's Jobs select
    (labels of every node of the pool), its taints the pool's; each Job fits its own pool's
    flavor only, and what Kueue adds to an admitted Job's nodeSelector changes nothing."""
    plan = _plan(stack)
    flavors = {f.inputs["metadata"]["name"]: f for f in _kueue(plan, "ResourceFlavor")}
    [queue] = _kueue(plan, "ClusterQueue")
    listed = [entry["name"] for entry in queue.inputs["spec"]["resourceGroups"][0]["flavors"]]
    assert listed == list(flavors)
    if stack == "k8s-dev":  # an existing cluster: no pools, the handle's GPU labels and taint
        [flavor] = flavors.values()
        assert flavor.inputs["spec"]["nodeLabels"] == {"nvidia.com/gpu.present": "true"}
        assert flavor.inputs["spec"]["nodeTaints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
        ]
    else:
        pools = _pools(stack)
        assert listed == [f"gpuinfra-{p.name}" for p in pools]
        for pool in pools:
            spec = flavors[f"gpuinfra-{pool.name}"].inputs["spec"]
            assert spec["nodeLabels"] == pool.selector
            assert spec["nodeLabels"].items() <= pool.node_labels.items()
            assert [(t["key"], t["value"], t["effect"]) for t in spec["nodeTaints"]] == [
                (t.key, t.value, t.effect) for t in pool.taints
            ]
        assert any(len(p.taints) > 1 for p in pools)  # a pool's own taint is in its flavor
    jobs = plan.of_type(JOB)
    assert jobs
    for job in jobs:
        pod = job.inputs["spec"]["template"]["spec"]
        fits = [name for name, flavor in flavors.items() if _eligible(flavor, pod)]
        assert len(fits) == 1, (job.name, fits)
        [flavor] = [flavors[fits[0]]]
        assert flavor.inputs["spec"]["nodeLabels"] == pod["nodeSelector"]
        admitted = {**pod["nodeSelector"], **flavor.inputs["spec"]["nodeLabels"]}
        assert admitted == pod["nodeSelector"]
    if stack != "k8s-dev":
        [large] = [j for j in jobs if j.inputs["metadata"]["name"] == "on-large"]
        large_pod = large.inputs["spec"]["template"]["spec"]
        assert [n for n, f in flavors.items() if _eligible(f, large_pod)] == ["gpuinfra-large"]


def test_the_quota_is_required_where_no_max_gpus_is_known() -> None:
    with pytest.raises(Exception, match="kueueGpuQuota"):
        build("k8s-dev", {"kueueGpuQuota": None})


# --- the controller ---


def _config(plan: Plan) -> dict[str, Any]:
    [cm] = [
        r
        for r in _installed(plan)
        if r.type == "kubernetes:core/v1:ConfigMap"
        and r.inputs["metadata"]["name"] == kueue_release.CONFIG_MAP
    ]
    return dict(yaml.safe_load(cm.inputs["data"][kueue_release.CONFIG_FILE]))


def test_multi_node_jobs_are_all_or_nothing() -> None:
    config = _config(_plan("k8s-dev"))
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["waitForPodsReady"]["timeout"] == "20m"
    assert config["waitForPodsReady"]["blockAdmission"] is False
    assert config["integrations"] == {"frameworks": ["batch/job"]}
    assert (
        _config(build("k8s-dev", {"kueuePodsReadyTimeoutMinutes": 45}))["waitForPodsReady"][
            "timeout"
        ]
        == "45m"
    )
    with pytest.raises(Exception, match="kueuePodsReadyTimeoutMinutes"):
        build("k8s-dev", {"kueuePodsReadyTimeoutMinutes": 1})


def test_the_controller_stays_off_gpu_nodes_and_the_layers_own_pods() -> None:
    plan = _plan("dev")
    installed = _installed(plan)
    [deployment] = [r for r in installed if r.type == "kubernetes:apps/v1:Deployment"]
    pod = deployment.inputs["spec"]["template"]["spec"]
    assert "tolerations" not in pod  # the GPU pools are tainted: the system pool it is
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    # Off the nodes that carry every label all GPU pools share (the handle's gpu_node_labels):
    # one NotIn term per label, any of which a system node satisfies and no GPU node does.
    pools = _pools("dev")
    shared = common_labels(pools)
    assert shared
    assert [t["matchExpressions"] for t in terms["nodeSelectorTerms"]] == [
        [{"key": k, "operator": "NotIn", "values": [v]}] for k, v in sorted(shared.items())
    ]

    def schedulable(node: dict[str, str]) -> bool:
        return any(
            all(node.get(e["key"]) not in e["values"] for e in t["matchExpressions"])
            for t in terms["nodeSelectorTerms"]
        )

    assert not any(schedulable(dict(p.node_labels)) for p in pools)
    assert schedulable({"gpuinfra.io/pool": "system"})
    hooks = [
        hook
        for r in installed
        if r.type.endswith("WebhookConfiguration")
        for hook in r.inputs["webhooks"]
        if hook["name"] in kueue_release.WORKLOAD_WEBHOOKS
    ]
    assert len(hooks) == 6
    for hook in hooks:
        [expr] = hook["namespaceSelector"]["matchExpressions"]
        assert {"gpu-system", "monitoring", "kube-system", "kueue-system"} <= set(expr["values"])


# --- ProvisioningRequest: EKS's Cluster Autoscaler adds a Job's nodes at once ---


def test_eks_asks_the_autoscaler_for_a_whole_jobs_nodes() -> None:
    plan = _plan("dev")
    [check] = _kueue(plan, "AdmissionCheck")
    assert check.inputs["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    [config] = _kueue(plan, "ProvisioningRequestConfig")
    assert config.inputs["spec"]["provisioningClassName"] == ATOMIC_SCALE_UP
    [queue] = _kueue(plan, "ClusterQueue")
    assert queue.inputs["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": PROVISIONING_CHECK}]
    }
    [scaler] = [
        r
        for r in plan.of_type("kubernetes:apps/v1:Deployment")
        if r.inputs["metadata"]["name"] == "cluster-autoscaler"
    ]
    command = scaler.inputs["spec"]["template"]["spec"]["containers"][0]["command"]
    assert set(PROVISIONING_REQUEST_FLAGS) <= set(command)
    [role] = [
        r
        for r in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r.inputs["metadata"]["name"] == "cluster-autoscaler"
    ]
    assert any("provisioningrequests" in rule["resources"] for rule in role.inputs["rules"])
    [prov_crd] = [r for r in plan.of_type(CRD) if "provisioningrequests" in r.name]
    assert prov_crd.inputs["spec"]["group"] == "autoscaling.x-k8s.io"
    # Kueue sets up its ProvisioningRequest controller only if the API serves them at start.
    ctx = RuleContext(plan.resources)
    [kueue] = [r for r in _installed(plan) if r.type == "kubernetes:apps/v1:Deployment"]
    assert ctx.depends_on(kueue, prov_crd)


@pytest.mark.parametrize("stack", ["k8s-dev", "alicloud-dev", "tencentcloud-dev"])
def test_no_provisioning_check_where_gpuinfra_runs_no_autoscaler(stack: str) -> None:
    plan = _plan(stack)
    assert not _kueue(plan, "AdmissionCheck")
    [queue] = _kueue(plan, "ClusterQueue")
    assert "admissionChecksStrategy" not in queue.inputs["spec"]


# --- strict validation against Kueue's own CRD schemas ---


@cache
def _validator(kind: str) -> jsonschema.Draft7Validator:
    schema = kueue_release.crd_schema(kueue_release.release_objects(), kind, "v1beta2")
    return jsonschema.Draft7Validator(crd_schemas.strict(schema))


def validate_kueue_object(obj: dict[str, Any]) -> None:
    assert obj["apiVersion"] == kueue_release.KUEUE_API
    _validator(obj["kind"]).validate(obj)


def kueue_objects(plan: Plan) -> list[dict[str, Any]]:
    return [o for o in manifests(plan) if o["apiVersion"].startswith("kueue.x-k8s.io/")]


@pytest.mark.parametrize("stack", ["k8s-dev", "dev"])
def test_queue_objects_validate_against_the_release_crds(stack: str) -> None:
    objects = kueue_objects(_plan(stack))
    assert len(objects) >= 3
    for obj in objects:
        validate_kueue_object(obj)


def test_crd_validation_catches_mistakes() -> None:
    [queue] = [o for o in kueue_objects(_plan("k8s-dev")) if o["kind"] == "ClusterQueue"]
    misspelled = copy.deepcopy(queue)
    misspelled["spec"]["queueingStrategie"] = "StrictFIFO"
    with pytest.raises(jsonschema.ValidationError, match="queueingStrategie"):
        validate_kueue_object(misspelled)
    wrong = copy.deepcopy(queue)
    wrong["spec"]["queueingStrategy"] = "Random"
    with pytest.raises(jsonschema.ValidationError, match="Random"):
        validate_kueue_object(wrong)
    [flavor] = [o for o in kueue_objects(_plan("k8s-dev")) if o["kind"] == "ResourceFlavor"]
    no_key = copy.deepcopy(flavor)
    del no_key["spec"]["nodeTaints"][0]["key"]
    with pytest.raises(jsonschema.ValidationError, match="'key' is a required property"):
        validate_kueue_object(no_key)


# --- preemption by Kueue takes the checkpoint-and-resume path ---


def _pod_failure_action(policy: dict[str, Any], pod: dict[str, Any]) -> str:
    """Kubernetes' podFailurePolicy for a failed pod (pkg/controller/job/
    pod_failure_policy.go matchPodFailurePolicy): the first matching rule's action, else
    Count. onExitCodes looks at the named container's non-zero exit code; onPodConditions at
    the pod's conditions."""
    for rule in policy["rules"]:
        if "onExitCodes" in rule:
            match = rule["onExitCodes"]
            codes = [
                c["exitCode"]
                for c in pod["containers"]
                if c["name"] == match.get("containerName", c["name"]) and c["exitCode"] != 0
            ]
            hit = any((code in match["values"]) == (match["operator"] == "In") for code in codes)
        else:
            hit = any(
                (cond["type"], cond["status"]) == (want["type"], want["status"])
                for cond in pod["conditions"]
                for want in rule["onPodConditions"]
            )
        if hit:
            return str(rule["action"])
    return "Count"


def _failed_pod(exit_code: int, *, disruption: bool) -> dict[str, Any]:
    return {
        "containers": [{"name": CONTAINER, "exitCode": exit_code}],
        "conditions": [{"type": "DisruptionTarget", "status": "True"}] if disruption else [],
    }


@pytest.mark.parametrize("stack", ["k8s-dev", "dev"])
def test_kueue_preemption_is_handled_like_a_spot_reclaim(stack: str) -> None:
    """Kueue preempts (or evicts after waitForPodsReady) by suspending the Job (kueue v0.19.2
    pkg/controller/jobs/job/job_controller.go:169-180, `Stop`: spec.suspend = true). The Job
    controller then deletes the running pods (manageJob, "Deleting all active pods in
    suspended job"), after taking their tracking finalizer off (deleteJobPods,
    removeTrackingFinalizerPatch): they get SIGTERM and the Job's grace period, no
    DisruptionTarget condition (Kueue sets none: no such string in its pkg/), and their end
    is not counted against backoffLimit. The trainer writes its emergency checkpoint and
    exits 75, as after a drain: the policy ignores that exit as it ignores a spot reclaim, so
    even where a pod's end were counted, the preemption would cost no retry."""
    plan = _plan(stack)
    for job in plan.of_type(JOB):
        policy = job.inputs["spec"]["podFailurePolicy"]
        spot_drained = _failed_pod(PREEMPTED_EXIT_CODE, disruption=True)
        spot_killed = _failed_pod(137, disruption=True)
        kueue_preempted = _failed_pod(PREEMPTED_EXIT_CODE, disruption=False)
        assert _pod_failure_action(policy, spot_drained) == "Ignore"
        assert _pod_failure_action(policy, spot_killed) == "Ignore"
        assert _pod_failure_action(policy, kueue_preempted) == "Ignore"
        assert _pod_failure_action(policy, _failed_pod(1, disruption=False)) == "Count"
        assert _pod_failure_action(policy, _failed_pod(USER_ERROR_EXIT_CODE, disruption=False)) == (
            "FailJob"
        )
        # Enough grace for the emergency checkpoint: what the trainer needs on SIGTERM.
        assert job.inputs["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 30
        # A readmitted Job starts new pods only once the old are gone: no two writers.
        assert job.inputs["spec"]["podReplacementPolicy"] == "Failed"


# --- what `gpuinfra preview` says about the queue ---


def _queue(plan: Plan, cloud: str) -> QueueReport:
    report = queue_report(from_plan(plan, cloud))
    assert report is not None
    return report


def test_the_preview_shows_quota_fit_and_waits() -> None:
    report = _queue(_plan("k8s-dev"), "kubernetes")
    assert dict(report.gpu_quota) == {"gpuinfra-gpu": 2}
    jobs = {j.job: j for j in report.jobs}
    assert jobs["resnet50-single"].starts_with_first
    two = jobs["resnet50-two-nodes"]
    assert (two.gpus, two.fits_quota, two.starts_with_first) == (2, True, False)
    assert "all 2 pods' 2 GPUs at once" in two.waits_for
    small = _queue(build("k8s-dev", {"kueueGpuQuota": 1}), "kubernetes")
    never = next(j for j in small.jobs if j.job == "resnet50-two-nodes")
    assert not never.fits_quota and "never admitted" in never.waits_for
    eks = _queue(_plan("dev"), "aws")
    assert eks.admission_checks == (PROVISIONING_CHECK,)
    assert all("ProvisioningRequest" in j.waits_for for j in eks.jobs)
    text = text_summary(estimate(from_plan(_plan("k8s-dev"), "kubernetes")), [], queue=report)
    assert "Training queue (Kueue ClusterQueue gpuinfra-training): quota gpuinfra-gpu 2" in text
    assert queue_report(from_plan(_off(), "kubernetes")) is None


def test_the_preview_counts_each_pools_quota_apart() -> None:
    """dev: `small` admits 2 GPUs, `large` 4. The one-GPU Job takes one of small's; the
    two-node Job (small) then waits for it, while the Job pinned to `large` starts: it never
    competes for small's quota."""
    report = _queue(_plan("dev"), "aws")
    assert dict(report.gpu_quota) == {"gpuinfra-small": 2, "gpuinfra-large": 4}
    jobs = {j.job: j for j in report.jobs}
    assert [jobs[n].starts_with_first for n in ("one-node", "two-nodes", "on-large")] == [
        True,
        False,
        True,
    ]
    assert all(j.fits_quota for j in report.jobs)
    big = _queue(gpu_layer_plan("dev", layer={"trainingJobs": [*JOBS, BIG_SMALL]}), "aws")
    [never] = [j for j in big.jobs if j.job == "three-small"]
    # 3 GPUs fit large's quota, but the Job runs on small (2): never admitted.
    assert not never.fits_quota and "the quota is 2" in never.waits_for


BIG_SMALL = {"name": "three-small", "pool": "small", "gpusPerNode": 1, "nodes": 3}


# --- Kueue's certificate rotator owns its Secret's data and the CA bundles ---


def _at(node: Any, path: tuple[str, ...]) -> list[Any]:
    """The values at `path` in `node` (`*`: every list item)."""
    if not path:
        return [node]
    head, rest = path[0], path[1:]
    if head == "*":
        return [v for item in (node if isinstance(node, list) else []) for v in _at(item, rest)]
    return _at(node[head], rest) if isinstance(node, dict) and head in node else []


def _rotated_fields(obj: dict[str, Any]) -> list[str]:
    """The paths of `obj` that Kueue's rotator writes and that `obj` sets (even empty)."""
    paths = kueue_release.ROTATED_BY_KUEUE.get((obj["kind"], obj["metadata"]["name"]), ())
    return [".".join(path) for path in paths for _ in _at(obj, path)]


def test_pulumi_never_owns_what_kueues_cert_rotator_writes() -> None:
    """The rotator fills the Secret's data and the webhooks' and conversion CRDs' caBundle
    (kueue v0.19.2 pkg/util/cert/cert.go:139-178): none is among the registered objects'
    inputs, so a server-side apply leaves them to Kueue and a refresh does not take them in;
    a release that shipped them (placeholders such as `caBundle: Cg==`, an empty `data`) would
    have them dropped."""
    installed = {
        (r.inputs.get("kind") or r.type.rsplit(":", 1)[-1], r.inputs["metadata"]["name"]): r
        for r in _installed(_plan("k8s-dev"))
    }
    # Every object the rotator writes into is one gpuinfra installs: the check covers them all.
    assert set(kueue_release.ROTATED_BY_KUEUE) <= set(installed)
    for key in kueue_release.ROTATED_BY_KUEUE:
        obj = {"kind": key[0], **installed[key].inputs}
        assert _rotated_fields(obj) == [], key
    secret = installed[("Secret", kueue_release.WEBHOOK_CERT_SECRET)]
    assert "data" not in secret.inputs and "stringData" not in secret.inputs
    # What a release with placeholders would register, and what gpuinfra makes of it.
    shipped = [
        {"kind": "Secret", "metadata": {"name": kueue_release.WEBHOOK_CERT_SECRET}, "data": {}},
        {
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "kueue-mutating-webhook-configuration"},
            "webhooks": [
                {"name": "mjob.kb.io", "clientConfig": {"caBundle": "Cg==", "service": {}}},
                {"name": "mpod.kb.io", "clientConfig": {"caBundle": ""}},
            ],
        },
        {
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "workloads.kueue.x-k8s.io"},
            "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": "Cg=="}}}},
        },
    ]
    assert [len(_rotated_fields(o)) for o in shipped] == [1, 2, 1]
    cleaned = [kueue_release.leave_to_cert_rotator(copy.deepcopy(o)) for o in shipped]
    assert [_rotated_fields(o) for o in cleaned] == [[], [], []]
    assert cleaned[1]["webhooks"][0]["clientConfig"] == {"service": {}}
