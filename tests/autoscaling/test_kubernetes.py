"""Bring your own cluster: nothing scales nodes from here; the preview says whose job it is."""

from __future__ import annotations

from gpuinfra.engine import Plan


def test_nothing_installed_and_the_owner_scales(k8s_plan: Plan) -> None:
    assert not plan_has_autoscaler(k8s_plan)
    assert k8s_plan.outputs["gpuNodeScaling"] == "managed by the cluster's owner"


def plan_has_autoscaler(plan: Plan) -> bool:
    return any(
        r.type == "gpuinfra:kubernetes:ClusterAutoscaler"
        or (r.type.startswith("kubernetes:") and r.name.endswith("cluster-autoscaler"))
        for r in plan.resources
    )
