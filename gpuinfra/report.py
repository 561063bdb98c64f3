"""Cost, preemption exposure, findings and diff as text: a terminal table, or Markdown for a
PR comment (kept under GitHub's comment limit by `fit_comment`)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .alerts import StackAlert
from .cost import CostReport
from .currency import money
from .policy_rules import Finding
from .preemption import JobExposure
from .queue import QUEUE_HEADER, QUEUE_NOTE, QueueReport, queue_rows, queue_title
from .render import display_type


def usd(value: float | None, currency: str = "USD") -> str:
    """An amount with its currency's sign (`money`); the name predates currencies."""
    return money(value, currency)


def signed(value: float, currency: str = "USD") -> str:
    return ("+" if value > 0 else "-" if value < 0 else "±") + money(abs(value), currency)


def total(value: float | None, unpriced: int, currency: str = "USD") -> str:
    """A total over lines of which `unpriced` have no price: never "$0" for "unknown"."""
    return totals_text({currency: value} if value else {}, unpriced)


def totals_text(by_currency: Mapping[str, float | None], unpriced: int) -> str:
    """Totals per currency, side by side and never added ("$1.20 + ¥8.50"); "at least" when
    lines are unpriced, "unknown" when nothing is priced."""
    parts = [money(v, c) for c, v in sorted(by_currency.items()) if v]
    if not parts:
        return f"unknown ({unpriced} unpriced)" if unpriced else money(0.0)
    shown = " + ".join(parts)
    return f"at least {shown} ({unpriced} unpriced)" if unpriced else shown


def delta_text(d: Mapping[str, Any], figure: str) -> str:
    """The cost delta of one figure; says "unknown" and why when a changed line has no price."""
    c = d["cost"]
    currency = str(c.get("currency") or "USD")
    priced = float((c.get("deltaPriced") or c["delta"]).get(figure) or 0.0)
    unknown = list((c.get("deltaUnknown") or {}).get(figure) or [])
    if not unknown:
        return signed(priced, currency)
    shown = "; ".join(unknown[:3]) + (f"; and {len(unknown) - 3} more" if len(unknown) > 3 else "")
    rest = f" (priced items alone: {signed(priced, currency)})" if priced else ""
    return f"unknown: {len(unknown)} changed item(s) without a price: {shown}{rest}"


def _price_note(report: CostReport) -> str:
    dates = sorted({line.price_date for line in report.lines})
    a = report.assumptions
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "n/a"
    unknown = (
        f"; {report.unknown} item(s) have no monthly price (usage-based or unknown): "
        "totals are lower bounds"
        if report.unknown
        else ""
    )
    currencies = sorted({line.currency for line in report.lines if line.monthly is not None})
    money_note = (
        f"{' and '.join(currencies)}, never added together"
        if len(currencies) > 1
        else (currencies[0] if currencies else report.currency)
    )
    foreign = [c for c in currencies if c != report.currency]
    if foreign:
        money_note += (
            f" ({' and '.join(foreign)} figures not converted; the stack's billing currency is "
            f"taken to be {report.currency}, and their {report.currency} price is not confirmed)"
        )
    spot = (
        f"spot: current prices refreshed {a.prices.refreshed} where listed, else factor "
        if a.prices is not None and a.prices.spot and not a.spot_factor_explicit
        else "spot factor "
    )
    if not report.lines:
        return (
            "Nothing this stack creates is billed by itself: the nodes its workloads run on "
            "are billed with the cluster (the stack or account that created it)."
        )
    return (
        f"Estimate, {money_note}, prices dated {span}; monthly = 730 h, GPU pools at min size "
        f"plus {a.gpu_hours_per_month} GPU hours on the first; storage at {a.storage_gb} GB; "
        f"{spot}{a.spot_factor if a.spot_factor is not None else 'unknown'}{unknown}."
    )


def price_sources(report: CostReport) -> list[str]:
    """Where each node price comes from, with its date: what a reader checks first."""
    found = []
    for line in report.lines:
        if line.item not in ("pool", "instance"):
            continue
        how = next((n for n in line.note.split("; ") if n.startswith("spot = ")), "")
        price = (
            "no price (`gpuinfra prices --stack <stack>` reads it with your credentials)"
            if line.node_per_hour is None
            else f"{money(line.node_per_hour, line.currency)}/h per node"
            + (f" ({how})" if how else "")
        )
        found.append(f"{line.resource}: {price}; source: {line.source}; {line.price_date}")
    return found


def _cost_rows(report: CostReport) -> list[list[str]]:
    rows = [
        [
            line.resource,
            line.what,
            money(line.hourly_desired, line.currency),
            money(line.hourly_max, line.currency),
            money(line.hourly_idle, line.currency),
            money(line.monthly, line.currency),
        ]
        for line in report.lines
    ]
    by, n = report.totals_by_currency, report.unpriced
    figures = ("hourly_desired", "hourly_max", "hourly_idle", "monthly")
    if not report.lines:  # not "$0.00": that reads as free, and the nodes are billed elsewhere
        return [["total", "", *(["nothing billed here"] * len(figures))]]
    rows.append(
        ["total", ""]
        + [totals_text({c: t.get(k) for c, t in by.items()}, n.get(k, 0)) for k in figures]
    )
    return rows


_COST_HEADER = ["resource", "what", "per h desired", "per h max", "per h idle", "per month"]


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
    "GPU pool",
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
        pool = "-" if j.spot is None else f"{j.pool or '?'} ({'spot' if j.spot else 'on-demand'})"
        rows.append(
            [
                j.job,
                pool,
                str(j.gpus),
                every,
                f"{_hours(j.lost_gpu_hours_worst)} ({_hours(j.lost_gpu_hours_mean)})",
                money(j.lost_usd_worst, j.currency),
                (
                    "on-demand pool: no spot reclaim"
                    if j.spot is False
                    else f"drained by {j.drained_by}: the step in flight, if the checkpoint fits "
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


_ALERT_HEADER = ("alert", "severity", "after", "fires when")


def _alert_rows(alerts: Sequence[StackAlert]) -> list[list[str]]:
    return [[a.alert, a.severity, a.after, a.expr] for a in alerts]


def _alert_title(alerts: Sequence[StackAlert]) -> str:
    rules = ", ".join(sorted({a.rule for a in alerts}))
    return f"GPU alerts ({len(alerts)}, PrometheusRule {rules})"


def text_summary(
    report: CostReport,
    findings: Sequence[Finding],
    jobs: Sequence[JobExposure] = (),
    deploy_from: str | None = None,
    alerts: Sequence[StackAlert] = (),
    alerts_note: str | None = None,
    queue: QueueReport | None = None,
) -> str:
    parts = [f"Deploy from: {deploy_from}", ""] if deploy_from else []
    sources = price_sources(report)
    parts += ["Cost estimate:", _table(_COST_HEADER, _cost_rows(report)), _price_note(report)]
    parts += [f"Node price: {s}" for s in sources] + [""]
    if alerts:
        parts += [_alert_title(alerts) + ":", _table(_ALERT_HEADER, _alert_rows(alerts)), ""]
    elif alerts_note:
        parts += [f"GPU alerts: {alerts_note}.", ""]
    if jobs:
        parts += [
            "Preemption exposure:",
            _table(_PREEMPTION_HEADER, _preemption_rows(jobs)),
            PREEMPTION_NOTE,
            JOB_REPLACEMENT_NOTE,
            "",
        ]
    if queue is not None:
        parts += [queue_title(queue) + ":"]
        if queue.jobs:
            parts.append(_table(QUEUE_HEADER, queue_rows(queue)))
        parts += [QUEUE_NOTE, ""]
    if findings:
        parts.append(f"Policy findings ({len(findings)}):")
        parts += [f"  [{f.level}] {f.rule}: {f.resource}: {f.message}" for f in findings]
    else:
        parts.append("Policy: no findings.")
    return "\n".join(parts)


_ACTION = {
    "update": ("~", "changed"),
    "replace": ("+-", "replaced"),
    "replace-blocked": ("!!", "replace BLOCKED (protected)"),
}


def _why(r: Mapping[str, Any]) -> str:
    if r.get("replaceBecause"):
        job = "training restarts from its last checkpoint; " if r.get("type") == JOB_TYPE else ""
        because = ", ".join(r["replaceBecause"])
        return f" (replace: {job}{because}; {r.get('replaceSource', '')})"
    if r.get("replaceUnknown"):
        return " (whether this replaces is not encoded for this type)"
    return ""


def _counts(d: Mapping[str, Any]) -> str:
    actions = Counter(r.get("action", "update") for r in d["changed"])
    replaced = actions["replace"] + actions["replace-blocked"]
    text = (
        f"{len(d['added'])} added, {len(d['removed'])} removed, {len(d['changed'])} changed "
        f"({replaced} replaced)"
    )
    if d.get("blocked"):
        text += f", {d['blocked']} BLOCKED (protected: Pulumi would refuse)"
    return text


def text_diff(d: Mapping[str, Any]) -> str:
    lines = [f"Diff against base: {_counts(d)}"]
    lines += [f"  + {display_type(r['type'])} {r['name']}" for r in d["added"]]
    for r in d["removed"]:
        blocked = "  BLOCKED: protected, Pulumi refuses to delete it" if r.get("blocked") else ""
        lines.append(f"  - {display_type(r['type'])} {r['name']}{blocked}")
    for r in d["changed"]:
        mark, _ = _ACTION.get(r.get("action", "update"), ("~", "changed"))
        lines.append(f"  {mark} {display_type(r['type'])} {r['name']}{_why(r)}")
        for c in r["changes"]:
            old, new = focus(c["old"], c["new"])
            change = "[secret] changed" if c.get("secret") else f"{old} -> {new}"
            lines.append(f"      {c['path']}: {change}")
    lines.append(
        f"  cost delta (estimate): {delta_text(d, 'monthly')}/month, "
        f"{delta_text(d, 'hourly_max')}/h at max size"
    )
    return "\n".join(lines)


_WIDTH = 80
_CONTEXT = 24


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def focus(old: Any, new: Any, width: int = _WIDTH) -> tuple[str, str]:
    """Both values, cut to the part that differs when long: the first differing line of a
    multi-line value, and around the first difference within it, so a change deep in a
    long value stays visible instead of two identical-looking prefixes."""
    a, b = _text(old), _text(new)
    if len(a) <= width and len(b) <= width and "\n" not in a + b:
        return a, b
    a_lines, b_lines = a.split("\n"), b.split("\n")
    line = 0
    while line < min(len(a_lines), len(b_lines)) and a_lines[line] == b_lines[line]:
        line += 1
    label = f"line {line + 1}: " if len(a_lines) > 1 or len(b_lines) > 1 else ""
    a1 = a_lines[line] if line < len(a_lines) else "<no line>"
    b1 = b_lines[line] if line < len(b_lines) else "<no line>"
    start = 0
    while start < min(len(a1), len(b1)) and a1[start] == b1[start]:
        start += 1
    end = 0
    while end < min(len(a1), len(b1)) - start and a1[-1 - end] == b1[-1 - end]:
        end += 1
    return label + _window(a1, start, end, width), label + _window(b1, start, end, width)


def _window(text: str, start: int, end: int, width: int) -> str:
    """`text` from a little before `start` to a little after its last `end` characters."""
    lo = max(0, start - _CONTEXT)
    hi = min(len(text), max(len(text) - end + _CONTEXT, lo + 1))
    hi = min(hi, lo + max(width, start - lo + 1))
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def _md(text: str) -> str:
    """Table-cell text: `|` escaped (GFM escapes it even inside code spans), one line."""
    return text.replace("|", "\\|").replace("\n", " ")


def code(text: str) -> str:
    """`text` as one Markdown code span, whatever backticks it holds (CommonMark: a fence
    longer than any backtick run inside, padded when the text starts or ends with one)."""
    text = text.replace("\n", "⏎")
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_CUT_START = "<!--gpuinfra:cut level={level} summary={summary}-->"
_CUT_END = "<!--gpuinfra:cut end level={level}-->"
_MARK_RE = re.compile(r"<!--gpuinfra:cut [^\n]*-->\n?")


def _blocks(text: str, level: int) -> list[re.Match[str]]:
    """The cuttable blocks of one level (blocks of a lower level nest inside higher ones)."""
    pattern = (
        rf"<!--gpuinfra:cut level={level} summary=(.*?)-->\n"
        rf"(.*?)<!--gpuinfra:cut end level={level}-->\n?"
    )
    return list(re.finditer(pattern, text, re.S))


CUT_LEVELS = {
    1: "the input-by-input changes",
    2: "the lists of added, removed and changed resources",
    3: "the per-resource cost lines and resource counts",
}
"""What `fit_comment` may cut, in order: each block keeps a one-line summary."""


def _cuttable(level: int, summary: str, lines: list[str]) -> list[str]:
    """`lines` marked as a block `fit_comment` may replace by `summary` (HTML comments:
    invisible in GitHub's rendering)."""
    if not lines:
        return []
    start = _CUT_START.format(level=level, summary=json.dumps(summary))
    return [start, *lines, _CUT_END.format(level=level)]


def _markdown_changes(d: Mapping[str, Any]) -> list[str]:
    out = ["#### Changes against the base branch", "", _counts(d) + ".", ""]
    if not (d["added"] or d["removed"] or d["changed"]):
        out.append("No resource changes.")
    listing: list[str] = []
    for r in d["added"]:
        listing.append(f"- **added** {code(display_type(r['type']))} {r['name']}")
    for r in d["removed"]:
        blocked = (
            " — **BLOCKED**: protected, Pulumi refuses to delete it" if r.get("blocked") else ""
        )
        listing.append(f"- **removed** {code(display_type(r['type']))} {r['name']}{blocked}")
    for r in d["changed"]:
        _, word = _ACTION.get(r.get("action", "update"), ("~", "changed"))
        listing.append(f"- **{word}** {code(display_type(r['type']))} {r['name']}{_why(r)}")
        inputs = []
        for c in r["changes"]:
            old, new = focus(c["old"], c["new"])
            change = "[secret] changed" if c.get("secret") else f"{code(old)} → {code(new)}"
            inputs.append(f"  - {code(c['path'])}: {change}")
        listing += _cuttable(1, f"  - ({len(inputs)} input changes cut)", inputs)
    resources = len(d["added"]) + len(d["removed"]) + len(d["changed"])
    out += _cuttable(2, f"({resources} resource changes cut: see the counts above)", listing)
    out += [
        "",
        f"Cost delta (estimate): **{delta_text(d, 'monthly')}/month**, "
        f"{delta_text(d, 'hourly_desired')}/h at desired size, "
        f"{delta_text(d, 'hourly_max')}/h at max size.",
        "",
    ]
    return out


COMMENT_LIMIT = 65_536
"""GitHub's limit on an issue or PR comment body, in characters."""
COMMENT_BUDGET = COMMENT_LIMIT - 1_536
"""What `fit_comment` aims for: room for the marker line the workflow prepends, and slack."""


def artifact_hint() -> str:
    """Where the uncut plan is: the workflow run's `preview` artifact when run by GitHub
    Actions (it sets these variables in every step), else the `--out` folder."""
    server, repo, run = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repo and run:
        return (
            f"the `preview` artifact of [this workflow run]({server}/{repo}/actions/runs/{run})"
            " (`out/<stack>/`: plan.json, diff.json, cost.json, summary.md)"
        )
    return "the `--out` folder (`<stack>/`: plan.json, diff.json, cost.json, summary.md)"


def fit_comment(text: str, budget: int = COMMENT_BUDGET) -> str:
    """`text` (one or more stacks' `markdown`) under `budget` characters: cut blocks level by
    level, largest first, each to its summary line, and say at the top what was cut and where
    the full plan is. Without a cut the markers are just removed."""
    cut: dict[int, int] = {}
    note_room = 800  # the note that says what was cut

    def render(current: str) -> str:
        return _MARK_RE.sub("", current)

    while True:
        size = len(render(text))
        if size <= budget and (not cut or size + note_room <= budget):
            break
        level = next((n for n in sorted(CUT_LEVELS) if _blocks(text, n)), None)
        if level is None:
            break
        # The largest block of the lowest level first: fewest cuts for the most room.
        victim = max(_blocks(text, level), key=lambda m: len(m.group(0)))
        summary = json.loads(victim.group(1))
        text = text[: victim.start()] + f"{summary}\n" + text[victim.end() :]
        cut[level] = cut.get(level, 0) + 1
    body = render(text)
    if not cut:
        return body
    what = "; ".join(f"{CUT_LEVELS[k]} ({n} block(s))" for k, n in sorted(cut.items()))
    note = (
        f"> **Shortened to fit GitHub's {COMMENT_LIMIT:,}-character comment limit.** Cut: "
        f"{what}. The full plan, diff and cost of every stack: {artifact_hint()}.\n\n"
    )
    body = note + body
    if len(body) > budget:
        keep = body[: budget - 200].rsplit("\n", 1)[0]
        body = keep + "\n\n> **Truncated here**: the rest is in the full plan (see above).\n"
    return body


def markdown(
    plan: Mapping[str, Any],
    report: CostReport,
    findings: Sequence[Finding],
    d: Mapping[str, Any] | None = None,
    jobs: Sequence[JobExposure] = (),
    alerts: Sequence[StackAlert] = (),
    alerts_note: str | None = None,
    queue: QueueReport | None = None,
) -> str:
    """A PR-comment summary of one stack: resources, diff, cost, preemption, queue, findings."""
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
    out += _cuttable(
        3, "| (counts cut) | |", [f"| {code(t)} | {n} |" for t, n in sorted(counts.items())]
    )
    out += ["", "</details>", ""]
    if d is not None:
        out += _markdown_changes(d)
    out += ["#### Cost estimate", "", "| " + " | ".join(_COST_HEADER) + " |"]
    out.append("|" + "---|" * len(_COST_HEADER))
    rows = ["| " + " | ".join(_md(c) for c in row) + " |" for row in _cost_rows(report)]
    out += _cuttable(3, "| (per-resource lines cut) | | | | | |", rows[:-1]) + rows[-1:]
    out += ["", f"_{_price_note(report)}_", ""]
    out += [f"- Node price: {_md(s)}" for s in price_sources(report)]
    out += [""] if price_sources(report) else []
    if jobs:
        out += ["#### Preemption exposure", "", "| " + " | ".join(_PREEMPTION_HEADER) + " |"]
        out.append("|" + "---|" * len(_PREEMPTION_HEADER))
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in _preemption_rows(jobs)]
        out += ["", f"_{PREEMPTION_NOTE}_", "", f"_{JOB_REPLACEMENT_NOTE}_", ""]
    if queue is not None:
        out += ["#### Training queue", "", _md(queue_title(queue)), ""]
        if queue.jobs:
            out += ["| " + " | ".join(QUEUE_HEADER) + " |", "|" + "---|" * len(QUEUE_HEADER)]
            out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in queue_rows(queue)]
        out += ["", f"_{QUEUE_NOTE}_", ""]
    if alerts:
        out += [f"#### {_alert_title(alerts)}", "", "| " + " | ".join(_ALERT_HEADER) + " |"]
        out.append("|" + "---|" * len(_ALERT_HEADER))
        rows = [f"| {a.alert} | {a.severity} | {a.after} | {_md(code(a.expr))} |" for a in alerts]
        out += _cuttable(1, f"| ({len(rows)} alerts cut) | | | |", rows)
        out.append("")
    elif alerts_note:
        out += ["#### GPU alerts", "", f"{_md(alerts_note)}.", ""]
    out += ["#### Policy findings", ""]
    if not findings:
        out.append("None.")
    else:
        out += ["| level | rule | resource | finding |", "|---|---|---|---|"]
        out += [
            f"| {f.level} | `{f.rule}` | {_md(f.resource)} | {_md(f.message)} |" for f in findings
        ]
    return "\n".join(out) + "\n"
