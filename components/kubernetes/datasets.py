"""A training Job's dataset on the cluster: mounted, staged once per node, or streamed.

- `mount`: a static, read-only PersistentVolume of the platform's object-storage CSI driver
  (`ClusterHandle.dataset_mount`) and a PersistentVolumeClaim bound to it by name. The driver
  reads the bucket with an identity of its own: Mountpoint for Amazon S3's IRSA role
  (`s3-csi-driver-sa`), ossfs's RRSA role (`csi-fuse-ossfs`); no keys anywhere.
- `stage`: an init container of the trainer image runs `python -m trainer.stage`, which copies
  the prefix into a per-node cache folder with the Job's own identity (the platform's webhook
  injects it into init containers as into containers), verifies every object's size (and
  MD5 where the ETag is one) and skips what an earlier pod on the node copied already. The
  cache is a hostPath PersistentVolume the GPU layer creates, so it outlives the pod; the
  training namespace's Pod Security level (baseline) refuses hostPath in pod specs, and a PV
  only an administrator can create keeps that promise for what users write.
- `stream`: nothing on the cluster; the trainer reads tar shards from the URI
  (trainer/shards.py).

Every Job gets `DATASET_DIR`: the folder it reads (`mountPath`), or the URI it streams.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import (
    MOUNTPOINT_S3_DRIVER,
    OSSFS_DRIVER,
    BucketRef,
    DatasetMount,
)
from components.settings.datasets import DatasetSettings

from .labels import RESTRICTED_CONTAINER, api_fields, app_labels

DATASET_ENV = "DATASET_DIR"
VOLUME = "dataset"
CACHE_MOUNT = "/dataset-cache"
"""Where the stage init container sees the node's cache folder."""
STAGE_CONTAINER = "stage-dataset"
NOMINAL_CAPACITY = "1Gi"
"""Required by the PersistentVolume API, used by neither hostPath nor these CSI drivers
(Mountpoint's examples: "Ignored, required"); the claim asks for the same, so they bind."""
TRAINER_UID = 10001


def dataset_uri(bucket: BucketRef, dataset: DatasetSettings) -> pulumi.Output[str]:
    """`<scheme>://<bucket>/<prefix>` of the dataset (no trailing '/')."""
    if not dataset.in_stack_bucket:
        return pulumi.Output.from_input(dataset.source.rstrip("/"))
    prefix = dataset.source.strip("/")
    return bucket.uri.apply(lambda root: f"{root.rstrip('/')}/{prefix}")


def cache_key(uri: str) -> str:
    """The node cache folder of one dataset: readable, and unique per source URI (Jobs that
    read the same dataset share its copy on a node)."""
    tail = re.sub(r"[^a-z0-9._-]+", "-", uri.rstrip("/").rsplit("/", 1)[-1].lower())
    digest = hashlib.sha256(uri.rstrip("/").encode()).hexdigest()[:12]
    return f"{tail.strip('-.')[:40] or 'dataset'}-{digest}"


def mountpoint_s3_spec(
    bucket: str, prefix: str, region: str, attributes: Mapping[str, str]
) -> dict[str, Any]:
    """PV fields of a Mountpoint volume (docs/CONFIGURATION.md "Static Provisioning";
    examples/kubernetes/static_provisioning/non_root.yaml: uid, gid, allow-other for a non-root
    pod). ReadOnlyMany makes the driver pass --read-only (pkg/driver/node/node.go:120-121)."""
    options = ["allow-other", f"uid={TRAINER_UID}", f"gid={TRAINER_UID}"]
    if region:
        options.append(f"region {region}")
    if prefix:
        options.append(f"prefix {prefix}/")
    return {
        "mountOptions": options,
        "csi": {"volumeAttributes": {"bucketName": bucket, **attributes}},
    }


def ossfs_spec(
    bucket: str, prefix: str, endpoint: str, attributes: Mapping[str, str]
) -> dict[str, Any]:
    """PV fields of an ossfs volume (pkg/oss/utils.go parseOptions: bucket, url, path,
    otherOpts, authType, roleName; ReadOnlyMany sets readOnly, :259-262). RRSA: `authType:
    rrsa` and the role's name (pkg/mounter/fuse_pod_manager/oss/utils.go:57-71)."""
    return {
        "csi": {
            "volumeAttributes": {
                "bucket": bucket,
                "url": endpoint,
                "path": f"/{prefix}" if prefix else "/",
                "otherOpts": f"-o allow_other -o uid={TRAINER_UID} -o gid={TRAINER_UID}",
                **attributes,
            }
        }
    }


def mount_spec(
    mount: DatasetMount,
    bucket: BucketRef,
    prefix: str,
    attributes: Mapping[str, str],
    bucket_name: str,
) -> dict[str, Any]:
    if mount.driver == MOUNTPOINT_S3_DRIVER:
        return mountpoint_s3_spec(bucket_name, prefix, bucket.region, attributes)
    if mount.driver == OSSFS_DRIVER:
        return ossfs_spec(bucket_name, prefix, bucket.endpoint, attributes)
    raise ValueError(f"no PersistentVolume format for CSI driver {mount.driver!r}")


@dataclass(frozen=True)
class DatasetPod:
    """What a TrainingJob adds to its pod for its dataset."""

    env: list[dict[str, Any]]
    volumes: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    """The trainer container's volumeMounts."""
    init_containers: list[dict[str, Any]] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """Created before the Job (its claim; the CSI driver's add-on)."""


@dataclass(frozen=True)
class JobDatasetArgs:
    job_name: str
    dataset: DatasetSettings
    namespace: str
    bucket: BucketRef
    mount: DatasetMount | None
    """The platform's CSI driver (for `access: mount`)."""
    stage_image: str
    """An image with `python -m trainer.stage` (the reference trainer's) for `access: stage`."""
    storage_env: list[dict[str, Any]] = field(default_factory=list)
    """STORAGE_ENDPOINT_URL and STORAGE_REGION, as the trainer gets them."""


def pv_name(namespace: str, job_name: str) -> str:
    """Cluster-scoped, so named after the namespace as well."""
    return f"gpuinfra-{namespace}-{job_name}-dataset"


def claim_name(job_name: str) -> str:
    return f"{job_name}-dataset"


class JobDataset(pulumi.ComponentResource):
    """The objects one Job's dataset needs, and what its pod adds (`pod`)."""

    pod: DatasetPod

    def __init__(
        self, name: str, args: JobDatasetArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:JobDataset", name, None, opts)
        dataset = args.dataset
        uri = dataset_uri(args.bucket, dataset)
        if dataset.access == "stream":
            self.pod = DatasetPod(env=[{"name": DATASET_ENV, "value": uri}])
        elif dataset.access == "mount":
            self.pod = self._mount(name, args)
        else:
            self.pod = self._stage(name, args, uri)
        self.register_outputs({})

    def _volume_pair(
        self,
        name: str,
        args: JobDatasetArgs,
        access_mode: str,
        source: dict[str, Any] | pulumi.Output[dict[str, Any]],
        depends_on: list[pulumi.Resource],
    ) -> k8s.core.v1.PersistentVolumeClaim:
        """A static PV reserved for one claim (claimRef), and that claim (volumeName,
        storageClassName "": no default class, no provisioner; pulumi-kubernetes then waits
        until it is Bound, which happens at once)."""
        labels = {
            **app_labels(claim_name(args.job_name), "dataset"),
            "gpuinfra.io/training-job": args.job_name,
        }
        volume = pv_name(args.namespace, args.job_name)
        claim = claim_name(args.job_name)
        spec = pulumi.Output.from_input(source).apply(
            lambda fields: api_fields(
                {
                    "capacity": {"storage": NOMINAL_CAPACITY},
                    "accessModes": [access_mode],
                    "storageClassName": "",
                    "persistentVolumeReclaimPolicy": "Retain",
                    "claimRef": {"namespace": args.namespace, "name": claim},
                    **fields,
                }
            )
        )
        pv = k8s.core.v1.PersistentVolume(
            f"{name}-pv",
            metadata={"name": volume, "labels": labels},
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
        )
        return k8s.core.v1.PersistentVolumeClaim(
            f"{name}-pvc",
            metadata={"name": claim, "namespace": args.namespace, "labels": labels},
            spec=api_fields(
                {
                    "accessModes": [access_mode],
                    "storageClassName": "",
                    "volumeName": volume,
                    "resources": {"requests": {"storage": NOMINAL_CAPACITY}},
                }
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[pv]),
        )

    def _mount(self, name: str, args: JobDatasetArgs) -> DatasetPod:
        mount = args.mount
        if mount is None:  # settings refuse this; a bug if it gets here
            raise ValueError(f"{args.job_name}: access mount on a platform without a CSI driver")
        prefix = args.dataset.source.strip("/")
        volume = pv_name(args.namespace, args.job_name)
        attributes: pulumi.Input[dict[str, Any]] = (
            pulumi.Output.all(**dict(mount.attributes)) if mount.attributes else {}
        )
        source = pulumi.Output.all(args.bucket.name, attributes).apply(
            lambda known: _with_handle(
                mount_spec(mount, args.bucket, prefix, dict(known[1]), str(known[0])),
                mount.driver,
                volume,
            )
        )
        claim = self._volume_pair(name, args, "ReadOnlyMany", source, list(mount.ready))
        return DatasetPod(
            env=[{"name": DATASET_ENV, "value": args.dataset.mount_path}],
            volumes=[
                {
                    "name": VOLUME,
                    "persistentVolumeClaim": {
                        "claimName": claim_name(args.job_name),
                        "readOnly": True,
                    },
                }
            ],
            mounts=[{"name": VOLUME, "mountPath": args.dataset.mount_path, "readOnly": True}],
            depends_on=[claim, *mount.ready],
        )

    def _stage(self, name: str, args: JobDatasetArgs, uri: pulumi.Output[str]) -> DatasetPod:
        dataset = args.dataset
        source = {
            # DirectoryOrCreate: the kubelet makes the folder (root, 0755) on a node's first
            # use; the stage container writes it as root (no capabilities), the trainer reads.
            "hostPath": {"path": dataset.node_cache_path, "type": "DirectoryOrCreate"},
        }
        claim = self._volume_pair(name, args, "ReadWriteOnce", source, [])
        key = uri.apply(cache_key)
        init = {
            "name": STAGE_CONTAINER,
            "image": args.stage_image,
            "imagePullPolicy": "Always",
            "command": ["python", "-m", "trainer.stage"],
            "args": [
                "--source",
                uri,
                "--dest",
                key.apply(lambda k: f"{CACHE_MOUNT}/{k}"),
            ],
            "env": list(args.storage_env),
            # Root without capabilities: it may write the root-owned cache folder the kubelet
            # created and nothing else of the node's (the volume is the cache folder alone).
            "securityContext": {
                **RESTRICTED_CONTAINER,
                "runAsUser": 0,
                "runAsGroup": 0,
                "runAsNonRoot": False,
                "readOnlyRootFilesystem": True,
            },
            "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"memory": "2Gi"},
            },
            "volumeMounts": [
                {"name": VOLUME, "mountPath": CACHE_MOUNT},
                {"name": "stage-tmp", "mountPath": "/tmp"},
            ],
        }
        return DatasetPod(
            env=[{"name": DATASET_ENV, "value": dataset.mount_path}],
            volumes=[
                {"name": VOLUME, "persistentVolumeClaim": {"claimName": claim_name(args.job_name)}},
                {"name": "stage-tmp", "emptyDir": {"sizeLimit": "1Gi"}},
            ],
            mounts=[
                {
                    "name": VOLUME,
                    "mountPath": dataset.mount_path,
                    "subPath": key,
                    "readOnly": True,
                }
            ],
            init_containers=[init],
            depends_on=[claim],
        )


def _with_handle(fields: dict[str, Any], driver: str, volume: str) -> dict[str, Any]:
    csi = dict(fields.get("csi") or {})
    # Unique per PV: Kubernetes processes one volume per handle (Mountpoint CONFIGURATION.md).
    csi.update({"driver": driver, "volumeHandle": volume})
    return {**fields, "csi": csi}
