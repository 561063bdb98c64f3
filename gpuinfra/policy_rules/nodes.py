"""Node rules: IMDSv2 on AWS nodes, and GPU pools tainted so only GPU pods land there."""

from __future__ import annotations

from collections.abc import Iterator

from components import catalog

from ..planview import Resource, StackView
from .model import rule

GPU_TAINT_KEY = "nvidia.com/gpu"


@rule(
    "aws-imdsv2-required",
    "mandatory",
    "AWS nodes require IMDSv2 (session tokens), so a pod cannot read node credentials with a "
    "single forged GET.",
)
def aws_imdsv2_required(resource: Resource, view: StackView) -> Iterator[str]:
    i = resource.inputs
    if resource.type in ("aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/instance:Instance"):
        if (i.get("metadataOptions") or {}).get("httpTokens") != "required":
            yield "metadataOptions.httpTokens is not `required`"
    elif resource.type == "aws:eks/nodeGroup:NodeGroup":
        # The template's id is unknown until the template exists: only its presence counts
        # here, so read the keys, never the value (`in` on pulumi-policy's proxy would read
        # it); the template itself meets the check above.
        keys = set(i.get("launchTemplate") or {})
        if not keys & {"id", "name"}:
            yield (
                "no launch template: EKS's default leaves IMDSv1 on; use a launch template "
                "with httpTokens=required"
            )


def _gpu_pool(resource: Resource) -> tuple[bool, list[dict]]:
    """(is a GPU pool, its taints) for the node-pool types of each cloud."""
    i = resource.inputs
    if resource.type == "aws:eks/nodeGroup:NodeGroup":
        ami = str(i.get("amiType") or "")
        gpu = (
            "NVIDIA" in ami
            or "_GPU" in ami
            or any(catalog.find("aws", str(t)) for t in i.get("instanceTypes") or [])
        )
        return gpu, list(i.get("taints") or [])
    if resource.type == "alicloud:cs/nodePool:NodePool":
        gpu = any(catalog.find("alicloud", str(t)) for t in i.get("instanceTypes") or [])
        return gpu, list(i.get("taints") or [])
    if resource.type == "tencentcloud:Kubernetes/nodePool:NodePool":
        instance = (i.get("autoScalingConfig") or {}).get("instanceType")
        return catalog.find("tencentcloud", str(instance)) is not None, list(i.get("taints") or [])
    if resource.type == "volcenginecc:vke/nodePool:NodePool":  # Volcano Engine (issue 27)
        types = (i.get("nodeConfig") or {}).get("instanceTypeIds") or []
        gpu = any(catalog.find("volcengine", str(t)) for t in types)
        return gpu, list((i.get("kubernetesConfig") or {}).get("taints") or [])
    return False, []


def _has_gpu_taint(taints: list[dict]) -> bool:
    return any(
        t.get("key") == GPU_TAINT_KEY
        and str(t.get("effect", "")).replace("_", "").lower() == "noschedule"
        for t in taints
    )


@rule(
    "gpu-pool-tainted",
    "mandatory",
    f"GPU node pools carry the `{GPU_TAINT_KEY}` NoSchedule taint, so pods that do not ask "
    "for a GPU stay off GPU nodes.",
)
def gpu_pool_tainted(resource: Resource, view: StackView) -> Iterator[str]:
    gpu, taints = _gpu_pool(resource)
    if gpu and not _has_gpu_taint(taints):
        yield f"GPU node pool without a {GPU_TAINT_KEY} NoSchedule taint"
