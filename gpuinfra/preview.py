"""Offline preview: run the project's program under the mock engine and record the plan."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Mapping
from pathlib import Path

from .engine import Plan, StackOutputs, run_program
from .project import Project, ProjectError, load_project, load_stack_config

CLUSTER_STACK_KEY = "clusterStack"
"""The setting by which a GPU-layer stack names its cluster stack (a StackReference)."""


def cluster_stack_name(project: Project, config: Mapping[str, str]) -> str | None:
    """The stack this stack's config references (`<org>/<project>/<stack>`), if any."""
    value = (config.get(f"{project.name}:{CLUSTER_STACK_KEY}") or "").strip()
    return value or None


def referenced_stacks(
    root: Path, config: Mapping[str, str], seen: tuple[str, ...] = ()
) -> dict[str, StackOutputs]:
    """The outputs of the stack `config` references, from that stack's own offline preview:
    how the offline engine answers `pulumi.StackReference` with no backend."""
    project = load_project(root)
    name = cluster_stack_name(project, config)
    if name is None:
        return {}
    parts = name.split("/")
    if len(parts) != 3 or parts[1] != project.name:
        raise ProjectError(
            f"gpuinfra:{CLUSTER_STACK_KEY} = {name!r}: the offline preview follows only stacks of "
            f"this project, named <org>/{project.name}/<stack> (its Pulumi.<stack>.yaml here)"
        )
    stack = parts[2]
    if stack in seen:
        raise ProjectError(f"stacks reference each other in a loop: {' -> '.join(seen)} -> {stack}")
    plan, _ = preview_stack(root, stack, seen=(*seen, stack))
    return {name: StackOutputs(outputs=plan.outputs, secret=frozenset(plan.secret_outputs))}


def preview_stack(root: Path, stack: str, seen: tuple[str, ...] = ()) -> tuple[Plan, str]:
    """Returns the plan and the stack's cloud. Raises `ProjectError` or `SettingsError`."""
    project = load_project(root)
    config = load_stack_config(project, stack)
    references = referenced_stacks(root, config.values, seen or (stack,))
    main = root / "__main__.py"
    root_text = str(root.resolve())
    if root_text not in sys.path:
        sys.path.insert(0, root_text)  # as `pulumi` runs it: the project's own packages first

    def program() -> None:
        runpy.run_path(str(main), run_name="__main__")

    plan = run_program(
        program,
        project=project.name,
        stack=stack,
        config=config.values,
        secret_keys=config.secret_keys,
        stack_references=references,
    )
    cloud = str(plan.outputs.get("cloud") or config.values.get(f"{project.name}:cloud") or "aws")
    return plan, cloud
