"""The CrossGuard pack's config for one stack: the explicit opt-ins its config makes.

A policy pack sees resources, never the stack's config, so a stack that accepts a finding on
purpose (e.g. `allowPublicAdminAccess: true`) would still fail `pulumi preview --policy-pack`.
This writes the file `--policy-pack-config` (pulumi/actions: `policyPackConfigs`) takes:
`{"<policy>": {"<key>": value}}` for each opt-in rule the stack sets, and for its advisory
`<policy>-accepted` twin, since CrossGuard hands each policy only its own entry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cli_errors import file_access
from .policy_rules import RULES
from .project import load_project, load_stack_config


def pack_config(stack_values: dict[str, str]) -> dict[str, dict[str, bool | str]]:
    """Entries for the opt-ins set in `stack_values` (qualified key -> engine text)."""
    config: dict[str, dict[str, bool | str]] = {}
    for rule in RULES:
        if not rule.opt_in or f"gpuinfra:{rule.opt_in}" not in stack_values:
            continue
        text = stack_values[f"gpuinfra:{rule.opt_in}"].strip().lower()
        # The pack types these keys boolean (policy/__main__.py); other values pass as text.
        value: bool | str = text == "true" if text in ("true", "false") else text
        config[rule.id] = {rule.opt_in: value}
        if rule.level == "mandatory":
            config[f"{rule.id}-accepted"] = {rule.opt_in: value}
    return config


def run(cwd: Path, stack: str, out: Path | None) -> int:
    """Project and file errors propagate: the CLI (`cli_errors.guarded`) reports them."""
    values = load_stack_config(load_project(cwd), stack).values
    text = json.dumps(pack_config(values), indent=2, sort_keys=True) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        with file_access("--out", str(out), "a file path to write"):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
        print(f"wrote {out}", file=sys.stderr)
    return 0
