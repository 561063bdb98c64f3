"""Provider rules for the kubernetes resources the stacks create (see model.py).

pulumi-kubernetes does more than send objects to the API server: after a create or update
it *awaits* some kinds until they are ready, and fails the update when they are not within
the timeout (10 minutes by default). The stacks depend on three of those behaviours.

Sources: pulumi/pulumi-kubernetes at v4.32.0 (the newest tag in the snapshot read; the
installed SDK is 4.34.2, whose tag the snapshot lacks), unchanged in `provider/pkg/await/`
and `provider/pkg/metadata/` through main at 9497796 (2026-07-01).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .model import Problem, RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource

PK = "pulumi/pulumi-kubernetes@v4.32.0"
JOB = "kubernetes:batch/v1:Job"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SKIP_AWAIT = "pulumi.com/skipAwait"

NODE_POOLS: Mapping[str, tuple[str, ...]] = {
    # type -> input paths holding the pool's fewest nodes (the first one present counts)
    "aws:eks/nodeGroup:NodeGroup": ("scalingConfig.minSize",),
    "alicloud:cs/nodePool:NodePool": ("scalingConfig.minSize", "desiredSize"),
    "tencentcloud:Kubernetes/nodePool:NodePool": ("minSize",),
}
"""Managed node pools of the clouds the stacks build, and where their minimum size is."""

CHART_CRD_GROUPS: Mapping[str, frozenset[str]] = {
    # charts/kube-prometheus-stack/charts/crds (prometheus-community/helm-charts): the
    # Prometheus Operator's CRDs, ServiceMonitor among them; Helm installs a chart's CRDs
    # before its other objects.
    "kube-prometheus-stack": frozenset({"monitoring.coreos.com"}),
}
"""Charts the GPU layer installs that bring CRDs, by chart name -> API groups."""


def skips_await(resource: RecordedResource) -> bool:
    """True when the object carries `pulumi.com/skipAwait: "true"` (metadata/overrides.go:40
    SkipAwaitLogic: the annotation's value must be "true")."""
    value = get(resource.inputs, "metadata.annotations") or {}
    return isinstance(value, Mapping) and str(value.get(SKIP_AWAIT, "")).lower() == "true"


@provider_rule(
    JOB,
    source=f"{PK} provider/pkg/await/awaiters.go:195 (batch/v1/Job awaited), "
    "provider/pkg/await/job.go:47-52,79 (ready only when Complete; 10 minutes), "
    "provider/pkg/await/await.go:1100 and provider/pkg/metadata/overrides.go:40,108 "
    "(pulumi.com/skipAwait turns it off)",
)
def job_needs_skip_await(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """pulumi-kubernetes waits for a batch/v1 Job to complete (10 minutes by default) and
    fails the update otherwise, unless the Job is annotated `pulumi.com/skipAwait: "true"`."""
    if not skips_await(resource):
        name = get(resource.inputs, "metadata.name")
        yield (
            f"metadata.annotations.{SKIP_AWAIT}",
            f'set "true" on Job {name!r}: a training Job runs for hours, and `pulumi up` would '
            "wait for it to complete and fail after 10 minutes",
        )


def _min_nodes(pool: RecordedResource) -> int | None:
    for path in NODE_POOLS[pool.type]:
        value = get(pool.inputs, path)
        if value is not None:
            try:
                return int(value)
            except (TypeError, ValueError):
                return None
    return None


def _provider_urn(resource: RecordedResource) -> str | None:
    """The URN of the explicit provider a resource uses (the engine's `urn::id` reference)."""
    return resource.provider.rsplit("::", 1)[0] if resource.provider else None


def waits_for(ctx: RuleContext, resource: RecordedResource, other: RecordedResource) -> bool:
    """True when `resource` is created after `other`: through its own dependencies, its
    ancestors' or its provider's (a resource waits for its provider, which waits for its
    dependencies)."""
    if ctx.depends_on(resource, other):
        return True
    seen: set[str] = set()
    current: RecordedResource | None = resource
    while current is not None and current.urn not in seen:
        seen.add(current.urn)
        urn = _provider_urn(current)
        provider = ctx.by_urn(urn) if urn else None
        if provider is not None and ctx.depends_on(provider, other):
            return True
        current = ctx.by_urn(current.parent) if current.parent else None
    return False


@provider_rule(
    DEPLOYMENT,
    source=f"{PK} provider/pkg/await/awaiters.go:188 (apps/v1/Deployment awaited), "
    "provider/pkg/await/deployment.go:59-75,105 (ready when the new ReplicaSet is Available; "
    "10 minutes)",
)
def deployment_waits_for_nodes(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """pulumi-kubernetes waits for a Deployment's pods to be available (10 minutes) and fails
    the update otherwise; in an update that also creates the cluster's node pools, that wait
    must start after a pool with nodes exists, or it races the nodes' creation."""
    if skips_await(resource):
        return
    pools = [r for r in ctx.resources if r.type in NODE_POOLS]
    if not pools:
        return  # the cluster's nodes exist already (an existing cluster, a separate stack)
    with_nodes = [p for p in pools if (_min_nodes(p) or 0) >= 1]
    if not any(waits_for(ctx, resource, pool) for pool in with_nodes):
        name = get(resource.inputs, "metadata.name")
        names = ", ".join(p.name for p in with_nodes) or "none with at least one node"
        yield (
            "dependsOn",
            f"Deployment {name!r} is awaited until its pods are ready, but nothing makes it "
            f"wait for a node pool that has nodes ({names}): depend on one (the ClusterHandle's "
            "`nodes`), or its pods stay Pending while the wait runs out",
        )


def _api_group(resource: RecordedResource) -> str:
    api_version = str(resource.inputs.get("apiVersion") or "")
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _crd_installers(ctx: RuleContext, group: str, kind: str) -> list[RecordedResource]:
    found = []
    for crd in ctx.of_type(CRD):
        spec: Any = crd.inputs.get("spec") or {}
        if spec.get("group") == group and get(spec, "names.kind") == kind:
            found.append(crd)
    for release in ctx.of_type(HELM_RELEASE):
        if group in CHART_CRD_GROUPS.get(str(release.inputs.get("chart") or ""), frozenset()):
            found.append(release)
    return found


KUEUE_KINDS = (
    # Kueue's custom resources the GPU layer creates (issue 19), at its CRDs' storage version.
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
    "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig",
)


@provider_rule(
    "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
    "kubernetes:monitoring.coreos.com/v1:PrometheusRule",
    *KUEUE_KINDS,
    source=f"{PK} provider/pkg/await/await.go:156-161,267-274 (create retried 5 times with "
    'backoff on a "no match" error, then fails), provider/pkg/provider/provider.go:1821-1833 '
    '("Verify that any required CRDs have been created")',
)
def custom_resource_after_its_crd(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """pulumi-kubernetes fails to create a custom resource whose CRD the API server does not
    know yet (after a few quick retries): where the same update installs the CRD (a
    CustomResourceDefinition, or a chart that ships it), the custom resource must wait for
    it."""
    group = _api_group(resource)
    kind = str(resource.inputs.get("kind") or "")
    installers = _crd_installers(ctx, group, kind)
    if installers and not any(waits_for(ctx, resource, other) for other in installers):
        names = ", ".join(r.name for r in installers)
        yield (
            "dependsOn",
            f"{kind} needs its CRD ({group}), which {names} installs in this same update: "
            'depend on it, or the create fails with "no matches for kind"',
        )


PVC = "kubernetes:core/v1:PersistentVolumeClaim"
PV = "kubernetes:core/v1:PersistentVolume"
_QUANTITY_FACTOR = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}


def _bytes(quantity: object) -> float | None:
    text = str(quantity or "")
    for suffix in ("Ki", "Mi", "Gi", "Ti", "Pi", ""):
        number = text[: -len(suffix)] if suffix else text
        if (not suffix or text.endswith(suffix)) and number.replace(".", "", 1).isdigit():
            return float(number) * _QUANTITY_FACTOR[suffix]
    return None


@provider_rule(
    PVC,
    source=f"{PK} provider/pkg/await/awaiters.go:201-202,288-322 (a PersistentVolumeClaim is "
    "awaited until Bound, or Pending under WaitForFirstConsumer; 5 minutes); "
    "https://kubernetes.io/docs/concepts/storage/persistent-volumes/ (Reserving a "
    "PersistentVolume; Class: a claim without storageClassName gets the default class, one with "
    '"" binds only to volumes without a class; a claim binds to a volume of its access modes '
    "and at least its size)",
)
def claim_binds_to_its_volume(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """pulumi-kubernetes waits until a PersistentVolumeClaim is Bound and fails the update
    after 5 minutes; a claim naming a static volume (`volumeName`) binds only when it spells
    its class the same ("" for none), asks for access modes and a size the volume has, and the
    volume is free or reserved for it."""
    if skips_await(resource):
        return
    spec: Any = resource.inputs.get("spec") or {}
    volume_name = spec.get("volumeName")
    if not volume_name:
        return
    claim = get(resource.inputs, "metadata.name")
    if "storageClassName" not in spec:
        yield (
            "spec.storageClassName",
            f'set "" on claim {claim!r}: left out, the cluster\'s default StorageClass is filled '
            f"in and the claim never binds to the class-less volume {volume_name!r}",
        )
    volumes = [v for v in ctx.of_type(PV) if get(v.inputs, "metadata.name") == volume_name]
    if not volumes:
        return
    volume: Any = volumes[0].inputs.get("spec") or {}
    if "storageClassName" in spec and spec.get("storageClassName") != volume.get(
        "storageClassName", ""
    ):
        yield (
            "spec.storageClassName",
            f"{spec.get('storageClassName')!r} but volume {volume_name!r} has "
            f"{volume.get('storageClassName', '')!r}: they never bind",
        )
    missing = set(spec.get("accessModes") or []) - set(volume.get("accessModes") or [])
    if missing:
        yield (
            "spec.accessModes",
            f"{sorted(missing)} not offered by volume {volume_name!r} "
            f"({volume.get('accessModes')}): they never bind",
        )
    wanted = _bytes(get(spec, "resources.requests.storage"))
    holds = _bytes(get(volume, "capacity.storage"))
    if wanted is not None and holds is not None and wanted > holds:
        yield (
            "spec.resources.requests.storage",
            f"asks for more than volume {volume_name!r} holds: they never bind",
        )
    ref = volume.get("claimRef") or {}
    namespace = get(resource.inputs, "metadata.namespace")
    if ref and (ref.get("name"), ref.get("namespace")) != (claim, namespace):
        yield (
            "spec.volumeName",
            f"volume {volume_name!r} is reserved for claim {ref.get('namespace')}/"
            f"{ref.get('name')}, not {namespace}/{claim}",
        )
