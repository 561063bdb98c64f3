"""Bring your own cluster (`cloud: kubernetes`): only the GPU layer is installed.

Nothing is created in a cloud account, so region, network, node-pool and bucket keys do not
apply; they are refused when set, rather than silently ignored.
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
    service_account_annotations: dict[str, str]
    gpu_node_labels: dict[str, str]
    gpus_per_node: int
    platform_runs_device_plugin: bool


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
        r.problem(
            "existingGpuNodeLabels",
            [],
            "needs at least one key=value every GPU node carries, e.g. nvidia.com/gpu.present=true",
        )
    gpus = r.integer("existingGpusPerNode")
    if not 1 <= gpus <= 16:
        r.problem("existingGpusPerNode", gpus, "must be between 1 and 16")
    return ExistingClusterSettings(
        kubeconfig=r.string("kubeconfig") or None,
        cluster_name=r.string("existingClusterName") or "existing-cluster",
        bucket_uri=bucket_uri,
        bucket_endpoint=r.string("existingBucketEndpoint"),
        service_account_annotations=_pairs(r, "existingServiceAccountAnnotations"),
        gpu_node_labels=labels,
        gpus_per_node=gpus,
        platform_runs_device_plugin=r.boolean("existingPlatformRunsDevicePlugin"),
    )


assert all(name in BY_NAME for name in _APPLIES)
