# ruff: noqa: E501  (long literal argument lists)
"""A user's mistake gets one line on stderr naming the argument, the value and what was
expected, exit 2 and no traceback; a bug keeps its traceback and exits 70 (never 1 or 2).

Most invocations run in-process (`gpuinfra.cli.main`) to keep the table fast; a few run the
real console script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuinfra import cli, cli_errors

ROOT = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = Path(sys.executable).parent / "gpuinfra"


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """`gpuinfra ARGS` in-process; sys.path is restored (the CLI puts the project on it)."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def invoke(*args: str) -> Outcome:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return Outcome(code, out, err)

    return invoke


def _project(folder: Path, replace: dict[str, str] | None = None) -> Path:
    """A gpuinfra project (the program's packages linked from the repository) with some of
    its files replaced: `replace` maps a file name to its text."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py", "README.md"):
        (folder / name).write_text((ROOT / name).read_text())
    for package in ("components", "stacks"):
        (folder / package).symlink_to(ROOT / package)
    for name, text in (replace or {}).items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bad (and a few good) files and folders the table points at."""
    d = tmp_path_factory.mktemp("cli-errors")
    (d / "not-json.json").write_text("{\n")
    (d / "list.json").write_text("[1, 2]\n")
    (d / "no-resources.json").write_text('{"stack": "dev"}\n')
    (d / "no-urn.json").write_text(
        '{"resources": [{"type": "aws:s3/bucketV2:BucketV2", "name": "b"}]}\n'
    )
    (d / "bad-totals.json").write_text(
        '{"resources": [], "cost": {"totals": {"monthly": "a lot"}}}\n'
    )
    (d / "all-doc.json").write_text('{"stacks": {"prod": {"resources": []}}}\n')
    (d / "all-doc-bad.json").write_text('{"stacks": ["dev"]}\n')
    (d / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (d / "empty-plan.json").write_text('{"resources": []}\n')
    (d / "one-resource.json").write_text(
        '{"resources": [{"urn": "urn:x", "type": "aws:s3/bucketV2:BucketV2", "name": "b"}]}\n'
    )
    nodes = {"urn": "urn:n", "type": "aws:eks/nodeGroup:NodeGroup", "name": "n",
             "inputs": {"instanceTypes": ["g5.xlarge"], "scalingConfig": "big"}}  # fmt: skip
    (d / "wrong-input-type.json").write_text(json.dumps({"resources": [nodes]}))
    (d / "a-file").write_text("not a folder\n")
    (d / "empty").mkdir()
    (d / "base-folder").mkdir()
    (d / "out-stack-is-file").mkdir()
    (d / "out-stack-is-file" / "dev").write_text("in the way\n")
    (d / "pulumi-only").mkdir()
    (d / "pulumi-only" / "Pulumi.yaml").write_text("name: other\nruntime: python\n")
    _project(d / "broken-pulumi-yaml", {"Pulumi.yaml": "name: gpuinfra\nconfig: [1, 2\n"})
    _project(d / "pulumi-yaml-list", {"Pulumi.yaml": "- name\n- gpuinfra\n"})
    _project(
        d / "broken-stack", {"Pulumi.dev.yaml": "config:\n  gpuinfra:cloud: aws\n   bad: indent\n"}
    )
    _project(d / "stack-config-list", {"Pulumi.dev.yaml": "config: [aws]\n"})
    _project(d / "stack-number-key", {"Pulumi.dev.yaml": "config:\n  1: aws\n"})
    _project(d / "no-readme").joinpath("README.md").unlink()
    _project(d / "readme-without-markers", {"README.md": "# gpuinfra\n"})
    many = [{"urn": f"urn:{i}", "type": "aws:s3/bucketV2:BucketV2", "name": f"b{i}",
             "inputs": {"tags": {"note": "x" * 100}}} for i in range(2000)]  # fmt: skip
    (d / "big-plan.json").write_text(json.dumps({"resources": many}))
    return d


# (arguments, the argument named, a fragment of what was expected); "{d}" is the files folder.
BAD = [
    # preview: the project folder
    (["preview", "--cwd", "{d}/missing"], "--cwd", "gpuinfra project folder"),
    (["preview", "--cwd", "{d}/a-file"], "--cwd", "gpuinfra project folder"),
    (["preview", "--cwd", "{d}/empty"], "--cwd", "gpuinfra project folder"),
    (["preview", "--cwd", "{d}/pulumi-only"], "--cwd", "gpuinfra project folder"),
    (["preview", "--cwd", "{d}/broken-pulumi-yaml"], "Pulumi.yaml", "not valid YAML: line"),
    (["preview", "--cwd", "{d}/pulumi-yaml-list"], "Pulumi.yaml", "expected a mapping"),
    (["preview", "--cwd", "{d}/broken-stack"], "Pulumi.dev.yaml", "not valid YAML: line"),
    (["preview", "--cwd", "{d}/stack-config-list"], "Pulumi.dev.yaml", "expected a mapping"),
    (
        ["preview", "--cwd", "{d}/stack-number-key"],
        "Pulumi.dev.yaml",
        "config key 1; expected text",
    ),
    (["preview", "--stack", "nope"], "no stack 'nope'", "stacks here"),
    (["preview", "--stack", "../etc/passwd"], "--stack", "expected a stack name"),
    (["preview", "--format", "html"], "--format", "choose from"),
    # preview --diff: the base plan
    (["preview", "--diff", "{d}/missing.json"], "--diff", "--diff-missing new"),
    (["preview", "--diff", "{d}/base-folder"], "--diff", "no dev.json in that folder"),
    (["preview", "--diff", "{d}/all-doc.json"], "--diff", "has no 'dev'"),
    (["preview", "--diff", "{d}/all-doc-bad.json"], "--diff", "`stacks` is not an object"),
    (["preview", "--diff", "{d}/not-json.json"], "--diff", "not valid JSON (line 2"),
    (["preview", "--diff", "{d}/list.json"], "--diff", "gpuinfra preview --json"),
    (["preview", "--diff", "{d}/no-resources.json"], "--diff", "no `resources` list"),
    (["preview", "--diff", "{d}/binary.json"], "--diff", "not text"),
    (
        ["preview", "--plan", "{d}/empty-plan.json", "--diff", "{d}/bad-totals.json"],
        "--diff",
        "`cost.totals`",
    ),
    (
        ["preview", "--plan", "{d}/empty-plan.json", "--diff", "{d}/wrong-input-type.json"],
        "--diff",
        "cannot be analysed",
    ),
    (["preview", "--diff-missing", "new"], "--diff-missing", "--diff BASE"),
    # preview --plan: a saved plan
    (["preview", "--plan", "{d}/missing.json"], "--plan", "no such file"),
    (["preview", "--plan", "{d}/empty"], "--plan", "not a file"),
    (["preview", "--plan", "{d}/not-json.json"], "--plan", "not valid JSON"),
    (["preview", "--plan", "{d}/no-urn.json"], "--plan", "resources[0].urn"),
    (["preview", "--plan", "{d}/binary.json"], "--plan", "not text"),
    (["preview", "--plan", "{d}/wrong-input-type.json"], "--plan", "cannot be analysed"),
    (["preview", "--plan", "{d}/empty-plan.json", "--all"], "--plan", "one saved plan, or --all"),
    # preview --out: a folder to write
    (["preview", "--out", "{d}/a-file"], "--out", "is a file, not a folder"),
    (["preview", "--out", "{d}/a-file/sub"], "--out", "is a file, not a folder"),
    (
        ["preview", "--plan", "{d}/empty-plan.json", "--out", "{d}/out-stack-is-file"],
        "--out",
        "a folder to write the reports into",
    ),
    # sizing: every numeric option
    (["sizing", "--params", "0"], "--params", "greater than 0"),
    (["sizing", "--params=-3e8"], "--params", "greater than 0"),
    (["sizing", "--params", "nan"], "--params", "greater than 0"),
    (["sizing", "--params", "inf"], "--params", "greater than 0"),
    (["sizing", "--params", "3e20"], "--params", "at most 1e+15"),
    (["sizing", "--params", "lots"], "--params", "greater than 0"),
    (["sizing"], "--params", "required"),
    (["sizing", "--params", "3e8", "--batch", "0"], "--batch", "whole number from 1"),
    (["sizing", "--params", "3e8", "--batch", "1.5"], "--batch", "whole number from 1"),
    (["sizing", "--params", "3e8", "--seq-len", "-2048"], "--seq-len", "whole number from 1"),
    (["sizing", "--params", "3e8", "--seq-len", "9" * 400], "--seq-len", "whole number from 1"),
    (["sizing", "--params", "3e8", "--layers", "0"], "--layers", "whole number from 1"),
    (["sizing", "--params", "3e8", "--hidden", "-64"], "--hidden", "whole number from 1"),
    (["sizing", "--params", "3e8", "--heads", "x"], "--heads", "whole number from 1"),
    (["sizing", "--params", "3e8", "--cloud", "gcp"], "--cloud", "choose from"),
    (["sizing", "--params", "3e8", "--cwd", "{d}/empty"], "--cwd", "gpuinfra project folder"),
    (["sizing", "--params", "3e8", "--stack", "k8s dev"], "--stack", "expected a stack name"),
    (["sizing", "--params", "3e8", "--stack", "k8s-dev"], "--stack 'k8s-dev'", "existing cluster"),
    (["sizing", "--params", "3e8", "--rate", "7.1"], "--rate", "BASE/QUOTE=RATE@DATE"),
    (["sizing", "--params", "3e8", "--rate", "USD/CNY=7.1@2026-13-01"], "--rate", "not a date"),
    (["sizing", "--params", "3e8", "--currency", "EUR"], "--currency", "choose from"),
    # prices (the refresh: every check before any call to a cloud)
    (["prices", "--stack", "nope"], "no stack 'nope'", "stacks here"),
    (["prices", "--stack", "k8s-dev"], "--stack 'k8s-dev'", "a stack on aws, alicloud"),
    (["prices", "--cwd", "{d}/empty"], "--cwd", "gpuinfra project folder"),
    (["prices", "--out", "{d}/empty"], "--out", "is a folder, not a file"),
    (["prices", "--out", "{d}/not-json.json"], "not-json.json", "not valid JSON (line 2"),
    (["prices", "--instance-type", "g5 xlarge"], "--instance-type", "an instance type name"),
    (["prices", "--currency", "EUR"], "--currency", "choose from"),
    # render
    (["render", "--out", "{d}/a-file"], "--out", "is a file, not a folder"),
    (["render", "--check", "--out", "{d}/a-file/k8s"], "--out", "is a file, not a folder"),
    (["render", "--cwd", "{d}/empty"], "--cwd", "gpuinfra project folder"),
    (["render", "--stack", "k8s dev"], "--stack", "expected a stack name"),
    # policy-config
    (["policy-config", "--out", "{d}/empty"], "--out", "is a folder, not a file"),
    (["policy-config", "--out", "{d}/a-file/config.json"], "--out", "is a file, not a folder"),
    (["policy-config", "--stack", "nope"], "no stack 'nope'", "stacks here"),
    (["policy-config", "--cwd", "{d}/pulumi-only"], "--cwd", "gpuinfra project folder"),
    # reachability
    (["reachability", "--from-ip", "nope"], "--from-ip 'nope'", "an address such as"),
    (["reachability", "--stack", "nope"], "no stack 'nope'", "stacks here"),
    (["reachability", "--cwd", "{d}/pulumi-only"], "--cwd", "gpuinfra project folder"),
    # schema
    (["schema", "--cwd", "{d}/missing"], "--cwd", "gpuinfra project folder"),
    (["schema", "--cwd", "{d}/no-readme"], "README.md", "No such file"),
    (["schema", "--cwd", "{d}/readme-without-markers"], "README.md", "config reference markers"),
    # the command itself
    ([], "COMMAND", "gpuinfra --help"),
    (["deploy"], "deploy", "invalid choice"),
]


@pytest.mark.parametrize(("argv", "names", "expected"), BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_invocation_is_one_line_exit_2(
    run, files: Path, argv: list[str], names: str, expected: str
) -> None:
    argv = [a.replace("{d}", str(files)) for a in argv]
    done = run(*argv)
    assert done.code == cli_errors.EXIT_INVALID, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert names in lines[0] and expected in lines[0], lines[0]
    value = next((a for a in reversed(argv) if a.startswith(str(files))), None)
    if value is not None:  # the value the user gave is named, as given
        assert repr(value) in lines[0] or value in lines[0], lines[0]
    assert done.stdout == ""


def test_the_table_covers_every_subcommand_path_and_numeric_option() -> None:
    parser = cli.build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    covered = {
        (argv[0], arg) for argv, _, _ in BAD if argv for arg in argv[1:] if arg.startswith("--")
    }
    for name, command in sub.choices.items():
        for action in command._actions:
            option = action.option_strings[-1] if action.option_strings else None
            takes_value = action.nargs != 0 and option not in (None, "-h", "--help")
            if takes_value and action.choices is None:  # paths, numbers, names
                assert (name, max(action.option_strings, key=len)) in covered, (name, option)
    assert len(BAD) >= 24


def test_unwritable_out_folder_is_named(run, files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run as root here, where every folder is writable: the check's answer is faked."""
    monkeypatch.setattr(cli_errors.os, "access", lambda path, mode: False)
    done = run("preview", "--plan", f"{files}/empty-plan.json", "--out", f"{files}/empty/out")
    assert done.code == 2 and done.stderr.count("\n") == 1
    assert f"--out '{files}/empty/out': no permission to write in {files}/empty" in done.stderr


def test_a_bug_keeps_its_traceback_and_exits_70(run, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuinfra import sizing

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug, not a mistake")

    monkeypatch.setattr(sizing, "estimate_memory", broken)
    done = run("sizing", "--params", "3e8")
    assert done.code == cli_errors.EXIT_INTERNAL == 70
    assert "Traceback (most recent call last)" in done.stderr
    assert "RuntimeError: a bug, not a mistake" in done.stderr
    assert "internal error (exit 70)" in done.stderr.splitlines()[-1]


def test_a_bug_in_the_program_exits_70_not_1_or_2(run, tmp_path: Path) -> None:
    project = _project(tmp_path / "p", {"__main__.py": "raise RuntimeError('program bug')\n"})
    done = run("preview", "--cwd", str(project))
    assert done.code == 70 and "RuntimeError: program bug" in done.stderr


def test_ctrl_c_exits_130(run, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuinfra import sizing

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sizing, "estimate_memory", interrupted)
    done = run("sizing", "--params", "3e8")
    assert done.code == 130 and done.stderr == "interrupted\n"


def test_diff_missing_new_means_no_base(run, files: Path) -> None:
    base = f"{files}/base-folder"
    done = run(
        "preview", "--plan", f"{files}/one-resource.json", "--diff", base, "--diff-missing", "new"
    )
    assert done.code == 0, done.stderr
    assert "Diff against base: 1 added, 0 removed, 0 changed" in done.stdout
    assert f"note: --diff {base!r} has no plan for stack 'dev'" in done.stderr
    # A base that is there is read as usual, with or without the option.
    same = run(
        "preview",
        "--plan",
        f"{files}/one-resource.json",
        "--diff",
        f"{files}/one-resource.json",
        "--diff-missing",
        "new",
    )
    assert same.code == 0 and "0 added, 0 removed, 0 changed" in same.stdout and same.stderr == ""


def test_help_lists_the_exit_codes(run) -> None:
    for argv in (
        [],
        ["preview"],
        ["sizing"],
        ["prices"],
        ["render"],
        ["policy-config"],
        ["schema"],
    ):
        done = run(*argv, "--help")
        assert done.code == 0
        for code in (0, 1, 2, 70, 130, 141):
            assert f"\n  {code} " in done.stdout, (argv, code)


def test_readme_lists_the_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text()
    for code in (0, 1, 2, 70, 130, 141):
        assert f"\n| {code} | " in readme, code
    assert "--diff-missing new" in readme


# Through the real console script: what a user and CI see.
CONSOLE = [
    (["preview", "--diff", "{d}/not-json.json"], "--diff"),
    (["preview", "--cwd", "{d}/empty"], "--cwd"),
    (["render", "--out", "{d}/a-file"], "--out"),
    (["policy-config", "--out", "{d}/empty"], "--out"),
    (["sizing", "--params", "0"], "--params"),
]


@pytest.mark.parametrize(("argv", "names"), CONSOLE, ids=[" ".join(a) for a, _ in CONSOLE])
def test_console_script(files: Path, argv: list[str], names: str) -> None:
    argv = [a.replace("{d}", str(files)) for a in argv]
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and names in done.stderr


def test_console_script_outside_a_project(files: Path) -> None:
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "preview"],
        cwd=files / "empty",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        "error: --cwd '.': no Pulumi.yaml, __main__.py or components/ there; expected a gpuinfra "
        "project folder (Pulumi.yaml, __main__.py, components/): run gpuinfra there or point "
        "--cwd at it\n"
    )


def test_console_script_bug_exits_70(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", {"__main__.py": "raise RuntimeError('program bug')\n"})
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "preview", "--cwd", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 70
    assert "Traceback" in done.stderr and "RuntimeError: program bug" in done.stderr


def test_console_script_closed_pipe_exits_141(files: Path) -> None:
    """`gpuinfra ... | head -c 1`: the reader leaves early (the JSON is far beyond a pipe's
    buffer); the exit says so, with no traceback."""
    done = subprocess.run(
        f"set -o pipefail; {CONSOLE_SCRIPT} preview --plan {files}/big-plan.json --json | head -c 1",
        shell=True, executable="/bin/bash", cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout == "{"
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
