"""`gpuinfra` command line: the offline preview of a gpuinfra Pulumi project, and tools
around it (sizing, prices, manifests, policy-pack config, config docs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_errors import (
    EXIT_CODES_HELP,
    EXIT_FINDING,
    EXIT_OK,
    Parser,
    file_access,
    guarded,
    output_file,
    output_folder,
    project_folder,
    stack_name,
)


def _preview(args: argparse.Namespace) -> int:
    # Imported here so `gpuinfra --help` stays instant.
    from .pr_preview import run

    return run(args)


def _sizing(args: argparse.Namespace) -> int:
    from .sizing import run

    return run(args)


def _prices(args: argparse.Namespace) -> int:
    # The cloud SDKs are imported by the refresh only (`gpuinfra[prices]`).
    from .prices.command import run

    return run(args)


def _render(args: argparse.Namespace) -> int:
    out = output_folder("--out", args.out)  # before the program runs: nothing is lost
    from .manifests import write_or_check
    from .preview import preview_stack

    plan, _ = preview_stack(Path(args.cwd), args.stack)
    with file_access("--out", args.out, "a folder to write the manifests into"):
        differs = write_or_check(plan, out, check=args.check)
    if args.check:
        if differs:
            print(
                f"{out} is out of date with stack {args.stack}: {', '.join(differs)}; "
                f"run `gpuinfra render --stack {args.stack} --out {out}`",
                file=sys.stderr,
            )
            return EXIT_FINDING
        print(f"{out}: up to date")
        return EXIT_OK
    print(f"wrote {out} ({len(list(out.glob('*.yaml')))} files)")
    return EXIT_OK


def _reachability(args: argparse.Namespace) -> int:
    from .reachability import run

    return run(args)


def _policy_config(args: argparse.Namespace) -> int:
    out = output_file("--out", args.out) if args.out else None
    from .policy_config import run

    return run(Path(args.cwd), args.stack, out)


def _schema(args: argparse.Namespace) -> int:
    from .schema_docs import check_or_write

    return check_or_write(Path(args.cwd), write=args.write)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="gpuinfra",
        description=__doc__,
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    preview = sub.add_parser(
        "preview", help="show what a stack would create, with no cloud account"
    )
    preview.add_argument(
        "--stack", "-s", type=stack_name, default="dev", help="stack name (Pulumi.<stack>.yaml)"
    )
    preview.add_argument("--cwd", "-C", default=".", help="project directory (holds Pulumi.yaml)")
    preview.add_argument(
        "--json", action="store_true", help="print the plan as JSON (with `cost` and `policy`)"
    )
    preview.add_argument(
        "--format", choices=("table", "markdown"), default="table", help="text output style"
    )
    preview.add_argument(
        "--diff",
        metavar="BASE",
        help="compare with an earlier --json plan: a file, or a folder of <stack>.json (--all)",
    )
    preview.add_argument(
        "--diff-missing",
        choices=("error", "new"),
        help="when --diff has no plan for a stack: `error` (default), or `new`: no base, "
        "everything in the stack shows as added (a stack's first pull request)",
    )
    preview.add_argument(
        "--out", metavar="DIR", help="write plan, cost, policy and manifests to DIR/<stack>/"
    )
    preview.add_argument("--all", action="store_true", help="preview every stack of the project")
    preview.add_argument(
        "--plan", metavar="PLAN.json", help="check a saved --json plan; the program does not run"
    )
    preview.set_defaults(func=_preview)

    from .sizing import add_arguments as add_sizing_arguments

    sizing = sub.add_parser(
        "sizing", help="estimate training memory and list the GPU types that fit"
    )
    add_sizing_arguments(sizing)
    sizing.set_defaults(func=_sizing)

    from .prices.command import add_arguments as add_prices_arguments

    prices = sub.add_parser(
        "prices",
        help="refresh the stack's cloud's on-demand and spot prices from its price API, with "
        "your credentials, into prices/<cloud>-<region>.json (the estimate and sizing use it)",
    )
    add_prices_arguments(prices)
    prices.set_defaults(func=_prices)

    render = sub.add_parser(
        "render", help="write the stack's Kubernetes objects as plain manifests + kustomization"
    )
    render.add_argument("--stack", "-s", type=stack_name, default="k8s-dev", help="stack name")
    render.add_argument("--cwd", "-C", default=".", help="project directory")
    render.add_argument("--out", "-o", default="k8s", help="folder to write (default k8s/)")
    render.add_argument("--check", action="store_true", help="fail if the folder differs")
    render.set_defaults(func=_render)

    policy_config = sub.add_parser(
        "policy-config",
        help="write the policy pack's config for a stack (its explicit opt-ins), for "
        "`pulumi preview --policy-pack-config`",
    )
    policy_config.add_argument("--stack", "-s", type=stack_name, default="dev", help="stack name")
    policy_config.add_argument("--cwd", "-C", default=".", help="project directory")
    policy_config.add_argument("--out", "-o", help="file to write (default: print it)")
    policy_config.set_defaults(func=_policy_config)

    reachability = sub.add_parser(
        "reachability",
        help="say from where a stack's `pulumi up` must run; with --from-ip, check an address "
        "(exit 0: it may, 2: it cannot reach the cluster's API endpoint)",
    )
    reachability.add_argument("--stack", "-s", type=stack_name, default="dev", help="stack name")
    reachability.add_argument("--cwd", "-C", default=".", help="project directory")
    reachability.add_argument(
        "--from-ip",
        metavar="IP",
        help="the address `pulumi up` would run from (its egress address)",
    )
    reachability.set_defaults(func=_reachability)

    schema = sub.add_parser(
        "schema", help="check (or --write) Pulumi.yaml's config block and the README reference"
    )
    schema.add_argument("--cwd", "-C", default=".", help="project directory")
    schema.add_argument(
        "--write", action="store_true", help="rewrite them from the settings schema"
    )
    schema.set_defaults(func=_schema)

    for command in sub.choices.values():  # every subcommand's --help lists the exit codes
        if command.epilog is None:
            command.epilog = EXIT_CODES_HELP
            command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _run(args: argparse.Namespace) -> int:
    """Every subcommand runs in a gpuinfra project (`--cwd`, or here), checked before
    anything imports the program; a subcommand that needs none sets `project=False`."""
    if getattr(args, "project", True):
        cwd = getattr(args, "cwd", ".")
        root = project_folder("--cwd", cwd)
        from .project import load_project

        load_project(root)  # Pulumi.yaml readable, a mapping with a name
        # The project's own packages (components/, stacks/) come from the project directory.
        resolved = str(root.resolve())
        if resolved not in sys.path:
            sys.path.insert(0, resolved)
    return int(args.func(args))


def main(argv: list[str] | None = None) -> int:
    """Exit codes: see `EXIT_CODES_HELP` (also in `gpuinfra --help` and the README)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help (0) or an argument error (2, already printed)
        return done.code if isinstance(done.code, int) else EXIT_OK
    return guarded(lambda: _run(args))


if __name__ == "__main__":
    raise SystemExit(main())
