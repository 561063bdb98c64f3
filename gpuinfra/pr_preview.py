"""`gpuinfra preview` end to end: plan, cost, policy, diff, and what gets printed or written.

Exit codes (`cli_errors`): 0 fine, 1 a mandatory policy finding, 2 a mistake to fix (an
argument or file, invalid settings, or a resource the provider would refuse:
`gpuinfra.provider_rules`); 2 wins when both happen (e.g. with `--all`). Files named by an
argument (`--plan`, `--diff`, `--out`) are checked before any program runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .cli_errors import EXIT_FINDING as EXIT_POLICY
from .cli_errors import (
    EXIT_INVALID,
    EXIT_OK,
    UserError,
    file_access,
    input_file,
    is_user_error,
    output_folder,
    read_json,
)
from .cli_errors import report as report_error

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_POLICY", "plan_problem", "preview_one", "run"]

PLAN_EXPECTED = "a plan written by `gpuinfra preview --json` (a JSON object with `resources`)"
BASE_EXPECTED = (
    "an earlier `gpuinfra preview --json` plan: a file, an `--all --json` file or a folder "
    "of <stack>.json"
)
BASE_MISSING = f"{BASE_EXPECTED}; or --diff-missing new for no base (everything is new)"


def plan_problem(doc: Any) -> str | None:
    """What keeps `doc` from being a `--json` plan the analyses can read, or None. Checks the
    shape they rely on; the inputs themselves are free-form."""
    if not isinstance(doc, dict):
        return f"holds a JSON {type(doc).__name__}, not an object"
    resources = doc.get("resources")
    if not isinstance(resources, list):
        return "has no `resources` list"
    for i, r in enumerate(resources):
        if not isinstance(r, dict):
            return f"resources[{i}] is not an object"
        for key in ("urn", "type", "name"):
            if not isinstance(r.get(key), str):
                return f"resources[{i}].{key} is missing or not text"
        if not isinstance(r.get("inputs") or {}, dict):
            return f"resources[{i}].inputs is not an object"
        if not isinstance(r.get("protect", False), bool):
            return f"resources[{i}].protect is not true or false"
        for key in ("id", "parent"):
            if not isinstance(r.get(key) or "", str):
                return f"resources[{i}].{key} is not text"
    config = doc.get("config") or {}
    if not isinstance(config, dict) or not all(isinstance(v, str) for v in config.values()):
        return "`config` is not an object of text values"
    for key in ("project", "stack", "cloud"):
        if not isinstance(doc.get(key) or "", str):
            return f"`{key}` is not text"
    cost = doc.get("cost")
    if cost is not None:
        totals = cost.get("totals") if isinstance(cost, dict) else None
        if not isinstance(totals, dict) or not all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
            for v in totals.values()
        ):
            return "`cost.totals` is not an object of numbers"
    return None


@contextmanager
def _reading(argument: str, value: str, expected: str) -> Iterator[None]:
    """Analyses of a plan from a file: data the user may have edited by hand, so where it
    breaks them (an input of an unexpected type) that is the file's fault, named as such."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as error:
        problem = f"cannot be analysed ({type(error).__name__}: {error})"
        raise UserError(argument, value, problem, expected) from error


def _load_plan(value: str) -> dict[str, Any]:
    """`--plan`: a saved (or hand-edited) `--json` plan."""
    data = read_json("--plan", value, input_file("--plan", value, PLAN_EXPECTED), PLAN_EXPECTED)
    problem = plan_problem(data)
    if problem:
        raise UserError("--plan", value, problem, PLAN_EXPECTED)
    return {
        k: v for k, v in data.items() if k not in ("cost", "policy", "diff", "preemption", "queue")
    }


def _load_base(value: str, stack: str, missing: str) -> dict[str, Any]:
    """`--diff`: a plan file, an `--all --json` document, or a folder of `<stack>.json`.
    A missing plan is an error unless `--diff-missing new` says "no base: all is new"."""
    path = Path(value)
    file = path / f"{stack}.json" if path.is_dir() else path
    absent: str | None = None  # why there is no plan for the stack, when there is none
    data: Any = None
    if not file.exists():
        absent = f"no {stack}.json in that folder" if path.is_dir() else "no such file or folder"
    elif not file.is_file():
        raise UserError("--diff", value, f"{file} is not a file", BASE_EXPECTED)
    else:
        data = read_json("--diff", value, file, BASE_EXPECTED)
        if isinstance(data, dict) and "stacks" in data:  # an `--all --json` document
            if not isinstance(data["stacks"], dict):
                raise UserError("--diff", value, "`stacks` is not an object", BASE_EXPECTED)
            if stack not in data["stacks"]:
                absent = f"its `stacks` has no '{stack}'"
            data = data["stacks"].get(stack)
    if absent is not None:
        if missing != "new":
            why = f"no base plan for stack '{stack}': {absent}"
            raise UserError("--diff", value, why, BASE_MISSING)
        print(
            f"note: --diff {value!r} has no plan for stack '{stack}' ({absent}): every resource "
            "shows as added (--diff-missing new)",
            file=sys.stderr,
        )
        return {"resources": []}
    problem = plan_problem(data)
    if problem:
        where = value if file == path else f"{value} ({file.name})"
        raise UserError("--diff", where, problem, BASE_EXPECTED)
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


def preview_one(
    args: argparse.Namespace,
    stack: str,
    *,
    base: dict[str, Any] | None = None,
    saved: dict[str, Any] | None = None,
) -> tuple[int, str]:
    """Returns the exit code and what to print for one stack. `base`: the `--diff` plan;
    `saved`: the `--plan` document (both loaded and checked by `run`)."""
    from . import report
    from .alerts import alerts_note, stack_alerts
    from .cost import estimate
    from .diff import diff_plans
    from .manifests import manifests
    from .planview import from_json, from_plan
    from .policy_rules import evaluate, has_mandatory
    from .preemption import exposures
    from .preview import preview_stack
    from .queue import queue_report
    from .render import plan_json, tree

    plan = None
    if saved is not None:
        # A saved (or hand-edited) `--json` plan: check it without running the program.
        doc = dict(saved)
        reading = _reading("--plan", args.plan, PLAN_EXPECTED)
    else:
        try:
            plan, cloud = preview_stack(Path(args.cwd), stack)
        except Exception as error:  # one stack's mistake must not hide the others' (--all)
            if not is_user_error(error):
                raise
            return report_error(error), ""
        doc = plan_json(plan, cloud)
        reading = _trusted()
    with reading:
        view = from_json(doc) if plan is None else from_plan(plan, cloud)
        costs = estimate(view)
        jobs = exposures(view, costs.assumptions)
        queue = queue_report(view)
        doc["queue"] = queue.to_json() if queue is not None else None
        alerts = stack_alerts(view)
        no_alerts = alerts_note(view, alerts)
        findings = evaluate(view)
        doc["cost"] = costs.to_json()
        doc["preemption"] = [j.to_json() for j in jobs]
        doc["alerts"] = [a.to_json() for a in alerts]
        doc["policy"] = {
            "findings": [asdict(f) for f in findings],
            "mandatory": sum(f.level == "mandatory" for f in findings),
            "advisory": sum(f.level == "advisory" for f in findings),
        }
        d = None
        if base is not None:
            with _reading("--diff", args.diff, BASE_EXPECTED):
                d = diff_plans(base, doc)
            doc["diff"] = d
        md = report.markdown(doc, costs, findings, d, jobs, alerts, no_alerts, queue)
    if args.out:
        target = Path(args.out) / stack
        with file_access("--out", args.out, "a folder to write the reports into"):
            _write_out(target, doc, md, manifests(plan) if plan is not None else [])
    # A change Pulumi refuses (replacing or deleting a protected resource) fails like a
    # mandatory finding: `pulumi up` would stop there after the PR merged.
    blocked = bool(d and d.get("blocked"))
    code = EXIT_POLICY if has_mandatory(findings) or blocked else EXIT_OK
    if args.json:
        return code, json.dumps(doc, indent=2, sort_keys=True)
    if args.format == "markdown":
        return code, md
    head = (
        tree(plan)
        if plan is not None
        else f"Plan file {args.plan}: {len(view.resources)} resources"
    )
    summary = report.text_summary(
        costs, findings, jobs, doc.get("deployFrom"), alerts, no_alerts, queue
    )
    parts = [head, "", summary]
    if d is not None:
        parts += ["", report.text_diff(d)]
    return code, "\n".join(parts)


@contextmanager
def _trusted() -> Iterator[None]:
    """The program's own plan: an error analysing it is a bug, and keeps its traceback."""
    yield


def run(args: argparse.Namespace) -> int:
    from .project import load_project

    # Every argument that names a file is checked before any program runs.
    if args.plan and args.all:
        raise UserError(
            "--plan", args.plan, "cannot be combined with --all", "one saved plan, or --all"
        )
    if args.diff_missing and not args.diff:
        raise UserError(
            "--diff-missing", args.diff_missing, "only applies with --diff", "--diff BASE with it"
        )
    if args.out:
        output_folder("--out", args.out)
    saved = _load_plan(args.plan) if args.plan else None
    stacks = load_project(Path(args.cwd)).stacks() if args.all else [args.stack]
    bases = (
        {s: _load_base(args.diff, s, args.diff_missing or "error") for s in stacks}
        if args.diff
        else {}
    )
    codes: list[int] = []
    outputs: dict[str, str] = {}
    for stack in stacks:
        code, text = preview_one(args, stack, base=bases.get(stack), saved=saved)
        codes.append(code)
        outputs[stack] = text
    if args.json and args.all:
        docs = {s: json.loads(t) for s, t in outputs.items() if t}
        print(json.dumps({"stacks": docs}, indent=2, sort_keys=True))
    elif any(outputs.values()):
        text = "\n\n".join(t for t in outputs.values() if t)
        if args.format == "markdown":
            from .report import fit_comment

            text = fit_comment(text)  # a PR comment: under GitHub's limit, saying what it cut
        print(text)
    return max(codes) if codes else EXIT_OK
