"""Where a user's mistake becomes one line on stderr, and a bug stays a traceback.

Every `gpuinfra` subcommand runs through `guarded`: a `UserError` (bad argument, missing,
unreadable or malformed file, not a project folder), a `ProjectError`, a `SettingsError` or a
`ProviderRulesError` is printed as `error: ...` and exits `EXIT_INVALID`; anything else is a
bug and keeps its traceback, with its own exit code so CI never reads it as a policy finding.
Checks for arguments (`positive_int`, `stack_name`, `input_file`, ...) live here too, so each
subcommand states what it expects once and says it the same way.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FINDING = 1
"""The command's own check failed: a mandatory policy finding, files out of date."""
EXIT_INVALID = 2
"""A user mistake: argument, file, folder, settings, or a resource the provider would refuse."""
EXIT_INTERNAL = 70
"""A bug in gpuinfra (sysexits.h EX_SOFTWARE): the traceback is on stderr."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT, as a shell reports it)."""
EXIT_PIPE_CLOSED = 141
"""stdout's reader went away (128 + SIGPIPE, as a shell reports it)."""

EXIT_CODES_HELP = f"""\
exit codes:
  {EXIT_OK}    fine
  {EXIT_FINDING}    the command's check failed: a mandatory policy finding or a change Pulumi
       would refuse on a protected resource (preview --diff), files out of date
       (render --check, schema)
  {EXIT_INVALID}    a mistake to fix: a bad argument, a missing, unreadable or malformed file,
       not a gpuinfra project folder, invalid settings, or a resource the provider
       would refuse; named on stderr
  {EXIT_INTERNAL}   a bug in gpuinfra: the traceback is on stderr, please report it
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)
  {EXIT_PIPE_CLOSED}  the reader of stdout went away (`gpuinfra preview --json | head`)
"""


class UserError(Exception):
    """A mistake in what the user gave: says the argument, the value and what was expected."""

    def __init__(self, argument: str, value: object, problem: str, expected: str) -> None:
        self.argument, self.value, self.problem, self.expected = argument, value, problem, expected
        super().__init__(
            f"{argument} {_quote(value)}: {_one_line(problem)}; expected {_one_line(expected)}"
        )


def _quote(value: object) -> str:
    return repr(str(value)) if isinstance(value, (str, Path)) else repr(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "fix your input". Looked up only among modules already
    imported: an error class nobody imported cannot have been raised, and importing
    `components` here would run the very program the project check guards."""
    types: list[type[BaseException]] = [UserError]
    for module, name in (
        ("gpuinfra.project", "ProjectError"),
        ("components.settings.errors", "SettingsError"),
        ("gpuinfra.provider_rules.model", "ProviderRulesError"),
    ):
        found = getattr(sys.modules.get(module), name, None)
        if isinstance(found, type) and issubclass(found, BaseException):
            types.append(found)
    return tuple(types)


def is_user_error(error: BaseException) -> bool:
    return isinstance(error, _user_error_types())


def report(error: BaseException) -> int:
    """Print a user error as `error: ...` on stderr; returns `EXIT_INVALID`."""
    print(f"error: {error}", file=sys.stderr, flush=True)
    return EXIT_INVALID


def guarded(command: Callable[[], int]) -> int:
    """Run a subcommand: user errors become one `error:` line and exit 2; a bug keeps its
    traceback and exits `EXIT_INTERNAL`."""
    try:
        return command()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `gpuinfra preview --json | head`: the reader left; nothing more to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE_CLOSED
    except Exception as error:
        if is_user_error(error):
            return report(error)
        traceback.print_exc()
        print(
            f"gpuinfra: internal error (exit {EXIT_INTERNAL}): this is a bug, not a mistake "
            "in your input; please report it with the traceback above",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


class Parser(argparse.ArgumentParser):
    """argparse with its mistakes on one line (no usage block), pointing at `--help`."""

    def error(self, message: str) -> Any:  # argparse declares NoReturn; exit() never returns
        self.exit(EXIT_INVALID, f"error: {_one_line(message)} (see `{self.prog} --help`)\n")


# --- argument types (argparse calls them; ArgumentTypeError names the argument) ---

_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def stack_name(text: str) -> str:
    """A stack name as Pulumi allows it, so it is also a safe part of `Pulumi.<stack>.yaml`."""
    if not _STACK_NAME.match(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a stack name (up to 100 letters, digits, '-', '_' or '.')"
        )
    return text


def positive_int(maximum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if not 1 <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a whole number from 1 to {maximum:,}"
            )
        return value

    parse.__name__ = "whole number"  # argparse's fallback message uses it
    return parse


def positive_number(maximum: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= maximum):
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a number greater than 0 and at most {maximum:g}"
            )
        return value

    parse.__name__ = "number"
    return parse


# --- files and folders named by an argument ---


@contextmanager
def file_access(argument: str, value: object, expected: str) -> Iterator[None]:
    """Turns an OS error on a user-named path (permission, disk full, a file where a folder
    should be) into a `UserError` that names the argument."""
    try:
        yield
    except UnicodeDecodeError as error:
        raise UserError(argument, value, f"not text ({error.reason})", expected) from error
    except OSError as error:
        where = (
            f" ({error.filename})" if error.filename and str(error.filename) != str(value) else ""
        )
        raise UserError(argument, value, f"{error.strerror or error}{where}", expected) from error


def input_file(argument: str, value: str, expected: str) -> Path:
    path = Path(value)
    if not path.exists():
        raise UserError(argument, value, "no such file", expected)
    if not path.is_file():
        raise UserError(argument, value, "not a file", expected)
    return path


def read_json(argument: str, value: str, path: Path, expected: str) -> Any:
    with file_access(argument, value, expected):
        text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problem = f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        raise UserError(argument, value, problem, expected) from error


def output_folder(argument: str, value: str) -> Path:
    """A folder to write into: it exists, or can be made (no file on its way, writable)."""
    path = Path(value)
    expected = "a folder to write into (it is created if missing)"
    if path.exists() and not path.is_dir():
        raise UserError(argument, value, "is a file, not a folder", expected)
    _check_writable_ancestor(argument, value, path, expected)
    return path


def output_file(argument: str, value: str) -> Path:
    """A file to (over)write: not a folder; its folder exists or can be made."""
    path = Path(value)
    expected = "a file path to write (its folder is created if missing)"
    if path.is_dir():
        raise UserError(argument, value, "is a folder, not a file", expected)
    if path.exists() and not path.is_file():
        raise UserError(argument, value, "not a regular file", expected)
    _check_writable_ancestor(argument, value, path.parent, expected)
    return path


def _check_writable_ancestor(argument: str, value: str, path: Path, expected: str) -> None:
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(argument, value, f"{existing} is a file, not a folder", expected)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(argument, value, f"no permission to write in {existing}", expected)


def project_folder(argument: str, value: str) -> Path:
    """A gpuinfra project: `Pulumi.yaml`, the program `__main__.py` and its `components/`
    package. Checked before anything imports the program, so a wrong folder is a clear
    error rather than `No module named 'components'`."""
    path = Path(value)
    expected = (
        "a gpuinfra project folder (Pulumi.yaml, __main__.py, components/): run gpuinfra "
        "there or point --cwd at it"
    )
    if not path.exists():
        raise UserError(argument, value, "no such folder", expected)
    if not path.is_dir():
        raise UserError(argument, value, "not a folder", expected)
    missing = [
        name
        for name, present in (
            ("Pulumi.yaml", (path / "Pulumi.yaml").is_file()),
            ("__main__.py", (path / "__main__.py").is_file()),
            ("components/", (path / "components" / "__init__.py").is_file()),
        )
        if not present
    ]
    if missing:
        names = (
            " or ".join(missing)
            if len(missing) < 3
            else ", ".join(missing[:-1]) + " or " + missing[-1]
        )
        raise UserError(argument, value, f"no {names} there", expected)
    return path
