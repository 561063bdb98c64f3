"""`gpuinfra reachability`: from where a stack's `pulumi up` must run, and whether an address
qualifies (the workflows' preflight, with the runner's address).

Read from the stack's settings (and, for a GPU-layer stack, its cluster stack's), so it
needs no credentials and no preview; `components.deploy_from` writes the same sentence the
stack exports as `deployFrom`.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Callable
from pathlib import Path

from components.cluster_handle import ApiAccess
from components.deploy_from import DeployFrom, api_access, deploy_from
from components.settings import Settings, parse_settings
from components.settings.clouds import RULES
from components.settings.schema import NAMESPACE

from .cli_errors import UserError
from .preview import cluster_stack_name
from .project import ProjectError, load_project, load_stack_config

EXIT_OK, EXIT_REFUSED = 0, 2


def stack_settings(root: Path, stack: str) -> Settings:
    """A stack's settings as its program would read them (no engine)."""
    project = load_project(root)
    values = load_stack_config(project, stack).values
    prefix = f"{NAMESPACE}:"
    raw = {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}
    region_keys = {rules.region_key for rules in RULES.values()}
    provider = {k: v for k, v in values.items() if k in region_keys}
    return parse_settings(raw, stack=stack, provider_config=provider)


def cluster_stack_settings(
    root: Path, stack: str, settings: Settings, refuse: Callable[[str, str], Exception]
) -> Settings | None:
    """The settings of the cluster stack that `stack` (with `settings`), a GPU-layer stack,
    deploys onto; None for any other stack. Only a stack of this project can be read offline:
    for another `clusterStack`, raises `refuse(name, project)`."""
    existing = settings.existing_cluster
    if existing is None or existing.cluster_stack is None:
        return None
    project = load_project(root)
    name = cluster_stack_name(project, load_stack_config(project, stack).values) or ""
    parts = name.split("/")
    if len(parts) != 3 or parts[1] != project.name:
        raise refuse(name, project.name)
    return stack_settings(root, parts[2])


def stack_deploy_from(root: Path, stack: str) -> DeployFrom:
    settings = stack_settings(root, stack)

    def refuse(name: str, project: str) -> Exception:
        return ProjectError(
            f"{NAMESPACE}:clusterStack = {name!r}: only stacks of this project "
            f"(<org>/{project}/<stack>) can be read offline"
        )

    cluster = cluster_stack_settings(root, stack, settings, refuse)
    access: ApiAccess | None = api_access(cluster) if cluster is not None else None
    return deploy_from(settings, access)


def run(args: argparse.Namespace) -> int:
    """Invalid settings or project files raise (the CLI prints them as one line, exit 2)."""
    if args.from_ip is not None:
        try:
            ipaddress.ip_address(args.from_ip)
        except ValueError:
            raise UserError(
                "--from-ip", args.from_ip, "is not an IP address", "an address such as 203.0.113.7"
            ) from None
    where = stack_deploy_from(Path(args.cwd), args.stack)
    if not args.from_ip:
        print(f"{args.stack}: deploy from {where.sentence}")
        return EXIT_OK
    ok, why = where.admits(args.from_ip)
    if ok:
        print(f"{args.stack}: {args.from_ip} may run `pulumi up`: {why}")
        return EXIT_OK
    print(
        f"{args.stack}: {args.from_ip} cannot reach the cluster's API endpoint: {why}",
        file=sys.stderr,
    )
    return EXIT_REFUSED
