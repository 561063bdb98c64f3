# ruff: noqa: E501  (tables of hand-made resources read best one per line)
"""Each policy rule fails on a bad resource and passes on a good one, on every cloud."""

from __future__ import annotations

from typing import Any

import pytest

from gpuinfra.planview import Resource, StackView, from_plan, view
from gpuinfra.policy_rules import RULES, evaluate, has_mandatory
from gpuinfra.policy_rules.model import Rule
from gpuinfra.policy_rules.network import cluster_endpoint_not_world_open, no_world_open_admin_ports
from gpuinfra.policy_rules.nodes import aws_imdsv2_required, gpu_pool_tainted
from gpuinfra.policy_rules.storage import (
    bucket_encrypted,
    bucket_private,
    bucket_protected,
    bucket_versioned,
)
from gpuinfra.policy_rules.workloads import (
    container_resource_limits,
    helm_release_contents_unchecked,
    helm_release_pinned,
    image_pinned,
    image_problem,
    training_job_checkpoints_periodically,
    training_job_restartable,
)
from tests.conftest import build


def res(type_: str, inputs: dict[str, Any], *, name: str = "r", **kw: Any) -> Resource:
    return Resource(urn=f"urn:{type_}::{name}", type=type_, name=name, inputs=inputs, **kw)


def check(rule: Rule, *resources: Resource, config: dict[str, str] | None = None) -> list[str]:
    return [f.level for f in rule.check(view(resources, config=config))]


# --- admin ports --------------------------------------------------------------------------
AWS_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


@pytest.mark.parametrize(
    "bad, good",
    [
        (
            res(AWS_INGRESS, {"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "0.0.0.0/0"}),
            res(AWS_INGRESS, {"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "203.0.113.0/24"}),
        ),
        (
            res(AWS_INGRESS, {"ipProtocol": "-1", "cidrIpv6": "::/0"}),
            res(AWS_INGRESS, {"ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "cidrIpv4": "0.0.0.0/0"}),
        ),
        (
            res("aws:ec2/securityGroup:SecurityGroup", {"ingress": [{"protocol": "tcp", "fromPort": 8000, "toPort": 9000, "cidrBlocks": ["0.0.0.0/0"]}]}),
            res("aws:ec2/securityGroup:SecurityGroup", {"ingress": [{"protocol": "tcp", "fromPort": 8000, "toPort": 9000, "cidrBlocks": ["10.0.0.0/8"]}]}),
        ),
        (
            res("alicloud:ecs/securityGroupRule:SecurityGroupRule", {"type": "ingress", "ipProtocol": "tcp", "portRange": "6006/6006", "cidrIp": "0.0.0.0/0"}),
            res("alicloud:ecs/securityGroupRule:SecurityGroupRule", {"type": "ingress", "ipProtocol": "tcp", "portRange": "6006/6006", "cidrIp": "10.0.0.0/8"}),
        ),
        (
            res("tencentcloud:Security/groupRuleSet:GroupRuleSet", {"ingresses": [{"action": "ACCEPT", "protocol": "TCP", "port": "22,443", "cidrBlock": "0.0.0.0/0"}]}),
            res("tencentcloud:Security/groupRuleSet:GroupRuleSet", {"ingresses": [{"action": "DROP", "protocol": "TCP", "port": "22", "cidrBlock": "0.0.0.0/0"}]}),
        ),
    ],
)  # fmt: skip
def test_world_open_admin_ports(bad: Resource, good: Resource) -> None:
    assert check(no_world_open_admin_ports, bad) == ["mandatory"]
    assert check(no_world_open_admin_ports, good) == []


def test_opt_in_turns_world_open_ports_advisory() -> None:
    bad = res(
        AWS_INGRESS, {"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "0.0.0.0/0"}
    )
    config = {"gpuinfra:allowPublicAdminAccess": "true"}
    [finding] = no_world_open_admin_ports.check(view([bad], config=config))
    assert finding.level == "advisory" and "allowPublicAdminAccess" in finding.message


# --- API endpoint -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad, good",
    [
        (
            res("aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": True}}),
            res("aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]}}),
        ),
        (
            res("aws:eks/cluster:Cluster", {"vpcConfig": {"publicAccessCidrs": ["0.0.0.0/0"]}}),
            res("aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": False}}),
        ),
        (
            res("alicloud:cs/managedKubernetes:ManagedKubernetes", {}),
            res("alicloud:cs/managedKubernetes:ManagedKubernetes", {"slbInternetEnabled": False}),
        ),
        (
            res("tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint", {"clusterInternet": True}),
            res("tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint", {"clusterInternet": True, "clusterInternetSecurityGroup": "sg-1"}),
        ),
    ],
)  # fmt: skip
def test_cluster_endpoint(bad: Resource, good: Resource) -> None:
    assert check(cluster_endpoint_not_world_open, bad) == ["mandatory"]
    assert check(cluster_endpoint_not_world_open, good) == []


# --- buckets ------------------------------------------------------------------------------
def aws_bucket(
    *, encrypted: bool = True, versioned: bool = True, private: bool = True, protect: bool = True
) -> list[Resource]:
    bucket = res("aws:s3/bucket:Bucket", {}, name="data", id="data-123", protect=protect)
    parts = [bucket]
    if encrypted:
        parts.append(res(
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            {"bucket": "data-123", "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]},
            name="enc",
        ))  # fmt: skip
    if versioned:
        parts.append(res("aws:s3/bucketVersioning:BucketVersioning", {"bucket": "data-123", "versioningConfiguration": {"status": "Enabled"}}, name="ver"))  # fmt: skip
    if private:
        flags = (
            "blockPublicAcls",
            "blockPublicPolicy",
            "ignorePublicAcls",
            "restrictPublicBuckets",
        )
        parts.append(res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", {"bucket": "data-123", **dict.fromkeys(flags, True)}, name="pab"))  # fmt: skip
    return parts


@pytest.mark.parametrize(
    "rule, aspect",
    [(bucket_encrypted, "encrypted"), (bucket_versioned, "versioned"), (bucket_private, "private"), (bucket_protected, "protect")],
)  # fmt: skip
def test_aws_bucket_rules(rule: Rule, aspect: str) -> None:
    assert check(rule, *aws_bucket()) == []
    assert check(rule, *aws_bucket(**{aspect: False})) == ["mandatory"]


def test_an_encryption_config_for_another_bucket_does_not_count() -> None:
    parts = aws_bucket(encrypted=False)
    other = aws_bucket()[1]
    moved = Resource(**{**other.__dict__, "inputs": {**other.inputs, "bucket": "other-bucket"}})
    assert check(bucket_encrypted, *parts, moved) == ["mandatory"]


def test_unprotected_bucket_opted_out_is_advisory() -> None:
    levels = check(
        bucket_protected, *aws_bucket(protect=False), config={"gpuinfra:protectBucket": "false"}
    )
    assert levels == ["advisory"]


GOOD_OSS = {"acl": "private", "serverSideEncryptionRule": {"sseAlgorithm": "AES256"}, "versioning": {"status": "Enabled"}}  # fmt: skip
GOOD_COS = {"acl": "private", "encryptionAlgorithm": "AES256", "versioningEnable": True}


@pytest.mark.parametrize(
    "type_, good, rule, broken",
    [
        ("alicloud:oss/bucket:Bucket", GOOD_OSS, bucket_encrypted, {"serverSideEncryptionRule": None}),
        ("alicloud:oss/bucket:Bucket", GOOD_OSS, bucket_versioned, {"versioning": {"status": "Suspended"}}),
        ("alicloud:oss/bucket:Bucket", GOOD_OSS, bucket_private, {"acl": "public-read"}),
        ("tencentcloud:Cos/bucket:Bucket", GOOD_COS, bucket_encrypted, {"encryptionAlgorithm": None}),
        ("tencentcloud:Cos/bucket:Bucket", GOOD_COS, bucket_versioned, {"versioningEnable": False}),
        ("tencentcloud:Cos/bucket:Bucket", GOOD_COS, bucket_private, {"acl": "public-read-write"}),
    ],
)  # fmt: skip
def test_other_clouds_bucket_rules(type_: str, good: dict, rule: Rule, broken: dict) -> None:
    assert check(rule, res(type_, good, protect=True)) == []
    assert check(rule, res(type_, {**good, **broken}, protect=True)) == ["mandatory"]
    assert check(bucket_protected, res(type_, good, protect=False)) == ["mandatory"]


def test_alicloud_separate_encryption_resource_counts() -> None:
    bucket = res("alicloud:oss/bucket:Bucket", {"bucket": "b1"}, name="b", id="b1")
    sse = res("alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption", {"bucket": "b1", "sseAlgorithm": "KMS"}, name="s")  # fmt: skip
    assert check(bucket_encrypted, bucket, sse) == []
    assert check(bucket_encrypted, bucket) == ["mandatory"]


# --- nodes --------------------------------------------------------------------------------
def test_imdsv2() -> None:
    good = res(
        "aws:ec2/launchTemplate:LaunchTemplate", {"metadataOptions": {"httpTokens": "required"}}
    )
    bad = res(
        "aws:ec2/launchTemplate:LaunchTemplate", {"metadataOptions": {"httpTokens": "optional"}}
    )
    assert check(aws_imdsv2_required, good) == []
    assert check(aws_imdsv2_required, bad) == ["mandatory"]
    no_template = res("aws:eks/nodeGroup:NodeGroup", {"instanceTypes": ["m6i.large"]})
    assert check(aws_imdsv2_required, no_template) == ["mandatory"]


TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "type_, inputs",
    [
        ("aws:eks/nodeGroup:NodeGroup", {"amiType": "AL2023_x86_64_NVIDIA", "instanceTypes": ["g5.xlarge"]}),
        ("alicloud:cs/nodePool:NodePool", {"instanceTypes": ["ecs.gn7i-c8g1.2xlarge"]}),
        ("tencentcloud:Kubernetes/nodePool:NodePool", {"autoScalingConfig": {"instanceType": "GN7.2XLARGE32"}}),
    ],
)  # fmt: skip
def test_gpu_pool_tainted(type_: str, inputs: dict) -> None:
    taint = dict(TAINT, effect="NO_SCHEDULE") if type_.startswith("aws") else TAINT
    assert check(gpu_pool_tainted, res(type_, {**inputs, "taints": [taint]})) == []
    assert check(gpu_pool_tainted, res(type_, {**inputs, "taints": []})) == ["mandatory"]


def test_cpu_pool_needs_no_taint() -> None:
    cpu = res("aws:eks/nodeGroup:NodeGroup", {"amiType": "AL2023_x86_64_STANDARD", "instanceTypes": ["m6i.large"]})  # fmt: skip
    assert check(gpu_pool_tainted, cpu) == []


# --- Kubernetes workloads -----------------------------------------------------------------
def job(
    *,
    policy: bool = True,
    gpu: bool = True,
    image: str = "ghcr.io/x/trainer:0.1.0",
    args: list[str] | None = None,
) -> Resource:
    limits: dict[str, Any] = {"memory": "8Gi"}
    if gpu:
        limits["nvidia.com/gpu"] = 1
    spec: dict[str, Any] = {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "train", "image": image, "resources": {"limits": limits}, "args": ["--checkpoint-every-seconds=600"] if args is None else args}]}},
    }  # fmt: skip
    if policy:
        spec["podFailurePolicy"] = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}  # fmt: skip
    meta = {
        "name": "train",
        "namespace": "training",
        "labels": {"app.kubernetes.io/component": "training"},
    }
    return res(
        "kubernetes:batch/v1:Job",
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec},
    )


def test_training_job_restartable() -> None:
    assert check(training_job_restartable, job()) == []
    assert check(training_job_restartable, job(policy=False)) == ["mandatory"]
    assert check(training_job_restartable, job(gpu=False)) == ["mandatory"]


@pytest.mark.parametrize(
    ("args", "findings"),
    [
        (["-m", "trainer", "--checkpoint-every-seconds", "900"], []),
        (["--checkpoint-every-steps=500"], []),
        (["train.py", "--epochs=3"], ["advisory"]),
        (["--checkpoint-every-seconds=0"], ["advisory"]),
    ],
)
def test_training_job_checkpoints_periodically(args: list[str], findings: list[str]) -> None:
    assert check(training_job_checkpoints_periodically, job(args=args)) == findings


def test_container_limits() -> None:
    assert check(container_resource_limits, job()) == []
    ds = res("kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": {"containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}]}}}})  # fmt: skip
    assert check(container_resource_limits, ds) == ["mandatory"]


@pytest.mark.parametrize(
    "image, ok",
    [
        ("nvcr.io/nvidia/k8s-device-plugin:v0.17.1", True),
        ("localhost:5000/trainer@sha256:" + "a" * 64, True),
        ("localhost:5000/trainer", False),
        ("busybox", False),
        ("busybox:latest", False),
    ],
)
def test_image_pinned(image: str, ok: bool) -> None:
    assert (image_problem(image) is None) is ok
    assert check(image_pinned, job(image=image)) == ([] if ok else ["mandatory"])


# --- whole stacks -------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_shipped_stacks_have_no_mandatory_finding(stack: str) -> None:
    findings = evaluate(from_plan(build(stack), "aws"))
    assert not has_mandatory(findings), findings


def test_public_admin_access_with_opt_in_is_advisory_in_a_built_stack() -> None:
    plan = build("dev", {"adminCidrs": ["0.0.0.0/0"], "allowPublicAdminAccess": True})
    findings = evaluate(from_plan(plan, "aws"))
    ports = [f for f in findings if f.rule == "no-world-open-admin-ports"]
    assert len(ports) == 3 and {f.level for f in ports} == {"advisory"}
    assert not has_mandatory(findings)


def test_every_rule_has_a_unique_id_and_a_level() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids)) and {r.level for r in RULES} <= {"mandatory", "advisory"}


def test_view_type_is_shared() -> None:
    assert isinstance(view([]), StackView)


# --- Helm releases ------------------------------------------------------------------------
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.mark.parametrize(
    "inputs, problems",
    [
        ({"chart": "kube-prometheus-stack", "version": "81.6.2", "values": {"grafana": {"image": {"tag": "11.2.0"}}}}, 0),
        ({"chart": "kube-prometheus-stack", "version": "^81.0.0"}, 1),
        ({"chart": "kube-prometheus-stack"}, 1),  # no version: the newest, whatever it is
        ({"chart": "kube-prometheus-stack", "version": "81.6.2", "values": {"grafana": {"image": {"tag": "latest"}}}}, 1),
        ({"chart": "x", "version": "1.0.0", "values": {"sidecars": [{"image": "busybox"}]}}, 1),
    ],
)  # fmt: skip
def test_helm_release_pinned(inputs: dict, problems: int) -> None:
    assert check(helm_release_pinned, res(RELEASE, inputs)) == ["mandatory"] * problems


def test_helm_release_contents_are_said_to_be_unchecked() -> None:
    release = res(RELEASE, {"chart": "kube-prometheus-stack", "version": "81.6.2"})
    assert check(helm_release_contents_unchecked, release) == ["advisory"]
    assert check(container_resource_limits, release) == []  # what the advisory is about


def test_tke_endpoint_with_a_group_of_unknown_id_has_a_group() -> None:
    """A security group created in the same stack has an unknown id during a preview."""
    from gpuinfra.planview import UNKNOWN

    endpoint = "tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint"
    assert (
        check(
            cluster_endpoint_not_world_open,
            res(endpoint, {"clusterInternet": True, "clusterInternetSecurityGroup": UNKNOWN}),
        )
        == []
    )
    assert check(
        cluster_endpoint_not_world_open,
        res(endpoint, {"clusterInternet": True, "clusterInternetSecurityGroup": ""}),
    ) == ["mandatory"]
