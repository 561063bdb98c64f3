"""Wall-clock figures for the issue notes: offline preview and test-suite timings.

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench.py            # preview x5, bare-import floor, tests x1
    .venv/bin/python benchmarks/bench.py --skip-tests
    .venv/bin/python benchmarks/bench.py --per-stack    # `preview --stack <s>`, every stack
    .venv/bin/python benchmarks/bench.py --per-stack --compare /tmp/base   # A/B, interleaved

`--compare DIR` runs each stack's preview alternately here and in DIR (another checkout, e.g.
`git archive main | tar -x -C DIR`), so both see the same machine load, and adds the CPU
seconds (user + system) of each run: on a machine shared with other work, CPU time moves
far less with the load than wall-clock time does.

"Cold" means a new Python process each time (the OS file cache is warm, as it is for a
user who runs the command twice); the bare-import floor is the time to import the
provider SDK modules the AWS stack touches, which no preview can beat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = (
    "import pulumi, pulumi_aws as aws\n"
    "for m in ('ec2', 'eks', 'iam', 'kms', 's3', 'cloudwatch', 'vpc'):\n"
    "    getattr(aws, m).__name__\n"
    "aws.ec2.Vpc; aws.eks.Cluster; aws.iam.Role; aws.kms.Key; aws.s3.Bucket\n"
    "aws.cloudwatch.LogGroup; aws.vpc.SecurityGroupIngressRule\n"
)


def timed(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return times


def timed_cpu(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child: user + system) of one run in `cwd`."""
    before = os.times()
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} in {cwd} failed:\n{result.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def compare(stacks: list[str], other: Path, runs: int) -> None:
    """Each stack's preview alternately in `other` (A) and here (B), `runs` times each."""
    py = sys.executable
    print("| stack | A wall best / median s | B wall best / median s | A CPU best / median s "
          "| B CPU best / median s |")  # fmt: skip
    print("|---|---|---|---|---|")
    for stack in stacks:
        cmd = [py, "-m", "gpuinfra", "preview", "--stack", stack]
        a: list[tuple[float, float]] = []
        b: list[tuple[float, float]] = []
        for _ in range(runs):
            a.append(timed_cpu(cmd, other))
            b.append(timed_cpu(cmd, ROOT))

        def fig(values: list[float]) -> str:
            return f"{min(values):.2f} / {statistics.median(values):.2f}"

        print(
            f"| {stack} | {fig([w for w, _ in a])} | {fig([w for w, _ in b])} | "
            f"{fig([c for _, c in a])} | {fig([c for _, c in b])} |",
            flush=True,
        )


def row(label: str, times: list[float]) -> str:
    best, median = min(times), statistics.median(times)
    return f"| {label} | {len(times)} | {best:.2f} | {median:.2f} | {max(times):.2f} |"


def shipped_stacks() -> list[str]:
    """Every stack the repository ships (`Pulumi.<stack>.yaml`), sorted."""
    return sorted(
        p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml")
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="with --per-stack: alternate each run with the same preview in checkout DIR",
    )
    parser.add_argument(
        "--per-stack",
        action="store_true",
        help="only `gpuinfra preview --stack <s>` for every shipped stack file",
    )
    args = parser.parse_args()

    py = sys.executable
    if args.per_stack and args.compare is not None:
        compare(shipped_stacks(), args.compare.resolve(), args.runs)
        return
    if args.per_stack:
        print("| what | runs | best s | median s | worst s |")
        print("|---|---|---|---|---|")
        for stack in shipped_stacks():
            cmd = [py, "-m", "gpuinfra", "preview", "--stack", stack]
            print(row(f"`gpuinfra preview --stack {stack}`", timed(cmd, args.runs)), flush=True)
        return
    rows = [
        row(
            "`gpuinfra preview --stack dev`",
            timed([py, "-m", "gpuinfra", "preview", "--stack", "dev"], args.runs),
        ),
        row(
            "`gpuinfra preview --stack prod --json`",
            timed([py, "-m", "gpuinfra", "preview", "--stack", "prod", "--json"], args.runs),
        ),
        row(
            "`gpuinfra preview --stack dev --format markdown` (cost + policy)",
            timed(
                [py, "-m", "gpuinfra", "preview", "--stack", "dev", "--format", "markdown"],
                args.runs,
            ),
        ),
        row(
            "`gpuinfra preview --all --format markdown` (every stack)",
            timed([py, "-m", "gpuinfra", "preview", "--all", "--format", "markdown"], args.runs),
        ),
        row("floor: import pulumi + the AWS SDK modules used", timed([py, "-c", FLOOR], args.runs)),
        row("floor: `python -c pass`", timed([py, "-c", "pass"], args.runs)),
    ]
    if not args.skip_tests:
        rows.append(
            row(
                "`python -m pytest -q` (whole suite)",
                timed([py, "-m", "pytest", "-q", "-p", "no:cacheprovider"], 1),
            )
        )
    print("| what | runs | best s | median s | worst s |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
