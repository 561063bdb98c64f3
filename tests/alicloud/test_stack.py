"""The whole Alibaba Cloud stack: the ClusterHandle, names, tags, parents, the CLI preview."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from typing import Any

import pulumi

from components.cluster_handle import ClusterHandle
from components.settings import load_settings
from gpuinfra.engine import Plan, run_program
from stacks import build_stack
from tests.alicloud.conftest import PREFIX, STACK
from tests.conftest import ROOT, stack_config

UNTAGGABLE = {
    "alicloud:cs/autoscalingConfig:AutoscalingConfig",  # cluster settings, takes no tags
    "alicloud:ecs/securityGroupRule:SecurityGroupRule",
    "alicloud:kms/alias:Alias",
    "alicloud:oss/bucketAcl:BucketAcl",
    "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
}


def test_handle_says_ack_runs_the_device_plugin_and_gives_oss_and_rrsa() -> None:
    handles: list[ClusterHandle] = []
    resolved: dict[str, Any] = {}

    def program() -> None:
        handle = build_stack(load_settings())
        handles.append(handle)
        [(annotation, role)] = handle.service_account_annotations.items()
        pulumi.export("_annotation", annotation)
        pulumi.export("_role", role)
        pulumi.export("_uri", handle.bucket.uri)

    plan = run_program(program, project="gpuinfra", stack=STACK, config=stack_config(STACK))
    resolved.update(plan.outputs)
    [handle] = handles
    assert handle.cloud == "alicloud"
    assert handle.platform_runs_device_plugin is True
    assert handle.gpu_taint.key == "nvidia.com/gpu" and handle.gpu_taint.effect == "NoSchedule"
    assert handle.gpu_node_labels["gpuinfra.io/accelerator"] == "A10"
    assert handle.bucket.scheme == "oss"
    assert handle.bucket.endpoint == "https://oss-cn-hangzhou-internal.aliyuncs.com"
    assert resolved["_uri"] == f"oss://{resolved['bucketName']}"
    assert resolved["_annotation"] == "pod-identity.alibabacloud.com/role-name"
    assert resolved["_role"] == f"{PREFIX}-training"
    assert (handle.training_namespace, handle.training_service_account) == ("training", "trainer")


def test_names_unique_everything_tagged_and_parented(ali_plan: Plan) -> None:
    keys = Counter((r.type, r.name) for r in ali_plan.resources)
    assert [k for k, n in keys.items() if n > 1] == []
    components = {r.urn for r in ali_plan.resources if not r.custom}
    for resource in ali_plan.resources:
        if not resource.custom:
            assert resource.type.startswith(("gpuinfra:alicloud:", "gpuinfra:kubernetes:")), (
                resource.type
            )
            continue
        assert resource.parent in components, resource.name
        if resource.type.startswith(("kubernetes:", "pulumi:providers:")):
            continue  # the GPU layer: labelled Kubernetes objects, tested in tests/kubernetes/
        if resource.type not in UNTAGGABLE:
            tags = resource.inputs.get("tags") or {}
            assert tags.get("gpuinfra:stack") == STACK, resource.name
            assert tags.get("gpuinfra:component"), resource.name


def test_preview_json_shows_the_gpu_pool() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", STACK, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["cloud"] == "alicloud"
    [gpu] = [r for r in plan["resources"] if r["name"] == f"{PREFIX}-small-pool"]
    assert gpu["type"] == "alicloud:cs/nodePool:NodePool"
    assert gpu["inputs"]["instanceTypes"] == ["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge"]
    assert gpu["inputs"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "gpuinfra.io/pool", "value": "small", "effect": "NoSchedule"},
    ]
    assert gpu["inputs"]["scalingConfig"]["minSize"] == 0
    types = {r["type"] for r in plan["resources"]}
    assert "alicloud:vpc/natGateway:NatGateway" not in types  # ACK makes the NAT gateway
    for expected in (
        "alicloud:cs/managedKubernetes:ManagedKubernetes",
        "alicloud:oss/bucket:Bucket",
        "alicloud:ram/role:Role",
        "alicloud:kms/key:Key",
    ):
        assert expected in types


def test_readme_says_what_an_account_needs_and_what_idle_costs() -> None:
    """Finding 8 and the issue's README asks: prerequisites, the CLB fee, the SLS projects."""
    from components.catalog import fees

    text = (ROOT / "README.md").read_text()
    section = " ".join(
        text[text.index("## Alibaba Cloud (ACK)") : text.index("## Tencent")].split()
    )
    for needed in (
        "Auto Scaling",  # node pools are ESS scaling groups
        "Quick Authorization",  # ACK's service roles
        "AliyunCSManagedSecurityRole",
        "AliyunCSFullAccess",  # RAM rights
        "Quota Center",
        "API server's CLB",  # idle cost
        "SLS",
        "delete_options",  # what destroy removes
        "Upgrading ACK",
    ):
        assert needed in section, needed
    assert "ACK cannot limit a public API endpoint" not in section
    assert fees.ALICLOUD_API_SERVER_CLB.usd_per_hour is None and fees.ALICLOUD_API_SERVER_CLB.note
