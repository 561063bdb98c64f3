"""Offline preview: run the project's program under the mock engine and record the plan."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from .engine import Plan, run_program
from .project import load_project, load_stack_config


def preview_stack(root: Path, stack: str) -> tuple[Plan, str]:
    """Returns the plan and the stack's cloud. Raises `ProjectError` or `SettingsError`."""
    project = load_project(root)
    config = load_stack_config(project, stack)
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
    )
    cloud = str(plan.outputs.get("cloud") or config.values.get(f"{project.name}:cloud") or "aws")
    return plan, cloud
