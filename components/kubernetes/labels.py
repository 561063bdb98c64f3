"""Labels and small spec fragments shared by the GPU layer's objects."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from components.cluster_handle import Taint

PART_OF = "gpuinfra"


def app_labels(name: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": "pulumi",
    }


def selector_labels(name: str) -> dict[str, str]:
    """The stable subset used in selectors (selectors are immutable once created)."""
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": PART_OF}


def toleration(taint: Taint) -> dict[str, Any]:
    """Tolerate the GPU taint whatever its value, as the NVIDIA manifests do."""
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def checkov_skips(reasons: dict[str, str]) -> dict[str, str]:
    """`checkov.io/skipN: CHECK=reason` annotations: each exception says why it is safe."""
    return {
        f"checkov.io/skip{i}": f"{check}={reason}"
        for i, (check, reason) in enumerate(sorted(reasons.items()), start=1)
    }


CONFIG_HASH_ANNOTATION = "gpuinfra.io/config-sha256"


def config_hash(*texts: str) -> dict[str, str]:
    """A pod-template annotation that changes with the files a pod reads only at start.

    A ConfigMap change reaches a running container's mounted file but not the program that
    read it at start (the device plugin's config, the exporter's counters, the drain agent's
    script). The hash in the pod template makes a changed file a new template, which the
    DaemonSet rolls out node by node.
    """
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()
    return {CONFIG_HASH_ANNOTATION: digest}


RESTRICTED_CONTAINER: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}
RUNTIME_DEFAULT_SECCOMP: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}


def api_fields(fields: dict[str, Any] | list[Any]) -> Any:
    """Kubernetes API fields in the API's own camelCase spelling.

    The SDK's TypedDicts spell fields in snake_case, so mypy cannot check these; the tests
    validate every rendered object with kubernetes-validate (strict) instead.
    """
    return fields


def gpu_node_daemonset_spec(
    name: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    node_labels: Mapping[str, str],
    taints: Sequence[Taint],
    pod: Mapping[str, Any],
    template_annotations: Mapping[str, str] | None = None,
) -> Any:
    """A DaemonSet spec that runs `pod` on every GPU node and nowhere else: selected by the
    GPU node labels, tolerating the GPU nodes' taints, critical to the node, rolled one at a
    time.
    `template_annotations` go on the pods only (e.g. `config_hash`)."""
    return api_fields(
        {
            "selector": {"matchLabels": selector_labels(name)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {
                    "labels": dict(labels),
                    "annotations": {**annotations, **(template_annotations or {})},
                },
                "spec": {
                    "nodeSelector": dict(node_labels),
                    "tolerations": [toleration(taint) for taint in taints],
                    "priorityClassName": "system-node-critical",
                    **pod,
                },
            },
        }
    )
