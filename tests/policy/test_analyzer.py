"""The pack through the SDK's analyzer service, with the unknown values a real preview has.

Issue #25: every rule was a stack policy reading all properties, so one unknown id turned it
into "can't run during preview" (advisory) and nothing blocked; and stack policies run after
all steps, so `pulumi up` created a forbidden resource before reporting it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from gpuinfra.engine import RecordedResource
from gpuinfra.policy_rules import RULES
from tests.conftest import build

from .conftest import UNKNOWN, Analyzer, Res, Secret, Unknown, resource

U_ARRAY = Unknown("array")
TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
IMAGE = "ghcr.io/example/trainer:0.1.0"


def _pod(containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "template": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"serviceAccountName": UNKNOWN, "containers": containers},
        }
    }


def _container(**kw: Any) -> dict[str, Any]:
    base = {
        "name": "c",
        "image": IMAGE,
        "env": [{"name": "BUCKET", "value": UNKNOWN}],
        "resources": {"limits": {"memory": "1Gi"}},
    }
    return {**base, **kw}


# Per mandatory rule: a resource it forbids, with the unknowns a real preview sends (ids of
# resources to create, ARNs, names derived from outputs) in the inputs the rule does not need.
FORBIDDEN: dict[str, Res] = {
    "no-world-open-admin-ports": resource(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        {
            "securityGroupId": UNKNOWN,
            "ipProtocol": "tcp",
            "fromPort": 22,
            "toPort": 22,
            "cidrIpv4": "0.0.0.0/0",
            "tags": {"Name": UNKNOWN},
        },
    ),
    "cluster-endpoint-not-world-open": resource(
        "aws:eks/cluster:Cluster",
        {
            "name": "c",
            "roleArn": UNKNOWN,
            "version": "1.34",
            "vpcConfig": {
                "subnetIds": U_ARRAY,
                "endpointPublicAccess": True,
                "publicAccessCidrs": ["0.0.0.0/0"],
            },
            "encryptionConfig": {"provider": {"keyArn": UNKNOWN}, "resources": ["secrets"]},
        },
    ),
    "bucket-encrypted": resource(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        {
            "bucket": UNKNOWN,
            "rules": [
                {
                    "applyServerSideEncryptionByDefault": {
                        "sseAlgorithm": "none",
                        "kmsMasterKeyId": UNKNOWN,
                    }
                }
            ],
        },
    ),
    "bucket-versioned": resource(
        "aws:s3/bucketVersioning:BucketVersioning",
        {"bucket": UNKNOWN, "versioningConfiguration": {"status": "Suspended"}},
    ),
    "bucket-private": resource(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        {"bucket": UNKNOWN, **dict.fromkeys(PAB_FLAGS, True), "restrictPublicBuckets": False},
    ),
    "bucket-protected": resource(
        "tencentcloud:Cos/bucket:Bucket",
        {
            "bucket": "data-1250000000",
            "acl": "private",
            "encryptionAlgorithm": "AES256",
            "versioningEnable": True,
            "kmsId": UNKNOWN,
        },
    ),
    "aws-imdsv2-required": resource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {
            "imageId": UNKNOWN,
            "userData": Secret(UNKNOWN),
            "metadataOptions": {"httpTokens": "optional"},
        },
    ),
    "gpu-pool-tainted": resource(
        "aws:eks/nodeGroup:NodeGroup",
        {
            "clusterName": UNKNOWN,
            "nodeRoleArn": UNKNOWN,
            "subnetIds": U_ARRAY,
            "amiType": "AL2023_x86_64_NVIDIA",
            "instanceTypes": ["g5.xlarge"],
            "launchTemplate": {"id": UNKNOWN, "version": UNKNOWN},
            "taints": [],
            "scalingConfig": {"minSize": 0, "desiredSize": 0, "maxSize": 2},
        },
    ),
    "training-job-restartable": resource(
        "kubernetes:batch/v1:Job",
        {
            "metadata": {
                "name": "train",
                "namespace": UNKNOWN,
                "labels": {"app.kubernetes.io/component": "training"},
            },
            "spec": _pod(
                [
                    _container(
                        resources={"limits": {"memory": "8Gi", "nvidia.com/gpu": 1}},
                        args=["--checkpoint-every-seconds=600"],
                    )
                ]
            ),
        },
    ),
    "container-resource-limits": resource(
        "kubernetes:apps/v1:DaemonSet",
        {
            "metadata": {"namespace": UNKNOWN},
            "spec": _pod([_container(resources={"requests": {"cpu": "100m"}})]),
        },
    ),
    "image-pinned": resource(
        "kubernetes:apps/v1:Deployment",
        {"metadata": {"namespace": UNKNOWN}, "spec": _pod([_container(image="busybox:latest")])},
    ),
    "helm-release-pinned": resource(
        "kubernetes:helm.sh/v3:Release",
        {
            "chart": "kube-prometheus-stack",
            "version": "^81.0.0",
            "namespace": "monitoring",
            "values": {"serviceAccount": {"annotations": {"role": UNKNOWN}}},
        },
    ),
}


def _mandatory_ids() -> set[str]:
    return {r.id for r in RULES if r.level == "mandatory"}


def test_every_mandatory_rule_has_a_forbidden_case() -> None:
    assert set(FORBIDDEN) == _mandatory_ids()


@pytest.mark.parametrize("rule_id", sorted(FORBIDDEN))
def test_mandatory_rule_blocks_before_the_step_despite_unknowns(
    pack: ModuleType, rule_id: str
) -> None:
    """Analyze (before each step, in preview and in `up`) reports it as mandatory: the engine
    then makes no step for the resource in `up` (analyze_snapshot.go:79-81,
    step_generator.go:1476), so it is never created."""
    found = [d for d in Analyzer(pack).analyze(FORBIDDEN[rule_id]) if d.policy == rule_id]
    assert [d.level for d in found] == ["mandatory"], found
    assert not found[0].cannot_run


def test_mandatory_policies_are_resource_policies(pack: ModuleType) -> None:
    """The engine's `Analyze` runs only resource policies (pulumi-policy policy.py Analyze);
    every mandatory rule has one, at the mandatory level."""
    from pulumi.runtime import proto

    info = Analyzer(pack).info
    for rule_id in _mandatory_ids():
        assert info[rule_id].policy_type == proto.PolicyType.POLICY_TYPE_RESOURCE
        assert info[rule_id].enforcementLevel == proto.MANDATORY
    stack = {n for n, p in info.items() if p.policy_type == proto.PolicyType.POLICY_TYPE_STACK}
    assert stack == {"bucket-encrypted-stack", "bucket-versioned-stack", "bucket-private-stack"}


def test_an_unknown_value_the_rule_needs_is_checked_again_when_known(pack: ModuleType) -> None:
    """During a preview a CIDR computed from another resource is unknown: the SDK says it cannot
    run the rule for this resource (advisory); `up` sends the value known, and it blocks."""
    rule = {"securityGroupId": UNKNOWN, "ipProtocol": "tcp", "fromPort": 22, "toPort": 22}
    type_ = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    analyzer = Analyzer(pack)
    preview = [
        d
        for d in analyzer.analyze(resource(type_, {**rule, "cidrIpv4": UNKNOWN}))
        if d.policy == "no-world-open-admin-ports"
    ]
    assert [(d.level, d.cannot_run) for d in preview] == [("advisory", True)]
    up = [
        d
        for d in analyzer.analyze(resource(type_, {**rule, "cidrIpv4": "0.0.0.0/0"}))
        if d.policy == "no-world-open-admin-ports"
    ]
    assert [(d.level, d.cannot_run) for d in up] == [("mandatory", False)]


def test_a_node_group_whose_launch_template_id_is_unknown_has_one(pack: ModuleType) -> None:
    group = FORBIDDEN["gpu-pool-tainted"]
    tainted = Res(group.type, {**group.props, "taints": [TAINT]})
    assert Analyzer(pack).analyze(tainted) == []  # no finding, and no "can't run" either


# --- stack policies: a bucket nothing configures, after all steps ------------------------
BUCKET = resource(
    "aws:s3/bucket:Bucket",
    {"bucket": "gpuinfra-dev-data", "id": UNKNOWN, "arn": UNKNOWN},
    protect=True,
    name="data",
)


def _configuration(type_: str, props: dict[str, Any], name: str) -> Res:
    res = resource(type_, {"bucket": UNKNOWN, **props}, name=name)
    res.links = {"bucket": [BUCKET.urn]}  # the engine's property dependency on the bucket
    return res


CONFIGURED = [
    BUCKET,
    _configuration(
        "aws:s3/bucketVersioning:BucketVersioning",
        {"versioningConfiguration": {"status": "Enabled"}},
        "ver",
    ),
    _configuration(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        {
            "rules": [
                {
                    "applyServerSideEncryptionByDefault": {
                        "sseAlgorithm": "aws:kms",
                        "kmsMasterKeyId": UNKNOWN,
                    }
                }
            ]
        },
        "sse",
    ),
    _configuration(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        dict.fromkeys(PAB_FLAGS, True),
        "pab",
    ),
]


def test_configured_bucket_passes_with_unknown_ids(pack: ModuleType) -> None:
    assert Analyzer(pack).all(CONFIGURED) == []


@pytest.mark.parametrize(
    "missing, policy",
    [
        ("ver", "bucket-versioned-stack"),
        ("sse", "bucket-encrypted-stack"),
        ("pab", "bucket-private-stack"),
    ],
)
def test_unconfigured_bucket_blocks_after_the_steps(
    pack: ModuleType, missing: str, policy: str
) -> None:
    resources = [r for r in CONFIGURED if r.name != missing]
    found = Analyzer(pack).analyze_stack(resources)
    assert [(d.policy, d.level, d.urn) for d in found] == [(policy, "mandatory", BUCKET.urn)]


def test_configuration_of_another_bucket_does_not_count(pack: ModuleType) -> None:
    other = [
        Res(r.type, r.props, r.protect, r.name, {"bucket": ["urn:other"]}) if r.name == "ver" else r
        for r in CONFIGURED
    ]
    found = Analyzer(pack).analyze_stack(other)
    assert [d.policy for d in found] == ["bucket-versioned-stack"]


# --- a whole shipped stack, as a real preview would send it ------------------------------


def _as_preview(resources: list[RecordedResource]) -> list[Res]:
    """The recorded inputs with every reference to another resource's id or ARN replaced by
    an unknown (a preview of a new stack knows none of them), and each such input linked to
    that resource, as the engine's property dependencies would."""
    owners: dict[str, str] = {}
    for r in resources:
        for value in (r.id, r.outputs.get("arn")):
            if isinstance(value, str) and len(value) >= 8:
                owners[value] = r.urn

    def blank(value: Any, found: set[str], deps: set[str]) -> Any:
        # Only a resource this one depends on can have handed it a value (an id that merely
        # equals a given name, as a Volcano Engine bucket encryption's id does, is no link).
        if isinstance(value, str):
            hits = {urn for computed, urn in owners.items() if computed in value and urn in deps}
            found |= hits
            return UNKNOWN if hits else value
        if isinstance(value, dict):
            return {k: blank(v, found, deps) for k, v in value.items()}
        if isinstance(value, list):
            return [blank(v, found, deps) for v in value]
        return value

    made = []
    for r in resources:
        props, links = {}, {}
        for key, value in r.inputs.items():
            found: set[str] = set()
            props[key] = blank(value, found, set(r.dependencies))
            if found:
                links[key] = sorted(found)
        made.append(Res(r.type, props, r.protect, r.name, links, given_urn=r.urn))
    return made


@pytest.mark.parametrize(
    "stack", ["dev", "alicloud-dev", "tencentcloud-dev", "k8s-dev", "volcengine-dev"]
)
def test_shipped_stack_passes_and_every_rule_runs_despite_unknowns(
    pack: ModuleType, stack: str
) -> None:
    resources = _as_preview(build(stack).resources)
    unknowns = sum(str(r.props).count("Unknown(") for r in resources)
    assert unknowns > 0 or stack == "k8s-dev"  # Kubernetes objects here name known things
    found = Analyzer(pack).all(resources)
    assert [d for d in found if d.level == "mandatory"] == []
    cannot = [d for d in found if d.cannot_run and d.policy in _mandatory_ids()]
    assert cannot == [], "a mandatory rule read an unknown value it does not need"


def test_tke_public_endpoint_guarded_by_a_new_group_runs_in_preview(pack: ModuleType) -> None:
    endpoint = resource(
        "tencentcloud:Kubernetes/clusterEndpoint:ClusterEndpoint",
        {"clusterId": UNKNOWN, "clusterInternet": True, "clusterInternetSecurityGroup": UNKNOWN},
    )
    assert Analyzer(pack).analyze(endpoint) == []
    open_to_all = Res(
        endpoint.type, {**endpoint.props, "managedClusterInternetSecurityPolicies": ["0.0.0.0/0"]}
    )
    assert [
        d.level
        for d in Analyzer(pack).analyze(open_to_all)
        if d.policy == "cluster-endpoint-not-world-open"
    ] == ["mandatory"]
