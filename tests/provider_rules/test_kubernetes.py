"""pulumi-kubernetes' await behaviours as provider rules: each one broken on purpose."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuinfra.engine import Plan, run_program
from gpuinfra.provider_rules import check_resources
from gpuinfra.provider_rules.kubernetes import (
    claim_binds_to_its_volume,
    custom_resource_after_its_crd,
    deployment_waits_for_nodes,
    job_needs_skip_await,
)
from tests.conftest import build

JOB = "kubernetes:batch/v1:Job"


def _plan(program: Callable[[], None]) -> Plan:
    return run_program(program, project="p", stack="s", config={}, provider_rules=False)


def _rules(plan: Plan) -> list[tuple[str, str, str]]:
    """The Kubernetes rules' refusals (the made-up node groups here break AWS rules too)."""
    return [
        (r.rule, r.name, r.field)
        for r in check_resources(plan.resources)
        if r.rule.startswith("kubernetes.")
    ]


def test_job_needs_skip_await() -> None:
    """The shipped Jobs pass; one without the annotation is refused, naming it."""
    assert job_needs_skip_await.__doc__
    plan = build("k8s-dev")
    assert not check_resources(plan.resources)
    broken = copy.deepcopy(plan.resources)
    [job, *_] = [r for r in broken if r.type == JOB]
    del job.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"]
    [refusal] = check_resources(broken)
    assert (refusal.rule, refusal.field) == (
        "kubernetes.job_needs_skip_await",
        "metadata.annotations.pulumi.com/skipAwait",
    )
    assert "10 minutes" in refusal.message and "pulumi-kubernetes" in refusal.source
    job.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] = "false"
    assert len(check_resources(broken)) == 1


def _deployment(opts: pulumi.ResourceOptions | None = None, annotations: dict | None = None):  # type: ignore[no-untyped-def]
    return k8s.apps.v1.Deployment(
        "autoscaler",
        metadata={"name": "cluster-autoscaler", "annotations": annotations or {}},
        spec={
            "selector": {"match_labels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "a", "image": "a:1"}]},
            },
        },
        opts=opts,
    )


def _pools(min_size: int) -> tuple[aws.eks.NodeGroup, aws.eks.NodeGroup]:
    def group(name: str, size: int) -> aws.eks.NodeGroup:
        return aws.eks.NodeGroup(
            name,
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["subnet-1"],
            scaling_config={"min_size": size, "max_size": 2, "desired_size": size},
        )

    return group("system", min_size), group("gpu", 0)


def test_deployment_waits_for_nodes() -> None:
    """Awaited until ready: in an update that creates node pools it must wait for one with
    nodes, directly or through its provider; a pool that scales to zero does not count."""
    assert deployment_waits_for_nodes.__doc__

    def racing() -> None:
        _pools(1)
        _deployment()

    assert _rules(_plan(racing)) == [
        ("kubernetes.deployment_waits_for_nodes", "autoscaler", "dependsOn")
    ]

    def through_provider() -> None:
        system, _ = _pools(1)
        provider = k8s.Provider("k8s", opts=pulumi.ResourceOptions(depends_on=[system]))
        _deployment(pulumi.ResourceOptions(provider=provider))

    assert _rules(_plan(through_provider)) == []

    def only_the_empty_pool() -> None:
        _, gpu = _pools(1)
        _deployment(pulumi.ResourceOptions(depends_on=[gpu]))

    assert len(_rules(_plan(only_the_empty_pool))) == 1

    def not_awaited() -> None:
        _pools(1)
        _deployment(annotations={"pulumi.com/skipAwait": "true"})

    assert _rules(_plan(not_awaited)) == []


def test_shipped_deployments_wait_for_the_system_pool(dev_plan: Plan) -> None:
    """The EKS stack's cluster autoscaler (a Deployment) waits for the system node group."""
    deployments = dev_plan.of_type("kubernetes:apps/v1:Deployment")
    assert deployments and not check_resources(dev_plan.resources)


def _service_monitor(opts: pulumi.ResourceOptions | None = None) -> None:
    k8s.apiextensions.CustomResource(
        "monitor",
        api_version="monitoring.coreos.com/v1",
        kind="ServiceMonitor",
        metadata={"name": "m"},
        spec={"selector": {}, "endpoints": []},
        opts=opts,
    )


def _chart() -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release("kps", chart="kube-prometheus-stack", version="81.6.2")


def test_custom_resource_after_its_crd() -> None:
    """Where this update installs the CRD (a chart that ships it, or the CRD itself), the
    custom resource must wait for it; with no installer here the CRD is the cluster's."""
    assert custom_resource_after_its_crd.__doc__

    def racing_the_chart() -> None:
        _chart()
        _service_monitor()

    assert _rules(_plan(racing_the_chart)) == [
        ("kubernetes.custom_resource_after_its_crd", "monitor", "dependsOn")
    ]

    def after_the_chart() -> None:
        _service_monitor(pulumi.ResourceOptions(depends_on=[_chart()]))

    assert _rules(_plan(after_the_chart)) == []

    def racing_the_crd() -> None:
        k8s.apiextensions.v1.CustomResourceDefinition(
            "crd",
            spec={
                "group": "monitoring.coreos.com",
                "names": {"kind": "ServiceMonitor", "plural": "servicemonitors"},
                "scope": "Namespaced",
                "versions": [],
            },
        )
        _service_monitor()

    assert len(_rules(_plan(racing_the_crd))) == 1
    assert _rules(_plan(_service_monitor)) == []


def test_a_prometheus_rule_after_its_crd_too() -> None:
    """The GPU alerts' PrometheusRule is a custom resource of the same chart's CRDs."""

    def rule(opts: pulumi.ResourceOptions | None = None) -> None:
        k8s.apiextensions.CustomResource(
            "alerts",
            api_version="monitoring.coreos.com/v1",
            kind="PrometheusRule",
            metadata={"name": "a"},
            spec={"groups": []},
            opts=opts,
        )

    def racing_the_chart() -> None:
        _chart()
        rule()

    assert _rules(_plan(racing_the_chart)) == [
        ("kubernetes.custom_resource_after_its_crd", "alerts", "dependsOn")
    ]
    assert _rules(_plan(lambda: rule(pulumi.ResourceOptions(depends_on=[_chart()])))) == []


def test_the_gpu_layer_orders_its_service_monitor_after_kube_prometheus_stack() -> None:
    plan = build("k8s-dev", {"monitoringKubePrometheusStack": True})  # rules on: builds
    [monitor] = plan.of_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")
    [chart] = plan.of_type("kubernetes:helm.sh/v3:Release")
    assert chart.urn in monitor.dependencies


def test_custom_resource_after_its_crd_covers_kueue() -> None:
    """Kueue's queue objects (issue 19) wait for the CRDs the same update installs."""

    def crd() -> k8s.apiextensions.v1.CustomResourceDefinition:
        return k8s.apiextensions.v1.CustomResourceDefinition(
            "crd",
            spec={
                "group": "kueue.x-k8s.io",
                "names": {"kind": "ClusterQueue", "plural": "clusterqueues"},
                "scope": "Cluster",
                "versions": [],
            },
        )

    def queue(opts: pulumi.ResourceOptions | None = None) -> None:
        k8s.apiextensions.CustomResource(
            "queue",
            api_version="kueue.x-k8s.io/v1beta2",
            kind="ClusterQueue",
            metadata={"name": "q"},
            spec={},
            opts=opts,
        )

    def racing() -> None:
        crd()
        queue()

    assert _rules(_plan(racing)) == [
        ("kubernetes.custom_resource_after_its_crd", "queue", "dependsOn")
    ]
    assert _rules(_plan(lambda: queue(pulumi.ResourceOptions(depends_on=[crd()])))) == []


def test_claim_binds_to_its_volume() -> None:
    """The dataset claims of the shipped k8s-dev stack bind; each way of breaking the pairing
    is refused, naming the field."""
    assert claim_binds_to_its_volume.__doc__
    plan = build("k8s-dev")
    claims = [r for r in plan.resources if r.type == "kubernetes:core/v1:PersistentVolumeClaim"]
    assert claims and not check_resources(plan.resources)

    def refusal_fields(change: Callable[[dict, dict], None]) -> list[str]:
        broken = copy.deepcopy(plan.resources)
        [claim] = [r for r in broken if r.type == "kubernetes:core/v1:PersistentVolumeClaim"]
        [volume] = [r for r in broken if r.type == "kubernetes:core/v1:PersistentVolume"]
        change(claim.inputs["spec"], volume.inputs["spec"])
        return [
            r.field
            for r in check_resources(broken)
            if r.rule == "kubernetes.claim_binds_to_its_volume"
        ]

    assert refusal_fields(lambda c, v: c.pop("storageClassName")) == ["spec.storageClassName"]
    assert refusal_fields(lambda c, v: c.update(storageClassName="gp3")) == [
        "spec.storageClassName"
    ]
    assert refusal_fields(lambda c, v: c.update(accessModes=["ReadWriteMany"])) == [
        "spec.accessModes"
    ]
    assert refusal_fields(lambda c, v: c["resources"]["requests"].update(storage="2Gi")) == [
        "spec.resources.requests.storage"
    ]
    assert refusal_fields(lambda c, v: v["claimRef"].update(name="other")) == ["spec.volumeName"]
