"""Bring your own cluster (`cloud: kubernetes`): only the GPU layer is installed.

Nothing is created in a cloud account, so region, network, node-pool and bucket keys do not
apply; they are refused when set, rather than silently ignored. The cluster is either given
by the `existing*` keys (and a kubeconfig), or it is a gpuinfra cluster stack named by
`clusterStack`, whose exported `clusterHandle` then says everything the `existing*` keys would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..reader import ConfigReader
from ..schema import BY_NAME, KEYS
from .rules import CloudRules

CLOUD = "kubernetes"
BUCKET_SCHEMES = ("s3", "oss", "cosn", "gs", "az")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_APPLIES = {
    "cloud",
    "namePrefix",
    "kubernetesVersion",
    "trainingNamespace",
    "trainingServiceAccount",
}
_APPLIES_GROUPS = {"gpuLayer", "training", "existingCluster", "costAssumptions", "cost"}
_FROM_CLUSTER_STACK = (
    "kubeconfig",
    "existingClusterName",
    "existingBucketUri",
    "existingBucketEndpoint",
    "existingBucketRegion",
    "existingServiceAccountAnnotations",
    "existingGpuNodeLabels",
    "existingGpusPerNode",
    "existingPlatformRunsDevicePlugin",
    "trainingNamespace",
    "trainingServiceAccount",
)
"""What the cluster stack's `clusterHandle` decides (its IAM role trusts its own namespace
and ServiceAccount): refused beside `clusterStack` rather than silently overridden."""
_STACK_PART = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")

RULES = CloudRules(
    cloud=CLOUD,
    title="an existing Kubernetes cluster",
    region_key="",
    region_example="",
    region_pattern=re.compile(".*"),
    default_system_instance_type="",
    bucket_name_problem=lambda _name: None,
)


@dataclass(frozen=True)
class ExistingClusterSettings:
    kubeconfig: str | None
    """None: the Kubernetes provider's own config (`kubernetes:kubeconfig`, KUBECONFIG)."""
    cluster_name: str
    bucket_uri: str | None
    bucket_endpoint: str
    bucket_region: str
    service_account_annotations: dict[str, str]
    gpu_node_labels: dict[str, str]
    gpus_per_node: int | None
    """None when `cluster_stack` is set: the cluster stack's handle knows."""
    platform_runs_device_plugin: bool
    cluster_stack: str | None = None
    """`<org>/<project>/<stack>` of a gpuinfra cluster stack (gpuLayer: separate): the
    ClusterHandle comes from its `clusterHandle` output instead of the keys above."""


def cluster_stack_problem(name: str) -> str | None:
    """Why `name` is not a fully qualified stack name (`<org>/<project>/<stack>`), or None."""
    parts = name.split("/")
    if len(parts) != 3 or not all(_STACK_PART.match(part) for part in parts):
        return (
            "must be a fully qualified stack name <org>/<project>/<stack>, e.g. "
            "organization/gpuinfra/prod (`organization` is a self-managed backend's org)"
        )
    return None


def _pairs(r: ConfigReader, name: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for entry in r.strings(name):
        key, sep, value = entry.partition("=")
        if not sep or not _LABEL_KEY.match(key) or len(key) > 253:
            r.problem(
                name, entry, "each entry must be key=value with a Kubernetes label/annotation key"
            )
            continue
        pairs[key] = value
    return pairs


def parse_existing_cluster(r: ConfigReader) -> ExistingClusterSettings:
    for key in KEYS:
        if key.name in r.raw and key.name not in _APPLIES and key.group not in _APPLIES_GROUPS:
            r.problem(
                key.name,
                r.raw[key.name],
                "does not apply to cloud kubernetes (an existing cluster): nothing is created "
                "in a cloud account; remove it",
            )
    cluster_stack = r.string("clusterStack") or None
    if cluster_stack is not None:
        return _from_cluster_stack(r, cluster_stack)
    bucket_uri = r.string("existingBucketUri") or None
    if bucket_uri is not None:
        scheme, sep, rest = bucket_uri.partition("://")
        if not sep or scheme not in BUCKET_SCHEMES or not rest.strip("/"):
            r.problem(
                "existingBucketUri",
                bucket_uri,
                "must be a bucket URI such as s3://my-bucket/prefix (schemes: "
                + ", ".join(BUCKET_SCHEMES)
                + ")",
            )
    labels = _pairs(r, "existingGpuNodeLabels")
    for label, value in labels.items():
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            r.problem("existingGpuNodeLabels", f"{label}={value}", "label values are at most 63 "
                      "letters, digits, '-', '_' or '.'")  # fmt: skip
    if not labels:
        # No default: nothing labels GPU nodes on a plain cluster, and a selector on a label
        # no node carries leaves every Job Pending and every GPU DaemonSet at zero pods.
        r.problem(
            "existingGpuNodeLabels",
            None if "existingGpuNodeLabels" not in r.raw else [],
            "required: at least one key=value that every GPU node of your cluster carries "
            "(check with `kubectl get nodes --show-labels`): your GPU node pool's own label, "
            "nvidia.com/gpu.present=true (NVIDIA GPU Operator), "
            "feature.node.kubernetes.io/pci-10de.present=true (Node Feature Discovery) or "
            "aliyun.accelerator/nvidia_name=<model> (ACK)",
        )
    gpus = r.integer("existingGpusPerNode")
    if not 1 <= gpus <= 16:
        r.problem("existingGpusPerNode", gpus, "must be between 1 and 16")
    return ExistingClusterSettings(
        kubeconfig=r.string("kubeconfig") or None,
        cluster_name=r.string("existingClusterName") or "existing-cluster",
        bucket_uri=bucket_uri,
        bucket_endpoint=r.string("existingBucketEndpoint"),
        bucket_region=r.string("existingBucketRegion"),
        service_account_annotations=_pairs(r, "existingServiceAccountAnnotations"),
        gpu_node_labels=labels,
        gpus_per_node=gpus,
        platform_runs_device_plugin=r.boolean("existingPlatformRunsDevicePlugin"),
    )


def _from_cluster_stack(r: ConfigReader, cluster_stack: str) -> ExistingClusterSettings:
    problem = cluster_stack_problem(cluster_stack)
    if problem:
        r.problem("clusterStack", cluster_stack, problem)
    for name in _FROM_CLUSTER_STACK:
        if name in r.raw:
            r.problem(
                name,
                r.raw[name],
                f"comes from the cluster stack's clusterHandle (gpuinfra:clusterStack = "
                f"{cluster_stack}); remove it, or remove clusterStack to describe an existing "
                "cluster yourself",
            )
    return ExistingClusterSettings(
        kubeconfig=None,
        cluster_name="",
        bucket_uri=None,
        bucket_endpoint="",
        bucket_region="",
        service_account_annotations={},
        gpu_node_labels={},
        gpus_per_node=None,
        platform_runs_device_plugin=False,
        cluster_stack=cluster_stack,
    )


assert all(name in BY_NAME for name in _APPLIES)
assert all(name in BY_NAME for name in _FROM_CLUSTER_STACK)
