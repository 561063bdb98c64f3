"""`gpuinfra preview` end to end: plan, cost, policy, diff, and what gets printed or written.

Exit codes: 0 fine, 1 a mandatory policy finding, 2 invalid settings or project files, or a
resource the provider would refuse (`gpuinfra.provider_rules`); 2 wins when both happen
(e.g. with `--all`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_POLICY, EXIT_INVALID = 0, 1, 2


def _load_base(path: Path, stack: str) -> dict[str, Any] | None:
    """`--diff`: a plan file, or a folder of `<stack>.json` (with `--all`). None: no base."""
    file = path / f"{stack}.json" if path.is_dir() else path
    if not file.is_file():
        return None
    data = json.loads(file.read_text())
    if "stacks" in data:  # an `--all --json` document
        data = data["stacks"].get(stack)
    return data


def _write_out(out: Path, doc: dict[str, Any], markdown_text: str, manifests: list[dict]) -> None:
    from .manifests import file_name, manifest_yaml

    out.mkdir(parents=True, exist_ok=True)
    plan = {k: v for k, v in doc.items() if k not in ("cost", "policy", "diff")}
    (out / "plan.json").write_text(json.dumps(plan, indent=2, sort_keys=True) + "\n")
    (out / "cost.json").write_text(json.dumps(doc["cost"], indent=2, sort_keys=True) + "\n")
    (out / "policy.json").write_text(json.dumps(doc["policy"], indent=2, sort_keys=True) + "\n")
    if "diff" in doc:
        (out / "diff.json").write_text(json.dumps(doc["diff"], indent=2, sort_keys=True) + "\n")
    (out / "summary.md").write_text(markdown_text)
    folder = out / "manifests"
    folder.mkdir(exist_ok=True)
    for obj in manifests:
        (folder / file_name(obj)).write_text(manifest_yaml(obj))


def preview_one(args: argparse.Namespace, stack: str) -> tuple[int, str]:
    """Returns the exit code and what to print for one stack."""
    from components.settings import SettingsError

    from . import report
    from .cost import estimate
    from .diff import diff_plans
    from .manifests import manifests
    from .planview import from_json, from_plan
    from .policy_rules import evaluate, has_mandatory
    from .preemption import exposures
    from .preview import preview_stack
    from .project import ProjectError
    from .provider_rules import ProviderRulesError
    from .render import plan_json, tree

    plan = None
    if getattr(args, "plan", None):
        # A saved (or hand-edited) `--json` plan: check it without running the program.
        try:
            doc = json.loads(Path(args.plan).read_text())
        except (OSError, ValueError) as error:
            print(f"error: cannot read plan {args.plan}: {error}", file=sys.stderr)
            return EXIT_INVALID, ""
        doc = {k: v for k, v in doc.items() if k not in ("cost", "policy", "diff", "preemption")}
        view = from_json(doc)
    else:
        try:
            plan, cloud = preview_stack(Path(args.cwd), stack)
        except (ProjectError, SettingsError, ProviderRulesError) as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_INVALID, ""
        view = from_plan(plan, cloud)
        doc = plan_json(plan, cloud)
    costs = estimate(view)
    jobs = exposures(view, costs.assumptions)
    findings = evaluate(view)
    doc["cost"] = costs.to_json()
    doc["preemption"] = [j.to_json() for j in jobs]
    doc["policy"] = {
        "findings": [asdict(f) for f in findings],
        "mandatory": sum(f.level == "mandatory" for f in findings),
        "advisory": sum(f.level == "advisory" for f in findings),
    }
    d = None
    if args.diff:
        base = _load_base(Path(args.diff), stack)
        d = diff_plans(base or {"resources": []}, doc)
        doc["diff"] = d
    md = report.markdown(doc, costs, findings, d, jobs)
    if args.out:
        target = Path(args.out) / stack
        _write_out(target, doc, md, manifests(plan) if plan is not None else [])
    code = EXIT_POLICY if has_mandatory(findings) else EXIT_OK
    if args.json:
        return code, json.dumps(doc, indent=2, sort_keys=True)
    if args.format == "markdown":
        return code, md
    head = (
        tree(plan)
        if plan is not None
        else f"Plan file {args.plan}: {len(view.resources)} resources"
    )
    parts = [head, "", report.text_summary(costs, findings, jobs, doc.get("deployFrom"))]
    if d is not None:
        parts += ["", report.text_diff(d)]
    return code, "\n".join(parts)


def run(args: argparse.Namespace) -> int:
    from .project import ProjectError, load_project

    if args.all:
        try:
            stacks = load_project(Path(args.cwd)).stacks()
        except ProjectError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_INVALID
    else:
        stacks = [args.stack]
    codes: list[int] = []
    outputs: dict[str, str] = {}
    for stack in stacks:
        code, text = preview_one(args, stack)
        codes.append(code)
        outputs[stack] = text
    if args.json and args.all:
        docs = {s: json.loads(t) for s, t in outputs.items() if t}
        print(json.dumps({"stacks": docs}, indent=2, sort_keys=True))
    elif any(outputs.values()):
        print("\n\n".join(t for t in outputs.values() if t))
    return max(codes) if codes else EXIT_OK
