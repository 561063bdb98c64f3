"""Kubernetes manifests from a recorded plan: what `kubectl apply` would receive.

Under the mock engine a `pulumi_kubernetes` resource's inputs are already its manifest
(apiVersion, kind, metadata, spec, ...), so rendering is a matter of selecting them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from .engine import Plan, RecordedResource

_NOT_OBJECTS = ("pulumi:providers:", "kubernetes:helm.sh/", "kubernetes:yaml")


def is_kubernetes_object(resource: RecordedResource) -> bool:
    return (
        resource.custom
        and resource.type.startswith("kubernetes:")
        and not resource.type.startswith(_NOT_OBJECTS)
    )


def manifests(plan: Plan) -> list[dict[str, Any]]:
    """Every Kubernetes object in the plan, in a stable order (namespaces first)."""
    objects = [copy.deepcopy(r.inputs) for r in plan.resources if is_kubernetes_object(r)]

    def order(obj: dict[str, Any]) -> tuple[int, str, str, str]:
        meta = obj.get("metadata") or {}
        kind = str(obj.get("kind", ""))
        return (
            0 if kind == "Namespace" else 1,
            kind,
            meta.get("namespace", ""),
            meta.get("name", ""),
        )

    return sorted(objects, key=order)


def file_name(obj: dict[str, Any]) -> str:
    """`<namespace>-<kind>-<name>.yaml` (no namespace for cluster-scoped objects)."""
    meta = obj.get("metadata") or {}
    parts = [meta.get("namespace"), str(obj.get("kind", "object")).lower(), meta.get("name")]
    return "-".join(p for p in parts if p) + ".yaml"


def manifest_yaml(obj: dict[str, Any]) -> str:
    """Keys sorted: the engine does not keep input order, and rendered files must not drift."""
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, width=100)


def kustomize_files(plan: Plan) -> dict[str, str]:
    """File name -> text: one file per object plus a `kustomization.yaml` listing them."""
    files = {file_name(obj): manifest_yaml(obj) for obj in manifests(plan)}
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(files),
    }
    header = (
        f"# Rendered by `gpuinfra render --stack {plan.stack}` from components/kubernetes/.\n"
        "# Do not edit: change the stack's config or the components and render again.\n"
    )
    files["kustomization.yaml"] = header + yaml.safe_dump(kustomization, sort_keys=False)
    return files


def write_or_check(plan: Plan, out: Path, *, check: bool) -> list[str]:
    """Write the files into `out` (removing stale ones), or list what differs when `check`."""
    wanted = kustomize_files(plan)
    present = {p.name for p in out.glob("*.yaml")} if out.is_dir() else set()
    differs = sorted(
        name
        for name in set(wanted) | present
        if name not in wanted or name not in present or (out / name).read_text() != wanted[name]
    )
    if check:
        return differs
    out.mkdir(parents=True, exist_ok=True)
    for name in present - set(wanted):
        (out / name).unlink()
    for name, text in wanted.items():
        (out / name).write_text(text)
    return differs
