"""A restartable PyTorch training Job: survives spot preemption by checkpoint and resume.

The restart semantics, in Kubernetes terms (podFailurePolicy is GA from 1.31):
- a pod evicted by a drain, a spot reclaim or preemption gets the DisruptionTarget
  condition: `Ignore`, so it is replaced without counting against the backoff limit;
- the trainer's "preempted, checkpoint written" exit code (75): `Ignore` as well;
- a non-retryable exit code (bad arguments, unusable data; 64 by default): `FailJob` at once;
- anything else counts against `backoffLimit` (per index for multi-node Jobs).
`restartPolicy: Never` (required by podFailurePolicy) and `podReplacementPolicy: Failed`
(a replacement starts only once the old pod is gone, so two never write one checkpoint).

What `pulumi up` does with a Job: it creates it and moves on (`pulumi.com/skipAwait`: the
provider would otherwise wait for the Job to complete, hours of training, and fail the update
after 10 minutes). A changed spec replaces the Job (its pod template is immutable): the old
Job and its pods are deleted first, and the new one resumes from the last checkpoint.

What the Job hands the trainer (the contract in the trainer's README): `CHECKPOINT_URI`
(`<scheme>://<bucket>/<job name>`), `STORAGE_ENDPOINT_URL` and `STORAGE_REGION` of the bucket;
credentials come only from the platform's identity webhook (IRSA, RRSA, TKE pod identity),
which mounts its own projected token, so the pod mounts no Kubernetes API token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import BucketRef, Taint
from components.settings.gpu_layer import PREEMPTED_EXIT_CODE, TrainingJobSettings

from .datasets import DATASET_ENV, DatasetPod
from .kueue import QUEUE_LABEL
from .labels import RESTRICTED_CONTAINER, api_fields, app_labels, checkov_skips, toleration

CONTAINER = "trainer"
RENDEZVOUS_PORT = 29500
TRAINER_UID = 10001
"""The non-root user of the reference trainer image (trainer/Dockerfile)."""
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
"""pulumi-kubernetes waits for a Job to complete unless so annotated (provider rule
kubernetes.job_needs_skip_await cites where)."""


@dataclass(frozen=True)
class TrainingJobArgs:
    job: TrainingJobSettings
    namespace: str
    service_account: str
    priority_class: str
    bucket: BucketRef
    """The Job checkpoints under `<scheme>://<bucket>/<job name>`."""
    gpu_node_labels: Mapping[str, str]
    """The node selector: the Job's GPU pool's (or every GPU node's on an existing cluster)."""
    gpu_taints: Sequence[Taint]
    """The taints of those nodes, each tolerated."""
    dataset: DatasetPod | None = None
    """Volumes, init container and env of the Job's dataset (components/kubernetes/datasets.py)."""
    queue_name: str | None = None
    """Kueue LocalQueue the Job waits in (created suspended); None: it starts at once."""
    after: Sequence[pulumi.Resource] = ()
    """What the Job itself must be created after (a component's depends_on does not reach
    its children): the LocalQueue, which waits for Kueue's webhooks."""


QUEUED_JOB_IGNORES = ["spec.suspend"]
"""Kueue owns a queued Job's `spec.suspend`: it sets it to false on admission and back to true
to preempt or requeue (kueue v0.19.2 pkg/controller/jobs/job/job_controller.go:165-180,
377-378). Once a `pulumi refresh` reads `false` back into the Job's state, `true` in the
program would differ, and with `replace_on_changes=["spec"]` the next `pulumi up` would delete
and recreate a running training Job. The path is the engine's (camelCase input names); only
queued Jobs carry it, so a Job taken off the queue (`kueue: off`) is not left suspended."""


def headless_service_name(job_name: str) -> str:
    return f"{job_name}-workers"


def default_args(job: TrainingJobSettings) -> list[str]:
    """torchrun options for the reference trainer's entrypoint (`python -m trainer.launch`)."""
    if job.nodes == 1:
        launch = ["--standalone", f"--nproc-per-node={job.gpus_per_node}"]
    else:
        launch = [
            "--nnodes=$(NNODES)",
            "--node-rank=$(NODE_RANK)",
            "--master-addr=$(MASTER_ADDR)",
            "--master-port=$(MASTER_PORT)",
            f"--nproc-per-node={job.gpus_per_node}",
        ]
    # FSDP trains the GPT decoder (the model that needs it); ResNet keeps per-GPU BatchNorm
    # statistics, which FSDP would not reconcile.
    trainer = ["--model=gpt", "--sharding=fsdp"] if job.sharding == "fsdp" else ["--model=resnet50"]
    if job.micro_batch_size is not None:
        trainer.append(f"--batch-size={job.micro_batch_size}")
    if job.global_batch_size is not None:
        trainer.append(f"--global-batch-size={job.global_batch_size}")
    return [
        *launch,
        "-m",
        "trainer",
        *trainer,
        "--checkpoint-uri=$(CHECKPOINT_URI)",
        "--checkpoint-every-seconds=600",
        "--async-checkpoint",
        *([f"--data-dir=$({DATASET_ENV})"] if job.dataset is not None else []),
    ]


def storage_env(bucket: BucketRef, job_name: str) -> list[dict[str, Any]]:
    """The Job -> trainer storage contract: where to checkpoint and how to reach the bucket."""
    env: list[dict[str, Any]] = [
        {
            "name": "CHECKPOINT_URI",
            "value": bucket.uri.apply(lambda root: f"{root.rstrip('/')}/{job_name}"),
        }
    ]
    if bucket.endpoint:
        env.append({"name": "STORAGE_ENDPOINT_URL", "value": bucket.endpoint})
    if bucket.region:
        env.append({"name": "STORAGE_REGION", "value": bucket.region})
    return env


def pod_failure_policy(job: TrainingJobSettings) -> dict[str, Any]:
    return {
        "rules": [
            {
                "action": "FailJob",
                "onExitCodes": {
                    "containerName": CONTAINER,
                    "operator": "In",
                    "values": list(job.non_retryable_exit_codes),
                },
            },
            {
                "action": "Ignore",
                "onExitCodes": {
                    "containerName": CONTAINER,
                    "operator": "In",
                    "values": [PREEMPTED_EXIT_CODE],
                },
            },
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
        ]
    }


class TrainingJob(pulumi.ComponentResource):
    job_name: str

    def __init__(
        self, name: str, args: TrainingJobArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:TrainingJob", name, None, opts)
        job = args.job
        labels = {**app_labels(job.name, "training"), "gpuinfra.io/training-job": job.name}
        multi_node = job.nodes > 1
        service = headless_service_name(job.name)
        dataset = args.dataset or DatasetPod(env=[])
        depends: list[pulumi.Resource] = [*args.after, *dataset.depends_on]
        if multi_node:
            # Gives each pod the DNS name <job>-<index>.<service>; index 0 hosts the rendezvous.
            depends.append(
                k8s.core.v1.Service(
                    f"{name}-workers",
                    metadata={"name": service, "namespace": args.namespace, "labels": labels},
                    spec=api_fields(
                        {
                            "clusterIP": "None",
                            "publishNotReadyAddresses": True,
                            "selector": {"gpuinfra.io/training-job": job.name},
                            "ports": [{"name": "rendezvous", "port": RENDEZVOUS_PORT}],
                        }
                    ),
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )

        env: list[dict[str, Any]] = [
            *storage_env(args.bucket, job.name),
            *dataset.env,
            *({"name": k, "value": v} for k, v in sorted(job.env.items())),
        ]
        if multi_node:
            env += [
                {"name": "MASTER_ADDR", "value": f"{job.name}-0.{service}"},
                {"name": "MASTER_PORT", "value": str(RENDEZVOUS_PORT)},
                {"name": "NNODES", "value": str(job.nodes)},
                {
                    "name": "NODE_RANK",
                    "valueFrom": {
                        "fieldRef": {
                            "fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"
                        }
                    },
                },
            ]

        container: dict[str, Any] = {
            "name": CONTAINER,
            "image": job.image,
            "imagePullPolicy": "Always",
            "args": list(job.args) if job.args is not None else default_args(job),
            "env": env,
            # The reference trainer image runs as 10001; other images must run as that user too.
            "securityContext": {
                **RESTRICTED_CONTAINER,
                "runAsNonRoot": True,
                "runAsUser": TRAINER_UID,
                "runAsGroup": TRAINER_UID,
            },
            "resources": {
                "requests": {"cpu": job.cpu, "memory": job.memory},
                "limits": {"nvidia.com/gpu": str(job.gpus_per_node), "memory": job.memory},
            },
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, *dataset.mounts],
        }
        if job.command is not None:
            container["command"] = list(job.command)
        pod_spec_extra: dict[str, Any] = (
            {"initContainers": list(dataset.init_containers)} if dataset.init_containers else {}
        )
        if multi_node:
            container["ports"] = [{"name": "rendezvous", "containerPort": RENDEZVOUS_PORT}]

        annotations = checkov_skips(
            {
                "CKV_K8S_11": "no CPU limit on purpose: data loading bursts; CPU is requested",
                "CKV_K8S_22": "PyTorch and data loaders write caches and temporary files",
                "CKV_K8S_43": "pinned by release tag; digests follow the registry's policy",
            }
        )
        spec: dict[str, Any] = {
            "completions": job.nodes,
            "parallelism": job.nodes,
            "completionMode": "Indexed" if multi_node else "NonIndexed",
            "podFailurePolicy": pod_failure_policy(job),
            "podReplacementPolicy": "Failed",
            "ttlSecondsAfterFinished": job.ttl_seconds_after_finished,
            "template": {
                "metadata": {
                    "labels": labels,
                    # A running trainer whose GPU use dips must not be evicted by the cluster
                    # autoscaler's scale-down; spot reclaims still reach it as DisruptionTarget.
                    "annotations": {
                        **annotations,
                        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
                    },
                },
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": args.service_account,
                    # The identity webhooks project a token of their own (audience sts.*);
                    # the trainer never calls the Kubernetes API.
                    "automountServiceAccountToken": False,
                    "priorityClassName": args.priority_class,
                    "terminationGracePeriodSeconds": job.termination_grace_period_seconds,
                    "nodeSelector": dict(args.gpu_node_labels),
                    "tolerations": [toleration(t) for t in args.gpu_taints],
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    **pod_spec_extra,
                    "containers": [container],
                    "volumes": [
                        {
                            # PyTorch DataLoader workers share batches through /dev/shm.
                            "name": "dshm",
                            "emptyDir": {"medium": "Memory", "sizeLimit": f"{job.shm_size_gi}Gi"},
                        },
                        *dataset.volumes,
                    ],
                },
            },
        }
        if multi_node:
            spec["template"]["spec"]["subdomain"] = service
            # Per index: a node that keeps failing does not use up the other nodes' retries.
            spec["backoffLimitPerIndex"] = job.backoff_limit
            spec["maxFailedIndexes"] = 0
        else:
            spec["backoffLimit"] = job.backoff_limit
        if job.active_deadline_seconds is not None:
            spec["activeDeadlineSeconds"] = job.active_deadline_seconds
        job_labels = dict(labels)
        if args.queue_name is not None:
            # Created suspended, as Kueue's webhook would make it anyway: Kueue unsuspends it
            # once the queue admits the GPUs of every pod (all-or-nothing).
            job_labels[QUEUE_LABEL] = args.queue_name
            spec["suspend"] = True

        k8s.batch.v1.Job(
            f"{name}-job",
            metadata={
                "name": job.name,
                "namespace": args.namespace,
                "labels": job_labels,
                "annotations": {**annotations, **SKIP_AWAIT},
            },
            spec=api_fields(spec),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=depends,
                # A Job's pod template is immutable: a changed spec means a new Job.
                replace_on_changes=["spec"],
                delete_before_replace=True,
                ignore_changes=QUEUED_JOB_IGNORES if args.queue_name is not None else None,
            ),
        )
        self.job_name = job.name
        self.register_outputs({"job_name": job.name})
