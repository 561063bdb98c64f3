"""Everything the GPU layer puts on a cluster, from a `ClusterHandle` and the layer's settings."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.cluster_handle import ClusterHandle, Taint
from components.settings.gpu_layer import (
    GpuLayerSettings,
    Misfit,
    TrainingJobSettings,
    place_job,
)

from .cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from .datasets import JobDataset, JobDatasetArgs
from .dcgm_exporter import DcgmExporter, DcgmExporterArgs
from .device_plugin import DevicePluginArgs, NvidiaDevicePlugin
from .kueue import (
    LOCAL_QUEUE,
    KueueInstall,
    KueueInstallArgs,
    TrainingQueue,
    TrainingQueueArgs,
    queue_pools,
)
from .labels import app_labels
from .namespaces import GpuNamespaces, GpuNamespacesArgs
from .spot_reclaim_drainer import SpotReclaimDrainer, SpotReclaimDrainerArgs
from .training_job import TrainingJob, TrainingJobArgs, storage_env

SYSTEM_NAMESPACE = "gpu-system"
MONITORING_NAMESPACE = "monitoring"
TRAINING_PRIORITY_CLASS = "gpuinfra-training"
# kube-prometheus-stack 81.6.2 (prometheus-community/helm-charts, released by 2026-02-11).
KUBE_PROMETHEUS_STACK_VERSION = "81.6.2"
KUBE_PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"


@dataclass(frozen=True)
class GpuLayerArgs:
    handle: ClusterHandle
    settings: GpuLayerSettings


def installs_device_plugin(handle: ClusterHandle, settings: GpuLayerSettings) -> bool:
    """`auto` leaves the plugin to platforms that run their own (two would fight over GPUs)."""
    if settings.device_plugin == "auto":
        return not handle.platform_runs_device_plugin
    return settings.device_plugin == "always"


def job_nodes(
    handle: ClusterHandle, job: TrainingJobSettings
) -> tuple[dict[str, str], tuple[Taint, ...]]:
    """(node selector, tolerated taints) of a Job: its pool's, or every GPU node's where the
    cluster has no pools gpuinfra knows (an existing cluster).

    Settings placed the Job on a pool (`place_job`); a Job that reaches here unplaced on a
    cluster with pools goes where `place_job` would put it."""
    if not handle.gpu_pools:
        return dict(handle.gpu_node_labels), (handle.gpu_taint,)
    pool = handle.pool(job.pool) if job.pool is not None else None
    if pool is None:
        where = place_job(
            handle.gpu_pools,
            job=job.name,
            pool=job.pool,
            gpu_model=job.gpu_model,
            gpus_per_node=job.gpus_per_node,
        )
        if isinstance(where, Misfit):
            raise ValueError(where.message)  # settings refuse such a Job before this
        pool = handle.pool(where.name)
        assert pool is not None
    return pool.selector, pool.taints


class GpuLayer(pulumi.ComponentResource):
    provider: k8s.Provider

    def __init__(
        self, name: str, args: GpuLayerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:kubernetes:GpuLayer", name, None, opts)
        handle, settings = args.handle, args.settings
        # Every object goes through this provider, never the ambient kubeconfig, so a preview
        # or `pulumi up` cannot touch whatever cluster the user's shell points at.
        # It waits for the node pools: pulumi-kubernetes awaits Deployments (and helm waits
        # for a chart) until their pods are ready, which needs nodes to run on.
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=handle.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(handle.nodes)),
        )
        on_cluster = pulumi.ResourceOptions(parent=self, provider=self.provider)

        namespaces = GpuNamespaces(
            name,
            GpuNamespacesArgs(
                system_namespace=SYSTEM_NAMESPACE,
                training_namespace=handle.training_namespace,
                monitoring_namespace=MONITORING_NAMESPACE,
                training_namespace_labels=handle.training_namespace_labels,
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[self.provider]),
        )
        after_namespaces = pulumi.ResourceOptions(
            parent=self, providers=[self.provider], depends_on=[namespaces]
        )

        service_account = k8s.core.v1.ServiceAccount(
            f"{name}-trainer-sa",
            metadata={
                "name": handle.training_service_account,
                "namespace": handle.training_namespace,
                "labels": app_labels(handle.training_service_account, "training"),
                # Workload identity: what lets training pods reach the bucket with no keys.
                "annotations": dict(handle.service_account_annotations),
            },
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.provider, depends_on=[namespaces]
            ),
        )
        priority = k8s.scheduling.v1.PriorityClass(
            f"{name}-training-priority",
            metadata={
                "name": TRAINING_PRIORITY_CLASS,
                "labels": app_labels(TRAINING_PRIORITY_CLASS, "training"),
            },
            # Below every default-priority pod, so other work may preempt training (it resumes
            # from its checkpoint); above the cluster autoscaler's expendable cutoff (-10), so
            # pending training still makes it add GPU nodes. Training never preempts others.
            value=-1,
            preemption_policy="Never",
            global_default=False,
            description="Preemptible, checkpointing training Jobs (gpuinfra)",
            opts=on_cluster,
        )

        # Kueue asks the autoscaler gpuinfra runs (EKS) for a Job's nodes at once (issue 19).
        provisioning = handle.autoscaler is not None and settings.queueing.mode != "off"
        autoscaler_crds: list[pulumi.Resource] = []
        if handle.autoscaler is not None:
            # Adds GPU nodes for pending training pods and removes them when idle (EKS); other
            # platforms scale their pools themselves and hand over no spec.
            autoscaler_crds = ClusterAutoscaler(
                name,
                ClusterAutoscalerArgs(spec=handle.autoscaler, provisioning_requests=provisioning),
                opts=on_cluster,
            ).crds
        if installs_device_plugin(handle, settings):
            NvidiaDevicePlugin(
                name,
                DevicePluginArgs(
                    namespace=SYSTEM_NAMESPACE,
                    gpu_node_labels=handle.gpu_node_labels,
                    gpu_taints=handle.gpu_node_taints(),
                    time_slicing_replicas=settings.time_slicing_replicas,
                    mig_strategy=settings.mig_strategy,
                ),
                opts=after_namespaces,
            )
        if handle.spot_reclaim_notice is not None:
            SpotReclaimDrainer(
                name,
                SpotReclaimDrainerArgs(
                    namespace=SYSTEM_NAMESPACE,
                    notice=handle.spot_reclaim_notice,
                    # Spot pools' nodes only: an on-demand node is never reclaimed.
                    gpu_node_labels=handle.spot_node_labels(),
                    gpu_taints=handle.spot_node_taints(),
                ),
                opts=after_namespaces,
            )
        crds: list[pulumi.Resource] = []
        if settings.kube_prometheus_stack:
            crds.append(
                k8s.helm.v3.Release(
                    f"{name}-kube-prometheus-stack",
                    name=KUBE_PROMETHEUS_STACK_RELEASE,
                    chart="kube-prometheus-stack",
                    version=KUBE_PROMETHEUS_STACK_VERSION,
                    repository_opts={"repo": "https://prometheus-community.github.io/helm-charts"},
                    namespace=MONITORING_NAMESPACE,
                    create_namespace=True,
                    # Find ServiceMonitors, PrometheusRules (the GPU alerts) and dashboards from
                    # every namespace, whatever their `release` label (the chart's rule selector
                    # otherwise wants its own: templates/prometheus/prometheus.yaml:279-288 at
                    # kube-prometheus-stack-81.6.2).
                    values={
                        "prometheus": {
                            "prometheusSpec": {
                                "serviceMonitorSelectorNilUsesHelmValues": False,
                                "ruleSelectorNilUsesHelmValues": False,
                            }
                        },
                        "grafana": {
                            "sidecar": {"dashboards": {"enabled": True, "searchNamespace": "ALL"}}
                        },
                    },
                    opts=on_cluster,
                )
            )
        DcgmExporter(
            name,
            DcgmExporterArgs(
                namespace=SYSTEM_NAMESPACE,
                gpu_node_labels=handle.gpu_node_labels,
                gpu_taints=handle.gpu_node_taints(),
                profiling_metrics=settings.dcgm_profiling_metrics,
                service_monitor=settings.prometheus_operator,
                service_monitor_labels=(
                    {"release": settings.prometheus_release} if settings.prometheus_release else {}
                ),
                # The chart brings the ServiceMonitor CRD: the monitor must come after it.
                crds_from=crds,
                training_namespace=handle.training_namespace,
                alerts=settings.alerts,
            ),
            opts=after_namespaces,
        )

        # --- queueing (issue 19): Jobs wait in Kueue until all their GPUs are free ---
        queue = settings.queueing
        job_after: list[pulumi.Resource] = [namespaces, service_account, priority]
        if queue.mode != "off":
            kueue_ready: list[pulumi.Resource] = []
            if queue.mode == "install":
                kueue_ready = KueueInstall(
                    name,
                    KueueInstallArgs(
                        queue=queue,
                        unmanaged_namespaces=(SYSTEM_NAMESPACE, MONITORING_NAMESPACE),
                        gpu_node_labels=handle.gpu_node_labels,
                        after=autoscaler_crds,
                    ),
                    opts=pulumi.ResourceOptions(parent=self, providers=[self.provider]),
                ).ready
            training_queue = TrainingQueue(
                name,
                TrainingQueueArgs(
                    pools=queue_pools(handle),
                    queue=queue,
                    namespace=handle.training_namespace,
                    jobs=settings.training_jobs,
                    provisioning=provisioning,
                    after=[*kueue_ready, *autoscaler_crds, namespaces],
                ),
                opts=pulumi.ResourceOptions(parent=self, providers=[self.provider]),
            )
            job_after.append(training_queue.local_queue)

        for job in settings.training_jobs:
            node_labels, taints = job_nodes(handle, job)
            dataset = (
                JobDataset(
                    f"{name}-{job.name}",
                    JobDatasetArgs(
                        job_name=job.name,
                        dataset=job.dataset,
                        namespace=handle.training_namespace,
                        bucket=handle.bucket,
                        mount=handle.dataset_mount,
                        stage_image=settings.trainer_image,
                        storage_env=[
                            e
                            for e in storage_env(handle.bucket, job.name)
                            if e["name"] != "CHECKPOINT_URI"
                        ],
                    ),
                    opts=after_namespaces,
                )
                if job.dataset is not None
                else None
            )
            TrainingJob(
                f"{name}-{job.name}",
                TrainingJobArgs(
                    job=job,
                    namespace=handle.training_namespace,
                    service_account=handle.training_service_account,
                    priority_class=TRAINING_PRIORITY_CLASS,
                    bucket=handle.bucket,
                    gpu_node_labels=node_labels,
                    gpu_taints=taints,
                    dataset=dataset.pod if dataset is not None else None,
                    queue_name=LOCAL_QUEUE if queue.mode != "off" else None,
                    after=job_after,
                ),
                opts=pulumi.ResourceOptions(
                    parent=self, providers=[self.provider], depends_on=job_after
                ),
            )
        self.register_outputs({})
