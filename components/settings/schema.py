"""Every `gpuinfra:` config key: its type, default and description.

This table is the source of truth. `Pulumi.yaml`'s `config:` block and the
README's config reference are generated from it (`gpuinfra schema --write`) and
a test fails when either drifts.

Keys are flat (e.g. `gpuPoolMaxNodes`, not `gpuPool.maxNodes`) because a Pulumi
project's config schema only types strings, integers, booleans and arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ConfigType = Literal["string", "integer", "boolean", "array", "objects"]
"""`objects` (a list of mappings) is ours, not Pulumi's: a project schema cannot type it, so
such keys are documented in the README but left out of Pulumi.yaml's `config:` block."""
ConfigValue = str | int | bool | list[str] | list[dict[str, object]]
PULUMI_TYPES = ("string", "integer", "boolean", "array")

NAMESPACE = "gpuinfra"


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: ConfigType
    default: ConfigValue
    description: str
    group: str

    @property
    def qualified(self) -> str:
        return f"{NAMESPACE}:{self.name}"


def _k(
    name: str, type_: ConfigType, default: ConfigValue, group: str, description: str
) -> ConfigKey:
    return ConfigKey(name=name, type=type_, default=default, description=description, group=group)


KEYS: tuple[ConfigKey, ...] = (
    # general
    _k(
        "cloud",
        "string",
        "aws",
        "general",
        "Where the stack runs. Allowed: aws, alicloud, tencentcloud, volcengine, kubernetes (an "
        "existing cluster: only the GPU layer is installed).",
    ),
    _k(
        "namePrefix",
        "string",
        "",
        "general",
        "Prefix of every resource name (lowercase letters, digits, hyphens; at most 32 "
        "characters). Empty: `gpuinfra-<stack>`.",
    ),
    # cluster
    _k(
        "kubernetesVersion",
        "string",
        "1.35",
        "cluster",
        "Kubernetes minor version of the managed cluster, e.g. `1.35` (in EKS standard support "
        "until 2027-03; older versions bill extended support, and EKS refuses those past it). "
        "At least 1.31: training Jobs rely on podFailurePolicy, GA in 1.31. On AWS, raise it "
        "one minor per `pulumi up`: node groups follow the cluster.",
    ),
    _k(
        "apiEndpointPublic",
        "boolean",
        False,
        "cluster",
        "Expose the cluster API endpoint publicly, reachable only from `adminCidrs`. "
        "False: private endpoint only (reach it through a VPN or bastion).",
    ),
    _k(
        "clusterLogTypes",
        "array",
        ["api", "audit", "authenticator"],
        "cluster",
        "Control-plane log types sent to CloudWatch. Allowed: api, audit, "
        "authenticator, controllerManager, scheduler.",
    ),
    _k(
        "clusterLogRetentionDays",
        "integer",
        30,
        "cluster",
        "Days to keep control-plane logs (a CloudWatch retention value, e.g. 7, 30, 90, 365).",
    ),
    _k(
        "deletionProtection",
        "boolean",
        False,
        "cluster",
        "Refuse to delete the cluster until this is turned off.",
    ),
    # network
    _k("vpcCidr", "string", "10.0.0.0/16", "network", "IPv4 range of the VPC, /16 to /20."),
    _k(
        "availabilityZoneCount",
        "integer",
        2,
        "network",
        "Availability zones to spread subnets over, 2 to 4.",
    ),
    _k(
        "publicSubnetCidrs",
        "array",
        [],
        "network",
        "One public subnet per zone (NAT gateways, load balancers). Empty: carved from `vpcCidr`.",
    ),
    _k(
        "privateSubnetCidrs",
        "array",
        [],
        "network",
        "One private subnet per zone (nodes and pods). Empty: carved from `vpcCidr`.",
    ),
    _k(
        "natGateways",
        "string",
        "single",
        "network",
        "NAT gateways for private subnets. Allowed: single (one, cheaper), perAz (one per zone, "
        "survives a zone outage).",
    ),
    # admin access
    _k(
        "adminCidrs",
        "array",
        [],
        "access",
        "Networks allowed to reach SSH 22, Jupyter 8888, TensorBoard 6006 and a public API "
        "endpoint. Empty: no such rule at all.",
    ),
    _k(
        "allowPublicAdminAccess",
        "boolean",
        False,
        "access",
        "Allow 0.0.0.0/0 or ::/0 in `adminCidrs`. Reported by the preview's policy checks.",
    ),
    # system pool
    _k(
        "systemPoolInstanceType",
        "string",
        "",
        "systemPool",
        "Instance type of the CPU system pool. Empty: m6i.large on AWS, ecs.g7.xlarge on Alibaba "
        "Cloud, S5.LARGE8 on Tencent Cloud.",
    ),
    _k("systemPoolMinNodes", "integer", 1, "systemPool", "Fewest system nodes, at least 1."),
    _k("systemPoolDesiredNodes", "integer", 2, "systemPool", "System nodes to start with."),
    _k("systemPoolMaxNodes", "integer", 3, "systemPool", "Most system nodes."),
    # gpu pools: a list (gpuPools), or one pool named `gpu` from the flat gpuPool* keys
    _k(
        "gpuPools",
        "objects",
        [],
        "gpuPool",
        "GPU node pools, one mapping each: name (required, 2-16 of a-z, 0-9, '-'), "
        "instanceType, or gpuModel and gpuCount; capacityType, minNodes, desiredNodes, "
        "maxNodes, diskSizeGb, labels; spotMaxPrice, spotStrategy, onDemandFallback, "
        "extraInstanceTypes where the cloud takes them. Defaults as the gpuPool* keys. Not "
        "set: one pool named `gpu` from the gpuPool* keys; set, those keys are refused. See the "
        "README's GPU pools section.",
    ),
    _k(
        "gpuPoolInstanceType",
        "string",
        "",
        "gpuPool",
        "Single-pool form (no `gpuPools`): GPU instance type from the catalog, e.g. g5.xlarge. "
        "Or leave empty and set `gpuPoolGpuModel` and `gpuPoolGpuCount`.",
    ),
    _k(
        "gpuPoolGpuModel",
        "string",
        "",
        "gpuPool",
        "GPU model to pick the cheapest fitting instance type for, e.g. A10G, A100-80GB, H100.",
    ),
    _k(
        "gpuPoolGpuCount",
        "integer",
        1,
        "gpuPool",
        "GPUs per node when the type is picked by `gpuPoolGpuModel`.",
    ),
    _k(
        "gpuPoolCapacityType",
        "string",
        "spot",
        "gpuPool",
        "Allowed: spot (cheaper, can be reclaimed with a 2-minute notice), onDemand.",
    ),
    _k(
        "gpuPoolMinNodes",
        "integer",
        0,
        "gpuPool",
        "Fewest GPU nodes; 0 lets the pool scale to zero.",
    ),
    _k("gpuPoolDesiredNodes", "integer", 0, "gpuPool", "GPU nodes to start with."),
    _k("gpuPoolMaxNodes", "integer", 2, "gpuPool", "Most GPU nodes."),
    _k(
        "gpuPoolDiskSizeGb",
        "integer",
        200,
        "gpuPool",
        "Encrypted root volume of each GPU node in GB (images and datasets cache), 50 to 16384.",
    ),
    # storage
    _k(
        "bucketName",
        "string",
        "",
        "storage",
        "Name of the dataset and checkpoint bucket. Empty: generated from the stack name.",
    ),
    _k(
        "protectBucket",
        "boolean",
        True,
        "storage",
        "Mark the bucket `protect` so `pulumi destroy` cannot delete checkpoints.",
    ),
    _k(
        "noncurrentVersionExpirationDays",
        "integer",
        30,
        "storage",
        "Days before overwritten or deleted object versions are removed, 1 to 3650.",
    ),
    _k(
        "abortIncompleteUploadDays",
        "integer",
        7,
        "storage",
        "Days before unfinished multipart uploads are cleaned up, 1 to 365.",
    ),
    # identity
    _k(
        "trainingNamespace",
        "string",
        "training",
        "identity",
        "Kubernetes namespace of the training Jobs; the bucket role trusts only it.",
    ),
    _k(
        "trainingServiceAccount",
        "string",
        "trainer",
        "identity",
        "ServiceAccount of the training Jobs; the bucket role trusts only it.",
    ),
    # GPU layer on the cluster (components/kubernetes/)
    _k(
        "gpuLayer",
        "string",
        "inline",
        "gpuLayer",
        "Where the GPU layer (device plugin, DCGM exporter, training Jobs) is deployed. "
        "Allowed: inline (by this stack's `pulumi up`, which must then reach the cluster's API "
        "endpoint: needs `apiEndpointPublic` and a network in `adminCidrs`), separate (this "
        "stack only creates the cluster and exports `clusterHandle`; a `cloud: kubernetes` "
        "stack with `clusterStack` deploys the layer from where the endpoint answers).",
    ),
    _k(
        "devicePlugin",
        "string",
        "auto",
        "gpuLayer",
        "NVIDIA device plugin. Allowed: auto (install unless the platform runs one, as ACK "
        "does), always, never.",
    ),
    _k(
        "devicePluginTimeSlicingReplicas",
        "integer",
        1,
        "gpuLayer",
        "Share each GPU between this many pods by time-slicing (1: no sharing), 1 to 64.",
    ),
    _k(
        "devicePluginMigStrategy",
        "string",
        "none",
        "gpuLayer",
        "How MIG slices are advertised. Allowed: none, single, mixed.",
    ),
    _k(
        "dcgmProfilingMetrics",
        "boolean",
        False,
        "gpuLayer",
        "Collect DCGM profiling metrics (tensor-core and DRAM activity) besides the default "
        "counters.",
    ),
    _k(
        "monitoringPrometheusOperator",
        "boolean",
        False,
        "gpuLayer",
        "Create a ServiceMonitor for the DCGM exporter (needs the Prometheus Operator CRDs).",
    ),
    _k(
        "monitoringPrometheusRelease",
        "string",
        "kube-prometheus-stack",
        "gpuLayer",
        "`release` label of the DCGM exporter's ServiceMonitor: kube-prometheus-stack's "
        "Prometheus selects ServiceMonitors labelled with its Helm release name. Empty: no "
        "label (a Prometheus that selects every ServiceMonitor).",
    ),
    _k(
        "monitoringKubePrometheusStack",
        "boolean",
        False,
        "gpuLayer",
        "Install kube-prometheus-stack (pinned Helm chart) into `monitoring`.",
    ),
    # GPU alerts: a PrometheusRule beside the ServiceMonitor (issue 23)
    _k(
        "gpuAlerts",
        "boolean",
        True,
        "gpuLayer",
        "With `monitoringPrometheusOperator`: a PrometheusRule with GPU alerts from the DCGM "
        "exporter's metrics (utilisation, temperature, XID and ECC errors, memory, idle GPU "
        "nodes). `gpuinfra preview` lists them.",
    ),
    _k(
        "gpuAlertUtilizationPercent",
        "integer",
        70,
        "gpuLayer",
        "GpuUnderutilized: a training pod whose GPUs' 5-minute average utilisation stays below "
        "this percent, 1 to 100 (below 70 % the instance is too big or the input pipeline too "
        "slow).",
    ),
    _k(
        "gpuAlertUtilizationMinutes",
        "integer",
        30,
        "gpuLayer",
        "GpuUnderutilized: minutes the utilisation must stay low before the alert fires, 5 to "
        "10080.",
    ),
    _k(
        "gpuAlertTemperatureCelsius",
        "integer",
        85,
        "gpuLayer",
        "GpuTemperatureHigh: GPU temperature in °C above which the card needs cooling, 40 to 120.",
    ),
    _k(
        "gpuAlertTemperatureMinutes",
        "integer",
        5,
        "gpuLayer",
        "GpuTemperatureHigh: minutes the temperature must stay high, 0 to 10080.",
    ),
    _k(
        "gpuAlertMemoryPercent",
        "integer",
        95,
        "gpuLayer",
        "GpuMemoryNearlyFull: percent of a training pod's GPU memory in use, 50 to 100.",
    ),
    _k(
        "gpuAlertMemoryMinutes",
        "integer",
        15,
        "gpuLayer",
        "GpuMemoryNearlyFull: minutes the memory must stay that full, 0 to 10080.",
    ),
    _k(
        "gpuAlertIdleNodeMinutes",
        "integer",
        0,
        "gpuLayer",
        "GpuNodeIdle: minutes a GPU node may run no training pod before the alert fires (the "
        "autoscaler should have removed it), more than `gpuPoolScaleDownDelayMinutes`, at most "
        "10080. 0: that delay plus 10 (cloud kubernetes: 20, Cluster Autoscaler's default 10 "
        "plus 10). XID and double-bit ECC errors alert at once.",
    ),
    _k(
        "trainerImage",
        "string",
        "ghcr.io/gpuinfra/trainer:0.1.0",
        "training",
        "Default image of training Jobs: the reference trainer (trainer/), pinned by tag.",
    ),
    _k(
        "trainingJobs",
        "objects",
        [],
        "training",
        "Restartable training Jobs, one mapping each: name (required), image, command, args, "
        "env, pool, gpuModel, gpusPerNode, nodes, backoffLimit, nonRetryableExitCodes, "
        "terminationGracePeriodSeconds, activeDeadlineSeconds, ttlSecondsAfterFinished, "
        "shmSizeGi, cpu, memory, dataset (source, access mount|stage|stream, mountPath, "
        "nodeCachePath); for the default trainer command: sharding (ddp, or fsdp with the GPT "
        "model), globalBatchSize (kept when a retry gets another number of GPUs) and "
        "microBatchSize (per GPU). See the README's Training Jobs and Datasets sections.",
    ),
    # --- queueing (issue 19) ---
    _k(
        "kueue",
        "string",
        "install",
        "training",
        "Kueue, the queue training Jobs wait in until their GPUs are free. install: gpuinfra "
        "installs Kueue v0.19.2 (release manifests, pinned); existing: the cluster runs Kueue "
        "v0.15 or newer (v1beta2 API) already, gpuinfra adds only its flavors and queues; "
        "off: no queue, Jobs start at once.",
    ),
    _k(
        "kueueGpuQuota",
        "integer",
        0,
        "training",
        "GPUs the training queue admits at once on each GPU pool (its ClusterQueue's nominal "
        "quota per pool, capped by the pool's maximum); Jobs beyond it wait, holding nothing. "
        "0: each pool's maximum (maxNodes x GPUs per node, after maxGpus), so the queue "
        "admits what the pools can hold. Required on `cloud: kubernetes` stacks without "
        "clusterStack (they know no pools).",
    ),
    _k(
        "kueuePodsReadyTimeoutMinutes",
        "integer",
        20,
        "training",
        "Minutes every pod of an admitted Job has to start (nodes added, image pulled); past "
        "it Kueue suspends the Job, frees its GPUs and requeues it (waitForPodsReady), 5 to "
        "1440.",
    ),
    # bring your own cluster (cloud: kubernetes)
    _k(
        "clusterStack",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: the cluster stack (`<org>/<project>/<stack>`, deployed with "
        "`gpuLayer: separate`) whose `clusterHandle` output this stack deploys the GPU layer "
        "onto, read through a StackReference. Replaces kubeconfig and the existing* keys.",
    ),
    _k(
        "kubeconfig",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: kubeconfig of the cluster (set it with --secret). Empty: the "
        "Kubernetes provider's own config or KUBECONFIG.",
    ),
    _k(
        "existingClusterName",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: a name for the cluster in outputs and reports.",
    ),
    _k(
        "existingBucketUri",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: bucket (and prefix) for checkpoints, e.g. s3://my-bucket/runs; "
        "required when trainingJobs is set.",
    ),
    _k(
        "existingBucketEndpoint",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: S3-compatible endpoint URL of that bucket, when not AWS S3.",
    ),
    _k(
        "existingBucketRegion",
        "string",
        "",
        "existingCluster",
        "cloud kubernetes: region of that bucket (the Jobs' STORAGE_REGION), e.g. us-east-1.",
    ),
    _k(
        "existingServiceAccountAnnotations",
        "array",
        [],
        "existingCluster",
        "cloud kubernetes: key=value annotations that give the training ServiceAccount bucket "
        "access (e.g. eks.amazonaws.com/role-arn=...).",
    ),
    _k(
        "existingGpuNodeLabels",
        "array",
        [],
        "existingCluster",
        "cloud kubernetes (required): key=value labels every GPU node of the cluster carries; "
        "the GPU DaemonSets and Jobs select on them. Nothing sets one on a plain cluster: use "
        "your GPU node pool's own label, `nvidia.com/gpu.present=true` (NVIDIA GPU Operator), "
        "`feature.node.kubernetes.io/pci-10de.present=true` (Node Feature Discovery) or "
        "`aliyun.accelerator/nvidia_name=<model>` (ACK).",
    ),
    _k(
        "existingGpusPerNode",
        "integer",
        1,
        "existingCluster",
        "cloud kubernetes: GPUs on each GPU node (the most a training Job may ask per node).",
    ),
    _k(
        "existingPlatformRunsDevicePlugin",
        "boolean",
        False,
        "existingCluster",
        "cloud kubernetes: the cluster already runs an NVIDIA device plugin (GPU Operator, "
        "ACK): devicePlugin auto then installs none.",
    ),
    # GPU pool keys more than one cloud reads (Alibaba Cloud, Tencent Cloud)
    _k(
        "gpuPoolSpotMaxPrice",
        "string",
        "",
        "gpuPoolSpot",
        "Most to pay for one spot GPU instance per hour, in the account's billing currency "
        "(e.g. `2.5`). Only with the spot strategy that takes a limit (Alibaba Cloud: "
        "`gpuPoolSpotStrategy: SpotWithPriceLimit`, empty: no limit; Tencent Cloud: required "
        "for a spot pool).",
    ),
    _k(
        "gpuDriverVersion",
        "string",
        "",
        "gpuPoolSpot",
        "NVIDIA driver version the platform installs on GPU nodes, e.g. `550.144.03` (ACK: the "
        "`ack.aliyun.com/nvidia-driver-version` node label; TKE: the node pool's `gpu_args`, "
        "one of the versions in components/catalog/tencentcloud_gpu_drivers.py). Empty: the "
        "platform's default.",
    ),
    # AWS only (EKS)
    _k(
        "clusterAdminArns",
        "array",
        [],
        "aws",
        "AWS: IAM role or user ARNs (`arn:aws:iam::<account>:role/<name>`) given cluster-admin "
        "access entries on the EKS cluster, besides the principal that runs `pulumi up` (which "
        "always gets one), e.g. your SSO role or a self-hosted runner's role.",
    ),
    # Alibaba Cloud only
    _k(
        "gpuPoolSpotStrategy",
        "string",
        "SpotAsPriceGo",
        "alicloud",
        "Alibaba Cloud spot bidding when `gpuPoolCapacityType` is spot. Allowed: SpotAsPriceGo "
        "(pay the market price, up to the on-demand price), SpotWithPriceLimit (pay at most "
        "`gpuPoolSpotMaxPrice`).",
    ),
    _k(
        "gpuPoolExtraInstanceTypes",
        "array",
        [],
        "alicloud",
        "Alibaba Cloud: more instance types with the same GPUs (model and count) as "
        "`gpuPoolInstanceType`, e.g. ecs.gn7i-c16g1.4xlarge. Not a fallback order: the "
        "spot pool's scaling group (COST_OPTIMIZED) buys whichever listed type in stock has "
        "the lowest price per vCPU, which can be the larger type.",
    ),
    _k(
        "gpuPoolOnDemandFallback",
        "boolean",
        True,
        "alicloud",
        "Alibaba Cloud: create pay-as-you-go GPU nodes when no spot instance can be had "
        "(costs the on-demand price). False: wait for spot stock.",
    ),
    _k(
        "ackVersion",
        "string",
        "",
        "alicloud",
        "Alibaba Cloud: the full ACK version, e.g. `1.33.3-aliyun.1`, of `kubernetesVersion`'s "
        "minor. Empty: the version pinned for that minor in components/settings/clouds/"
        "alicloud.py. Never looked up: changing it is the (control-plane) upgrade.",
    ),
    # Tencent Cloud only
    _k(
        "cosAppId",
        "string",
        "",
        "tencentcloud",
        "Tencent Cloud (required there): the account's APPID, 10 digits, e.g. `1250000000`. COS "
        "bucket names end with `-<APPID>`; an empty `bucketName` becomes "
        "`<namePrefix>-data-<APPID>`.",
    ),
    _k(
        "tkeZones",
        "array",
        [],
        "tencentcloud",
        "Tencent Cloud: the zone of each private subnet, in order, e.g. `[ap-guangzhou-3, "
        "ap-guangzhou-4]`; as many as `availabilityZoneCount`. Empty: the zones that offer the "
        "GPU type are looked up once, and existing subnets keep theirs.",
    ),
    _k(
        "gpuCudaVersion",
        "string",
        "",
        "tencentcloud",
        "Tencent Cloud: CUDA toolkit TKE installs on GPU nodes with `gpuDriverVersion`, e.g. "
        "`12.2.0`; must pair with that driver. Empty: none (containers bring their own).",
    ),
    _k(
        "gpuCudnnVersion",
        "string",
        "",
        "tencentcloud",
        "Tencent Cloud: cuDNN TKE installs with `gpuCudaVersion`, e.g. `8.9.4`; must pair with "
        "that CUDA. Empty: none.",
    ),
    _k(
        "tkePodCidr",
        "string",
        "172.20.0.0/16",
        "tencentcloud",
        "Tencent Cloud: pod network of the TKE cluster (GlobalRouter), /12 to /24 in a private "
        "range, not overlapping `vpcCidr`.",
    ),
    _k(
        "tkeServiceCidr",
        "string",
        "172.21.0.0/20",
        "tencentcloud",
        "Tencent Cloud: Service network of the TKE cluster, /17 to /27 in a private range, not "
        "overlapping `vpcCidr` or `tkePodCidr`.",
    ),
    # Volcano Engine only (issue 27)
    _k(
        "vkeZones",
        "array",
        [],
        "volcengine",
        "Volcano Engine (required there): the zone of each private subnet, in order, e.g. "
        "`[cn-beijing-a, cn-beijing-b]`; as many as `availabilityZoneCount`, in zones that sell "
        "the GPU type. Pinned: a subnet's zone is never changed (it would be replaced).",
    ),
    _k(
        "vkePodCidr",
        "string",
        "172.20.0.0/16",
        "volcengine",
        "Volcano Engine: Flannel pod network of the VKE cluster, /8 to /24 in a private range, "
        "not overlapping `vpcCidr`. Fixed at creation (a change replaces the cluster).",
    ),
    _k(
        "vkeServiceCidr",
        "string",
        "172.21.0.0/20",
        "volcengine",
        "Volcano Engine: Service network of the VKE cluster, /12 to /24 in a private range, not "
        "overlapping `vpcCidr` or `vkePodCidr`. Fixed at creation.",
    ),
    # cost estimate (read only by `gpuinfra preview`; no resource depends on them)
    _k(
        "costGpuHoursPerMonth",
        "integer",
        100,
        "cost",
        "GPU hours a month the preview's cost estimate budgets above the GPU pools' minimum "
        "sizes (e.g. 100 on 1-GPU nodes = 100 node-hours), priced on the first GPU pool (where "
        "a training Job that names no pool runs), 0 to 1000000.",
    ),
    _k(
        "costStorageGb",
        "integer",
        500,
        "cost",
        "Data in the bucket, in GB, for the preview's cost estimate, 0 to 10000000.",
    ),
    _k(
        "costSpotFactor",
        "string",
        "",
        "cost",
        "Spot price as a fraction of on-demand for the cost estimate, e.g. `0.35` (above 0, "
        "at most 1). Empty: the catalog's per-cloud factor.",
    ),
    # GPU workstation (components/<cloud>/workstation.py), off by default
    _k(
        "workstationEnabled",
        "boolean",
        False,
        "workstation",
        "Add one GPU VM with JupyterLab and TensorBoard, reached through an SSH tunnel (SSH 22 "
        "from `adminCidrs` only; both servers listen on the VM's loopback).",
    ),
    _k(
        "workstationInstanceType",
        "string",
        "",
        "workstation",
        "GPU instance type of the workstation from the catalog, e.g. g5.xlarge. Empty: picked "
        "by `workstationGpuModel`, else a GPU pool's type (`workstationGpuPool`). AWS: a type "
        "the Deep Learning AMI supports (G4dn, G5, G6, Gr6, G6e, P4d, P4de, P5, P5e, P5en, "
        "P6-B200; not P3).",
    ),
    _k(
        "workstationGpuPool",
        "string",
        "",
        "workstation",
        "Name of a GPU pool (`gpuPools`) whose instance type the workstation takes, when "
        "neither `workstationInstanceType` nor `workstationGpuModel` is set. Empty: the first "
        "pool's.",
    ),
    _k(
        "workstationGpuModel",
        "string",
        "",
        "workstation",
        "GPU model to pick the cheapest fitting workstation type for, e.g. A10G.",
    ),
    _k(
        "workstationGpuCount",
        "integer",
        1,
        "workstation",
        "GPUs of the workstation when its type is picked by `workstationGpuModel`.",
    ),
    _k(
        "workstationCapacityType",
        "string",
        "onDemand",
        "workstation",
        "Allowed: onDemand, spot (cheaper; reclaimed with short notice and unsaved work is "
        "lost; Alibaba Cloud stops it and keeps its disk, AWS releases it and its disk: keep "
        "work in the bucket). Tencent Cloud: onDemand only (a spot CVM's data disk cannot be "
        "deleted with it).",
    ),
    _k(
        "workstationRootDiskGb",
        "integer",
        200,
        "workstation",
        "Encrypted disk of the workstation in GB, 50 to 16384 (Alibaba Cloud: 100 to 2048, "
        "the system disk holding the GPU image; Tencent Cloud: an encrypted data disk at /data "
        "next to a 50 GB system disk).",
    ),
    _k(
        "workstationSshPublicKey",
        "string",
        "",
        "workstation",
        "Required when the workstation is on: one OpenSSH public key line (ssh-ed25519, "
        "ssh-rsa or ecdsa-sha2-nistp*).",
    ),
    _k(
        "workstationSubnet",
        "string",
        "public",
        "workstation",
        "Allowed: public (a public IP, reachable from `adminCidrs`), private (no public IP; "
        "reach it through a VPN or bastion).",
    ),
    # GPU autoscaling: the autoscaler adds GPU nodes for pending pods and removes idle ones
    _k(
        "gpuPoolScaleDownDelayMinutes",
        "integer",
        10,
        "autoscaling",
        "Minutes a GPU node must be unneeded (and must have run since the last scale-up) before "
        "the autoscaler removes it, 1 to 1440 (Alibaba Cloud: 1 to 60).",
    ),
    _k(
        "maxGpus",
        "integer",
        0,
        "autoscaling",
        "Most GPUs the stack may hold, all GPU pools together: each pool's maximum becomes the "
        "whole nodes that fit (maxGpus / its GPUs per node), and the pools' maxima must add up "
        "to at most maxGpus, so no autoscaler adds more. At least one node's GPUs and at most "
        "what the pools' maxNodes hold. 0: what the pools' maxNodes hold.",
    ),
)

BY_NAME: dict[str, ConfigKey] = {key.name: key for key in KEYS}
