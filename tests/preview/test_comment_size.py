"""The PR comment for the biggest realistic change stays under GitHub's limit and says what it
cut: renaming `namePrefix` on every stack replaces every resource of every stack."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from gpuinfra.report import COMMENT_LIMIT, fit_comment
from tests.conftest import ROOT

_PROJECT = ("Pulumi.yaml", "__main__.py", "components", "stacks")


def _gpuinfra(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuinfra", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def renamed_comment(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("rename")
    head, base = tmp / "head", tmp / "base-plans"
    base.mkdir()
    head.mkdir()
    for name in _PROJECT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, head / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, head / name)
    stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))
    for stack in stacks:
        text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
        assert "gpuinfra:namePrefix" not in text  # the shipped stacks use the default
        (head / f"Pulumi.{stack}.yaml").write_text(
            text.replace("config:\n", "config:\n  gpuinfra:namePrefix: mlplatform-training\n", 1)
        )
        plan = _gpuinfra("preview", "--cwd", str(ROOT), "--stack", stack, "--json")
        assert plan.returncode in (0, 1), plan.stderr
        (base / f"{stack}.json").write_text(plan.stdout)
    env = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "example/gpuinfra",
        "GITHUB_RUN_ID": "42",
    }
    result = _gpuinfra(
        "preview", "--cwd", str(head), "--all", "--diff", str(base), "--format", "markdown",
        "--out", str(tmp / "out"), env=env,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    assert (tmp / "out" / "dev" / "diff.json").is_file()  # the full plan the note points to
    return result.stdout


def test_renamed_prefix_comment_fits_and_says_what_it_cut(renamed_comment: str) -> None:
    body = "<!-- gpuinfra-preview -->\n" + renamed_comment  # as the workflow posts it
    assert len(body) < COMMENT_LIMIT
    assert "Shortened to fit GitHub's 65,536-character comment limit" in body
    assert "Cut: the input-by-input changes" in body or "Cut: the lists of added" in body
    assert "https://github.com/example/gpuinfra/actions/runs/42" in body
    assert "<!--gpuinfra:cut" not in body
    # What matters survives the cut: each stack's counts, blocked deletes and cost delta.
    shipped = len(list(ROOT.glob("Pulumi.*.yaml")))
    assert shipped >= 5 and body.count("#### Changes against the base branch") == shipped
    assert "removed" in body and "BLOCKED" in body and "Cost delta (estimate)" in body


def test_small_comments_are_not_cut() -> None:
    marked = '<!--gpuinfra:cut level=1 summary="(cut)"-->\nline\n<!--gpuinfra:cut end level=1-->\n'
    assert fit_comment("# stack\n" + marked) == "# stack\nline\n"


def test_cuts_the_finest_detail_first() -> None:
    def block(level: int, body: str) -> str:
        return (
            f'<!--gpuinfra:cut level={level} summary="(cut {level})"-->\n{body}\n'
            f"<!--gpuinfra:cut end level={level}-->\n"
        )

    text = block(2, "- resource\n" + block(1, "x" * 3000)) + block(3, "y" * 500)
    fitted = fit_comment(text, budget=1500)
    assert "(cut 1)" in fitted and "- resource" in fitted and "y" * 500 in fitted
    assert len(fitted) <= 1500
