"""NVIDIA device plugin: advertises `nvidia.com/gpu` on GPU nodes so pods can request GPUs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.cluster_handle import Taint

from .labels import (
    RESTRICTED_CONTAINER,
    app_labels,
    checkov_skips,
    config_hash,
    gpu_node_daemonset_spec,
)

# v0.20.0 (2026-08-19) is the newest release of NVIDIA/k8s-device-plugin; its static
# manifest (deployments/static/nvidia-device-plugin.yml) is the model for this DaemonSet.
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
NAME = "nvidia-device-plugin"
CONFIG_PATH = "/etc/nvidia-device-plugin/config.yaml"


@dataclass(frozen=True)
class DevicePluginArgs:
    namespace: str
    gpu_node_labels: Mapping[str, str]
    gpu_taints: Sequence[Taint]
    """Every taint of the nodes it runs on (the GPU taint, each pool's own)."""
    time_slicing_replicas: int
    """1: each GPU goes to one pod; N > 1: each GPU is advertised N times (time-slicing)."""
    mig_strategy: str


def plugin_config(time_slicing_replicas: int, mig_strategy: str) -> str:
    """The plugin's config file (api/config/v1 of the device plugin)."""
    config: dict[str, object] = {"version": "v1", "flags": {"migStrategy": mig_strategy}}
    if time_slicing_replicas > 1:
        config["sharing"] = {
            "timeSlicing": {
                "resources": [{"name": "nvidia.com/gpu", "replicas": time_slicing_replicas}]
            }
        }
    return yaml.safe_dump(config, sort_keys=False)


class NvidiaDevicePlugin(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: DevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:NvidiaDevicePlugin", name, None, opts)
        labels = app_labels(NAME, "device-plugin")
        config_text = plugin_config(args.time_slicing_replicas, args.mig_strategy)
        config = k8s.core.v1.ConfigMap(
            f"{name}-device-plugin-config",
            metadata={"name": f"{NAME}-config", "namespace": args.namespace, "labels": labels},
            data={"config.yaml": config_text},
            opts=pulumi.ResourceOptions(parent=self),
        )
        root = "writes its socket into the kubelet's root-owned device-plugins directory"
        annotations = checkov_skips(
            {
                "CKV_K8S_8": "serves no health endpoint; the kubelet drops it when its socket dies",
                "CKV_K8S_9": "serves no health endpoint; the kubelet drops it when its socket dies",
                "CKV_K8S_22": "upstream runs it with a writable root file system",
                "CKV_K8S_23": root,
                "CKV_K8S_40": root,
                "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
            }
        )
        # API field names (camelCase), checked by kubernetes-validate in the tests. Only GPU
        # nodes (the helper's selector): recent plugins fail on nodes without a GPU.
        pod: dict[str, Any] = {
            "automountServiceAccountToken": False,
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": NAME,
                    "image": DEVICE_PLUGIN_IMAGE,
                    "imagePullPolicy": "Always",
                    "env": [
                        {"name": "CONFIG_FILE", "value": CONFIG_PATH},
                        {"name": "FAIL_ON_INIT_ERROR", "value": "true"},
                    ],
                    "securityContext": dict(RESTRICTED_CONTAINER),
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "256Mi"},
                    },
                    "volumeMounts": [
                        {
                            "name": "device-plugins",
                            "mountPath": "/var/lib/kubelet/device-plugins",
                        },
                        {
                            "name": "config",
                            "mountPath": "/etc/nvidia-device-plugin",
                            "readOnly": True,
                        },
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "device-plugins",
                    "hostPath": {
                        "path": "/var/lib/kubelet/device-plugins",
                        "type": "Directory",
                    },
                },
                {"name": "config", "configMap": {"name": f"{NAME}-config"}},
            ],
        }
        k8s.apps.v1.DaemonSet(
            f"{name}-device-plugin",
            metadata={
                "name": NAME,
                "namespace": args.namespace,
                "labels": labels,
                "annotations": annotations,
            },
            # The plugin reads its config once, at start: a changed config must roll the pods.
            spec=gpu_node_daemonset_spec(
                NAME,
                labels,
                annotations,
                args.gpu_node_labels,
                args.gpu_taints,
                pod,
                template_annotations=config_hash(config_text),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[config]),
        )
        self.register_outputs({})
