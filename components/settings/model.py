"""The validated settings the stacks and components are built from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from components.catalog import GpuInstanceType

from .gpu_layer import GpuLayerSettings

if TYPE_CHECKING:
    from .autoscaling import AutoscalingSettings
    from .clouds.aws import AwsSettings
    from .clouds.kubernetes import ExistingClusterSettings
    from .clouds.tencentcloud import TencentCloudSettings
    from .clouds.volcengine import VolcengineSettings
    from .workstation import WorkstationSettings

CapacityType = Literal["spot", "onDemand"]
NatGateways = Literal["single", "perAz"]
SpotStrategy = Literal["SpotAsPriceGo", "SpotWithPriceLimit", "NoSpot"]


@dataclass(frozen=True)
class PoolSize:
    min_nodes: int
    desired_nodes: int
    max_nodes: int


@dataclass(frozen=True)
class NetworkSettings:
    vpc_cidr: str
    availability_zone_count: int
    public_subnet_cidrs: tuple[str, ...]
    private_subnet_cidrs: tuple[str, ...]
    nat_gateways: NatGateways


@dataclass(frozen=True)
class AccessSettings:
    admin_cidrs: tuple[str, ...]
    allow_public_admin_access: bool
    api_endpoint_public: bool


@dataclass(frozen=True)
class ClusterSettings:
    kubernetes_version: str
    log_types: tuple[str, ...]
    log_retention_days: int
    deletion_protection: bool


@dataclass(frozen=True)
class SystemPoolSettings:
    instance_type: str
    size: PoolSize


@dataclass(frozen=True)
class GpuPoolSettings:
    """One GPU node pool (`gpuPools` entry, or the single pool of the `gpuPool*` keys)."""

    name: str
    """Unique in the stack; the node label `gpuinfra.io/pool` and taint value of its nodes,
    and what a training Job's `pool` names. The `gpuPool*` keys give one pool named `gpu`."""
    instance: GpuInstanceType
    capacity_type: CapacityType
    size: PoolSize
    disk_size_gb: int
    extra_instance_types: tuple[str, ...] = ()
    """More types with the same GPUs (model and count), where the cloud takes several."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra node labels, besides the ones gpuinfra sets (`gpuinfra.io/*`)."""
    spot_max_price: str | None = None
    """Most to pay per spot node hour (Alibaba: with `SpotWithPriceLimit`; Tencent: required
    for spot); None: none."""
    spot_strategy: SpotStrategy = "SpotAsPriceGo"
    """Alibaba Cloud's bidding; `NoSpot` for an on-demand pool."""
    on_demand_fallback: bool = True
    """Alibaba Cloud: pay-as-you-go nodes when spot stock runs out."""
    flat: bool = False
    """True: the one pool of the flat `gpuPool*` keys (no `gpuPools`), whose nodes keep the
    labels and taint single-pool stacks always gave them (see `gpu_pool_nodes`)."""

    @property
    def gpu_model(self) -> str:
        return self.instance.gpu_model

    @property
    def gpus_per_node(self) -> int:
        return self.instance.gpu_count

    @property
    def instance_types(self) -> tuple[str, ...]:
        return (self.instance.instance_type, *self.extra_instance_types)


@dataclass(frozen=True)
class StorageSettings:
    bucket_name: str | None
    """None: the provider generates a unique name from the resource name."""
    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int


@dataclass(frozen=True)
class IdentitySettings:
    namespace: str
    service_account: str


@dataclass(frozen=True)
class AlicloudSettings:
    """Alibaba Cloud only (`components/settings/clouds/alicloud.py` reads them)."""

    driver_version: str | None
    """None: the driver ACK installs by default for the cluster version."""
    pod_cidr: str
    service_cidr: str
    ack_version: str
    """The full ACK version the cluster runs, e.g. `1.33.3-aliyun.1`: pinned in config or in
    `ACK_VERSIONS`, never looked up, so a new ACK patch never upgrades a cluster by itself."""


@dataclass(frozen=True)
class Settings:
    stack: str
    cloud: str
    region: str
    name_prefix: str
    cluster: ClusterSettings
    network: NetworkSettings
    access: AccessSettings
    system_pool: SystemPoolSettings
    gpu_pools: tuple[GpuPoolSettings, ...]
    """Empty only for `cloud: kubernetes` (an existing cluster has no pool we manage)."""
    storage: StorageSettings
    identity: IdentitySettings
    gpu_layer: GpuLayerSettings
    aws: AwsSettings | None = None
    """Set only when `cloud` is aws."""
    alicloud: AlicloudSettings | None = None
    """Set only when `cloud` is alicloud."""
    tencentcloud: TencentCloudSettings | None = None
    """Set only when `cloud` is tencentcloud."""
    volcengine: VolcengineSettings | None = None
    """Set only when `cloud` is volcengine."""
    existing_cluster: ExistingClusterSettings | None = None
    """Set only when `cloud` is kubernetes (bring your own cluster)."""
    workstation: WorkstationSettings | None = None
    """Set only when `workstationEnabled` is true (a cloud stack's GPU workstation)."""
    autoscaling: AutoscalingSettings | None = None
    """GPU autoscaling of a cloud stack; None for `cloud: kubernetes` (the owner's business)."""

    def require_gpu_pools(self) -> tuple[GpuPoolSettings, ...]:
        """The GPU pools of a cloud stack (validation guarantees at least one for every cloud
        but `kubernetes`)."""
        if not self.gpu_pools:
            raise ValueError(f"cloud {self.cloud} has no GPU pool to build")
        return self.gpu_pools

    def require_autoscaling(self) -> AutoscalingSettings:
        """The GPU autoscaling of a cloud stack (set whenever there is a GPU pool)."""
        if self.autoscaling is None:
            raise ValueError(f"cloud {self.cloud} has no GPU pool to autoscale")
        return self.autoscaling
