"""`gpuinfra` command line. Exit codes: 0 fine, 2 invalid settings or project files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _preview(args: argparse.Namespace) -> int:
    # Imported here so `gpuinfra --help` stays instant.
    from components.settings import SettingsError

    from .preview import preview_stack
    from .project import ProjectError
    from .render import plan_json, tree

    try:
        plan, cloud = preview_stack(Path(args.cwd), args.stack)
    except (ProjectError, SettingsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(plan_json(plan, cloud), sys.stdout, indent=2, sort_keys=True)
        print()
    else:
        print(tree(plan))
    return 0


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
    preview.add_argument("--json", action="store_true", help="print the plan as JSON")
    preview.set_defaults(func=_preview)

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
