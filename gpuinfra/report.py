"""Cost, preemption exposure, findings and diff as text: a terminal table, or Markdown for a
PR comment."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .cost import CostReport
from .policy_rules import Finding
from .preemption import JobExposure
from .render import display_type


def usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    size = abs(value)
    return (
        f"${value:,.2f}"
        if size >= 1 or size == 0
        else f"${value:.3f}"
        if size >= 0.01
        else f"${value:.4f}"
    )


def signed(value: float) -> str:
    return ("+" if value > 0 else "-" if value < 0 else "±") + usd(abs(value))


def _price_note(report: CostReport) -> str:
    dates = sorted({line.price_date for line in report.lines})
    a = report.assumptions
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "n/a"
    unknown = (
        f"; {report.unknown} item(s) unknown, left out of the totals" if report.unknown else ""
    )
    return (
        f"Estimate, USD, list prices dated {span}; monthly = 730 h, GPU pool at min size plus "
        f"{a.gpu_hours_per_month} GPU hours; storage at {a.storage_gb} GB; spot factor "
        f"{a.spot_factor if a.spot_factor is not None else 'unknown'}{unknown}."
    )


def _cost_rows(report: CostReport) -> list[list[str]]:
    rows = [
        [
            line.resource,
            line.what,
            usd(line.hourly_desired),
            usd(line.hourly_max),
            usd(line.hourly_idle),
            usd(line.monthly),
        ]
        for line in report.lines
    ]
    t = report.totals
    rows.append(
        [
            "total",
            "",
            usd(t.get("hourly_desired")),
            usd(t.get("hourly_max")),
            usd(t.get("hourly_idle")),
            usd(t.get("monthly")),
        ]
    )
    return rows


_COST_HEADER = ["resource", "what", "$/h desired", "$/h max", "$/h idle", "$/month"]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines)


_PREEMPTION_HEADER = (
    "training Job",
    "GPUs",
    "checkpoint every",
    "hard kill: GPU-h redone, worst (mean)",
    "hard kill: $ worst",
    "on a spot reclaim",
)
PREEMPTION_NOTE = (
    "Work redone after one spot preemption. Hard kill: the node vanishes without a drain, "
    "and the Job redoes everything since its last periodic checkpoint. Drained: the pod gets "
    "SIGTERM, the trainer writes an emergency checkpoint and loses only the step in flight, "
    "if that checkpoint fits in the grace period. The time a replacement node takes is not "
    "counted."
)


def _hours(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}"


def _preemption_rows(jobs: Sequence[JobExposure]) -> list[list[str]]:
    rows = []
    for j in jobs:
        every = (
            "not set" if j.checkpoint_every_seconds is None else f"{j.checkpoint_every_seconds:g} s"
        )
        rows.append(
            [
                j.job,
                str(j.gpus),
                every,
                f"{_hours(j.lost_gpu_hours_worst)} ({_hours(j.lost_gpu_hours_mean)})",
                usd(j.lost_usd_worst),
                (
                    f"drained by {j.drained_by}: the step in flight, if the checkpoint fits "
                    f"in {j.grace_seconds} s"
                    if j.drained_by
                    else "nothing here drains the node (unless the cluster does): a hard kill"
                ),
            ]
        )
    return rows


JOB_TYPE = "kubernetes:batch/v1:Job"
JOB_REPLACEMENT_NOTE = (
    "A changed training Job spec replaces the Job (its pod template is immutable): the old "
    "Job and its pods are deleted, then the new Job starts and resumes from the last "
    "checkpoint; the work since that checkpoint is done again."
)


def _replacement(r: Mapping[str, Any]) -> str:
    if not r.get("replace"):
        return ""
    if r.get("type") == JOB_TYPE:
        return " (replaced: training restarts from its last checkpoint)"
    return " (replaced)"


def text_summary(
    report: CostReport,
    findings: Sequence[Finding],
    jobs: Sequence[JobExposure] = (),
    deploy_from: str | None = None,
) -> str:
    parts = [f"Deploy from: {deploy_from}", ""] if deploy_from else []
    parts += ["Cost estimate:", _table(_COST_HEADER, _cost_rows(report)), _price_note(report), ""]
    if jobs:
        parts += [
            "Preemption exposure:",
            _table(_PREEMPTION_HEADER, _preemption_rows(jobs)),
            PREEMPTION_NOTE,
            JOB_REPLACEMENT_NOTE,
            "",
        ]
    if findings:
        parts.append(f"Policy findings ({len(findings)}):")
        parts += [f"  [{f.level}] {f.rule}: {f.resource}: {f.message}" for f in findings]
    else:
        parts.append("Policy: no findings.")
    return "\n".join(parts)


def text_diff(d: Mapping[str, Any]) -> str:
    lines = [
        f"Diff against base: {len(d['added'])} added, {len(d['removed'])} removed, "
        f"{len(d['changed'])} changed"
    ]
    lines += [f"  + {display_type(r['type'])} {r['name']}" for r in d["added"]]
    lines += [f"  - {display_type(r['type'])} {r['name']}" for r in d["removed"]]
    for r in d["changed"]:
        lines.append(f"  ~ {display_type(r['type'])} {r['name']}{_replacement(r)}")
        lines += [f"      {c['path']}: {_v(c['old'])} -> {_v(c['new'])}" for c in r["changes"]]
    delta = d["cost"]["delta"]
    lines.append(
        f"  cost delta (estimate): {signed(delta['monthly'])}/month, "
        f"{signed(delta['hourly_max'])}/h at max size"
    )
    return "\n".join(lines)


def _v(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(
    plan: Mapping[str, Any],
    report: CostReport,
    findings: Sequence[Finding],
    d: Mapping[str, Any] | None = None,
    jobs: Sequence[JobExposure] = (),
) -> str:
    """A PR-comment summary of one stack: resources, diff, cost, preemption, findings."""
    mandatory = sum(f.level == "mandatory" for f in findings)
    status = "FAILED: mandatory policy findings" if mandatory else "no mandatory policy finding"
    resources = plan.get("resources") or []
    out = [
        f"### gpuinfra preview: `{plan.get('stack')}` ({plan.get('cloud')}): {status}",
        "",
        f"Offline preview (mock engine, no cloud credentials): **{len(resources)} resources**.",
        "",
        *(
            [f"**Deploy from:** {_md(str(plan['deployFrom']))}", ""]
            if plan.get("deployFrom")
            else []
        ),
        "<details><summary>Resources by type</summary>",
        "",
        "| type | count |",
        "|---|---|",
    ]
    counts = Counter(display_type(r["type"]) for r in resources)
    out += [f"| `{t}` | {n} |" for t, n in sorted(counts.items())]
    out += ["", "</details>", ""]
    if d is not None:
        out += ["#### Changes against the base branch", ""]
        if not (d["added"] or d["removed"] or d["changed"]):
            out.append("No resource changes.")
        out += [f"- **added** `{display_type(r['type'])}` {r['name']}" for r in d["added"]]
        out += [f"- **removed** `{display_type(r['type'])}` {r['name']}" for r in d["removed"]]
        for r in d["changed"]:
            out.append(f"- **changed** `{display_type(r['type'])}` {r['name']}{_replacement(r)}")
            out += [
                f"  - `{c['path']}`: `{_md(_v(c['old']))}` → `{_md(_v(c['new']))}`"
                for c in r["changes"]
            ]
        delta = d["cost"]["delta"]
        out += [
            "",
            f"Cost delta (estimate): **{signed(delta['monthly'])}/month**, "
            f"{signed(delta['hourly_desired'])}/h at desired size, "
            f"{signed(delta['hourly_max'])}/h at max size.",
            "",
        ]
    out += ["#### Cost estimate", "", "| " + " | ".join(_COST_HEADER) + " |"]
    out.append("|" + "---|" * len(_COST_HEADER))
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in _cost_rows(report)]
    out += ["", f"_{_price_note(report)}_", ""]
    if jobs:
        out += ["#### Preemption exposure", "", "| " + " | ".join(_PREEMPTION_HEADER) + " |"]
        out.append("|" + "---|" * len(_PREEMPTION_HEADER))
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in _preemption_rows(jobs)]
        out += ["", f"_{PREEMPTION_NOTE}_", "", f"_{JOB_REPLACEMENT_NOTE}_", ""]
    out += ["#### Policy findings", ""]
    if not findings:
        out.append("None.")
    else:
        out += ["| level | rule | resource | finding |", "|---|---|---|---|"]
        out += [
            f"| {f.level} | `{f.rule}` | {_md(f.resource)} | {_md(f.message)} |" for f in findings
        ]
    return "\n".join(out) + "\n"
