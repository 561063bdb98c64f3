"""`gpuinfra` command line. Exit codes: 0 fine, 1 a mandatory policy finding (preview),
2 invalid settings or project files, or a resource the provider would refuse."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _preview(args: argparse.Namespace) -> int:
    # Imported here so `gpuinfra --help` stays instant.
    from .pr_preview import run

    return run(args)


def _sizing(args: argparse.Namespace) -> int:
    from .sizing import run

    return run(args)


def _render(args: argparse.Namespace) -> int:
    from components.settings import SettingsError

    from .manifests import write_or_check
    from .preview import preview_stack
    from .project import ProjectError
    from .provider_rules import ProviderRulesError

    try:
        plan, _ = preview_stack(Path(args.cwd), args.stack)
    except (ProjectError, SettingsError, ProviderRulesError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    differs = write_or_check(plan, out, check=args.check)
    if args.check:
        if differs:
            print(
                f"{out} is out of date with stack {args.stack}: {', '.join(differs)}; "
                f"run `gpuinfra render --stack {args.stack} --out {out}`",
                file=sys.stderr,
            )
            return 1
        print(f"{out}: up to date")
        return 0
    print(f"wrote {out} ({len(list(out.glob('*.yaml')))} files)")
    return 0


def _reachability(args: argparse.Namespace) -> int:
    from .reachability import run

    return run(args)


def _policy_config(args: argparse.Namespace) -> int:
    from .policy_config import run

    return run(Path(args.cwd), args.stack, Path(args.out) if args.out else None)


def _schema(args: argparse.Namespace) -> int:
    from .schema_docs import check_or_write

    return check_or_write(Path(args.cwd), write=args.write)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuinfra", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    preview = sub.add_parser(
        "preview", help="show what a stack would create, with no cloud account"
    )
    preview.add_argument("--stack", "-s", default="dev", help="stack name (Pulumi.<stack>.yaml)")
    preview.add_argument("--cwd", "-C", default=".", help="project directory (holds Pulumi.yaml)")
    preview.add_argument(
        "--json", action="store_true", help="print the plan as JSON (with `cost` and `policy`)"
    )
    preview.add_argument(
        "--format", choices=("table", "markdown"), default="table", help="text output style"
    )
    preview.add_argument("--diff", metavar="BASE.json", help="compare with an earlier --json plan")
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

    render = sub.add_parser(
        "render", help="write the stack's Kubernetes objects as plain manifests + kustomization"
    )
    render.add_argument("--stack", "-s", default="k8s-dev", help="stack name")
    render.add_argument("--cwd", "-C", default=".", help="project directory")
    render.add_argument("--out", "-o", default="k8s", help="folder to write (default k8s/)")
    render.add_argument("--check", action="store_true", help="fail if the folder differs")
    render.set_defaults(func=_render)

    policy_config = sub.add_parser(
        "policy-config",
        help="write the policy pack's config for a stack (its explicit opt-ins), for "
        "`pulumi preview --policy-pack-config`",
    )
    policy_config.add_argument("--stack", "-s", default="dev", help="stack name")
    policy_config.add_argument("--cwd", "-C", default=".", help="project directory")
    policy_config.add_argument("--out", "-o", help="file to write (default: print it)")
    policy_config.set_defaults(func=_policy_config)

    reachability = sub.add_parser(
        "reachability",
        help="say from where a stack's `pulumi up` must run; with --from-ip, check an address "
        "(exit 0: it may, 2: it cannot reach the cluster's API endpoint)",
    )
    reachability.add_argument("--stack", "-s", default="dev", help="stack name")
    reachability.add_argument("--cwd", "-C", default=".", help="project directory")
    reachability.add_argument(
        "--from-ip", metavar="IP", help="the address `pulumi up` would run from (egress address)"
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

    args = parser.parse_args(argv)
    # The project's own packages (components/, stacks/) come from the project directory.
    root = str(Path(args.cwd).resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
