"""Kueue's release manifests (vendored data), adapted to the GPU layer: plain objects, no Pulumi.

The objects are the release's own; gpuinfra changes only what this module says:
- the controller's configuration (the `kueue-manager-config` ConfigMap): `waitForPodsReady`
  with gpuinfra's timeout (all-or-nothing for multi-node Jobs, below) and the Job integration
  only (`batch/job`);
- the webhooks for pods, Deployments and StatefulSets also skip the GPU layer's own namespaces,
  so its DaemonSets (device plugin, DCGM exporter, drain agent) never wait for Kueue;
- the controller Deployment: checkov exceptions with their reasons, and no GPU node (the GPU
  pools are tainted; the affinity keeps it off untainted GPU nodes of existing clusters too);
- no field Kueue's certificate rotator writes (`ROTATED_BY_KUEUE`), should a release ship one.

All-or-nothing in Kueue v0.19.2: admission reserves quota for every pod of a Job at once (a
Workload has one PodSet with `count` = parallelism); `waitForPodsReady` then evicts a Job
whose pods are not all Ready within `timeout` (apis/config/v1beta2/configuration_types.go:
75-79, 302-329; on by default in the v1beta2 configuration, 30 min: defaults.go:48,99-117),
which suspends it (its pods deleted, quota released) and requeues it with backoff.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from .vendored import vendored_objects

KUEUE_VERSION = "v0.19.2"
KUEUE_IMAGE = f"registry.k8s.io/kueue/kueue:{KUEUE_VERSION}"
KUEUE_NAMESPACE = "kueue-system"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
"""The storage version of Kueue v0.19's CRDs (v1beta1 is still served)."""
KUEUE_MANIFEST = f"kueue-{KUEUE_VERSION}.yaml"
"""In components/kubernetes/vendor/; its header says where it came from."""
KUEUE_MANIFEST_SHA256 = "9df0fb7a8e81a2c66ecfe0d18ee0bfbd4fbd396ed264f0f0205e9e4baf4fcfe5"
"""Of the whole vendored file (header included); its header says where it came from."""
CONFIG_MAP = "kueue-manager-config"
CONFIG_FILE = "controller_manager_config.yaml"
CONTROLLER = "kueue-controller-manager"
WORKLOAD_WEBHOOKS = ("mpod.kb.io", "vpod.kb.io", "mdeployment.kb.io", "vdeployment.kb.io",
                     "mstatefulset.kb.io", "vstatefulset.kb.io")  # fmt: skip
"""Webhooks that see every pod, Deployment or StatefulSet outside kube-system and
kueue-system (failurePolicy Fail): also kept off the GPU layer's own namespaces."""


def release_objects() -> list[dict[str, Any]]:
    """Every object of the vendored release, in file order (a fresh copy each call)."""
    return vendored_objects(KUEUE_MANIFEST, KUEUE_MANIFEST_SHA256)


def crds(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "CustomResourceDefinition"]


def crd_schema(objects: Iterable[dict[str, Any]], kind: str, version: str) -> dict[str, Any]:
    """The openAPIV3Schema the release's CRD of `kind` serves at `version`."""
    for crd in crds(objects):
        if crd["spec"]["names"]["kind"] != kind:
            continue
        for served in crd["spec"]["versions"]:
            if served["name"] == version:
                return dict(served["schema"]["openAPIV3Schema"])
    raise KeyError(f"{kind} {version} is not in Kueue {KUEUE_VERSION}")


def controller_config(pods_ready_timeout_minutes: int) -> dict[str, Any]:
    """The release's controller configuration with gpuinfra's changes (module docstring)."""
    [config_map] = [
        o
        for o in release_objects()
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == CONFIG_MAP
    ]
    config: dict[str, Any] = yaml.safe_load(config_map["data"][CONFIG_FILE])
    config["waitForPodsReady"] = {
        "timeout": f"{pods_ready_timeout_minutes}m",
        # false: a Job waiting for its nodes does not stop others from being admitted; the
        # timeout still frees what a half-started Job holds.
        "blockAdmission": False,
        # Requeued Jobs go to the back of the queue with exponential backoff, never dropped.
        "requeuingStrategy": {"timestamp": "Eviction"},
    }
    config["integrations"] = {"frameworks": ["batch/job"]}
    return config


WEBHOOK_CERT_SECRET = "kueue-webhook-server-cert"
"""kueue v0.19.2 apis/config/v1beta2/defaults.go:35,89-92 (`internalCertManagement`, on by
default; gpuinfra's controller configuration keeps the defaults)."""
ROTATED_BY_KUEUE: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("Secret", WEBHOOK_CERT_SECRET): (("data",), ("stringData",)),
    ("ValidatingWebhookConfiguration", "kueue-validating-webhook-configuration"): (
        ("webhooks", "*", "clientConfig", "caBundle"),
    ),
    ("MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"): (
        ("webhooks", "*", "clientConfig", "caBundle"),
    ),
    **{
        ("CustomResourceDefinition", f"{plural}.kueue.x-k8s.io"): (
            ("spec", "conversion", "webhook", "clientConfig", "caBundle"),
        )
        for plural in ("localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters")
    },
}
"""What Kueue's internal certificate management writes, and so what Pulumi must never own:
the rotator (open-policy-agent/cert-controller v0.16.0, kueue v0.19.2 go.mod:18) is set up in
kueue v0.19.2 pkg/util/cert/cert.go:139-178 with the Secret above, the two webhook
configurations and five CRDs' conversion webhooks. It fills the Secret's `ca.crt`, `ca.key`,
`tls.crt`, `tls.key` (cert-controller v0.16.0 pkg/rotator/rotator.go:39-42,502-509) and puts
the CA into each webhook's `clientConfig.caBundle` and each CRD's
`spec.conversion.webhook.clientConfig.caBundle` (rotator.go:433,452), again at each rotation.

pulumi-kubernetes (pulumi/pulumi-kubernetes@v4.32.0) with server-side apply sends only the
program's fields (provider/pkg/await/await.go:643-671) and a refresh keeps only the live
fields the inputs had (provider/pkg/provider/provider.go:2083, pruneLiveState): a field the
program never sets stays Kueue's, while one it set, even empty, would be applied back over
the rotated value at every `pulumi up` (and the webhooks would stop being trusted). The
v0.19.2 manifests set none of them; `adapted_objects` drops them should a release do so."""


def _drop(node: Any, path: tuple[str, ...]) -> None:
    """Remove `path` (`*`: every list item) from `node`, if there."""
    head, *rest = path
    if head == "*":
        for item in node if isinstance(node, list) else []:
            _drop(item, tuple(rest))
    elif isinstance(node, dict) and head in node:
        if rest:
            _drop(node[head], tuple(rest))
        else:
            del node[head]


def leave_to_cert_rotator(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without the fields Kueue's certificate rotator owns (`ROTATED_BY_KUEUE`)."""
    for path in ROTATED_BY_KUEUE.get((obj["kind"], obj["metadata"]["name"]), ()):
        _drop(obj, path)
    return obj


def adapted_objects(
    *,
    pods_ready_timeout_minutes: int,
    unmanaged_namespaces: Iterable[str],
    gpu_node_labels: Mapping[str, str],
) -> list[dict[str, Any]]:
    """The release's objects as the GPU layer installs them (module docstring says what
    changes): CRDs first, then the Namespace, then the rest in file order."""
    objects = release_objects()
    skip = sorted(set(unmanaged_namespaces))
    for obj in objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "ConfigMap" and name == CONFIG_MAP:
            obj["data"][CONFIG_FILE] = yaml.safe_dump(
                controller_config(pods_ready_timeout_minutes), sort_keys=False
            )
        elif kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for hook in obj["webhooks"]:
                if hook["name"] in WORKLOAD_WEBHOOKS:
                    for expr in hook["namespaceSelector"]["matchExpressions"]:
                        if expr["operator"] == "NotIn":
                            expr["values"] = sorted({*expr["values"], *skip})
        elif kind == "Deployment" and name == CONTROLLER:
            _place_controller(obj, gpu_node_labels)
        leave_to_cert_rotator(obj)
        if name in OBJECT_CHECKOV_SKIPS:
            from .labels import checkov_skips

            obj["metadata"].setdefault("annotations", {}).update(
                checkov_skips(OBJECT_CHECKOV_SKIPS[name])
            )
    order = {"CustomResourceDefinition": 0, "Namespace": 1}
    return sorted(objects, key=lambda o: order.get(o["kind"], 2))


OBJECT_CHECKOV_SKIPS = {
    "kueue-manager-role": {
        "CKV_K8S_155": "Kueue's internal cert management writes its CA bundle into its own "
        "two webhook configurations (get/update limited to them by resourceNames)",
    },
    "kueue-manager-secrets-rolebinding": {
        "CKV2_K8S_5": "Kueue's internal cert management keeps its webhook serving certificate "
        "in a Secret of kueue-system; the Role reaches that namespace's Secrets only",
    },
}
CONTROLLER_UID = 65532
"""The `nonroot` user of the controller's base image (gcr.io/distroless/static:nonroot, kueue
v0.19.2 Makefile:69); the release sets only runAsNonRoot."""
CHECKOV_SKIPS = {
    "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
    "CKV_K8S_38": "the controller manages Jobs and Workloads through the API: it needs its token",
}


def _place_controller(deployment: dict[str, Any], gpu_node_labels: Mapping[str, str]) -> None:
    """Checkov's exceptions, and off every node that carries all of `gpu_node_labels` (one
    node-affinity term per label: terms are ORed, so a node is refused only if it matches
    every label, and a system node that shares one of them is still fine)."""
    from .labels import checkov_skips  # labels.py imports the handle, which loads Pulumi

    skips = checkov_skips(CHECKOV_SKIPS)
    deployment["metadata"].setdefault("annotations", {}).update(skips)
    template = deployment["spec"]["template"]
    template["metadata"].setdefault("annotations", {}).update(skips)
    template["spec"]["securityContext"].update(
        {"runAsUser": CONTROLLER_UID, "runAsGroup": CONTROLLER_UID}
    )
    if gpu_node_labels:
        template["spec"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": key, "operator": "NotIn", "values": [value]}]}
                        for key, value in sorted(gpu_node_labels.items())
                    ]
                }
            }
        }
