"""Policy rules as plain functions over a plan, shared by `gpuinfra preview` and the
CrossGuard pack in `policy/`. Each rule is mandatory (fails the preview, exit 1) or
advisory; a mandatory rule's finding turns advisory when the stack opted in explicitly.
"""

from __future__ import annotations

from ..planview import StackView
from .model import Finding, Level, Rule
from .network import cluster_endpoint_not_world_open, no_world_open_admin_ports
from .nodes import aws_imdsv2_required, gpu_pool_tainted
from .storage import bucket_encrypted, bucket_private, bucket_protected, bucket_versioned
from .workloads import (
    container_resource_limits,
    helm_release_contents_unchecked,
    helm_release_pinned,
    image_pinned,
    training_job_checkpoints_periodically,
    training_job_restartable,
)

RULES: tuple[Rule, ...] = (
    no_world_open_admin_ports,
    cluster_endpoint_not_world_open,
    bucket_encrypted,
    bucket_versioned,
    bucket_private,
    bucket_protected,
    aws_imdsv2_required,
    gpu_pool_tainted,
    training_job_restartable,
    training_job_checkpoints_periodically,
    container_resource_limits,
    image_pinned,
    helm_release_pinned,
    helm_release_contents_unchecked,
)


def evaluate(view: StackView, rules: tuple[Rule, ...] = RULES) -> list[Finding]:
    """Every finding, mandatory first, in a stable order."""
    findings = [f for r in rules for f in r.check(view)]
    return sorted(findings, key=lambda f: (f.level != "mandatory", f.rule, f.resource, f.message))


def has_mandatory(findings: list[Finding]) -> bool:
    return any(f.level == "mandatory" for f in findings)


__all__ = ["RULES", "Finding", "Level", "Rule", "evaluate", "has_mandatory"]
