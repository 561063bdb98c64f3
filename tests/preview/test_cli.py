# ruff: noqa: E501  (long literal argument lists)
"""`gpuinfra preview` for pull requests and `gpuinfra sizing`, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def gpuinfra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuinfra", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = gpuinfra("preview", "--stack", "dev", "--json")
    assert result.returncode == 0, result.stderr
    path = tmp_path_factory.mktemp("plans") / "dev.json"
    path.write_text(result.stdout)
    return path


def test_markdown_shows_resources_cost_findings() -> None:
    result = gpuinfra("preview", "--stack", "dev", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for fragment in ("### gpuinfra preview: `dev`", "resources**", "#### Cost estimate",
                     "g5.xlarge (spot)", "Estimate, USD, prices dated", "#### Policy findings"):  # fmt: skip
        assert fragment in out, fragment


def test_json_has_cost_and_policy(dev_plan: Path) -> None:
    doc = json.loads(dev_plan.read_text())
    assert doc["cost"]["estimate"] is True and doc["cost"]["totals"]["monthly"] > 0
    assert doc["policy"]["mandatory"] == 0
    pools = json.loads(doc["config"]["gpuinfra:gpuPools"])
    assert [(p["name"], p["instanceType"]) for p in pools] == [
        ("small", "g5.xlarge"),
        ("large", "g5.12xlarge"),
    ]


def test_hand_edited_plan_without_encryption_exits_1(dev_plan: Path, tmp_path: Path) -> None:
    doc = json.loads(dev_plan.read_text())
    doc["resources"] = [r for r in doc["resources"] if "ServerSideEncryption" not in r["type"]]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    result = gpuinfra("preview", "--plan", str(edited))
    assert result.returncode == 1, result.stdout
    assert "[mandatory] bucket-encrypted" in result.stdout
    assert gpuinfra("preview", "--plan", str(dev_plan)).returncode == 0


def test_diff_against_itself(dev_plan: Path) -> None:
    result = gpuinfra("preview", "--stack", "dev", "--diff", str(dev_plan))
    assert result.returncode == 0, result.stderr
    assert "0 added, 0 removed, 0 changed" in result.stdout


def test_out_writes_reports(tmp_path: Path) -> None:
    result = gpuinfra("preview", "--all", "--out", str(tmp_path), "--format", "markdown")
    assert result.returncode == 0, result.stderr
    for stack in ("dev", "prod"):
        folder = tmp_path / stack
        for name in ("plan.json", "cost.json", "policy.json", "summary.md"):
            assert (folder / name).is_file(), folder / name
        assert (folder / "manifests").is_dir()
        assert json.loads((folder / "plan.json").read_text())["stack"] == stack
    stacks = len(list(ROOT.glob("Pulumi.*.yaml")))
    assert result.stdout.count("### gpuinfra preview:") == stacks


def test_invalid_cost_setting_exits_2(tmp_path: Path) -> None:
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    for folder in ("components", "stacks"):  # a gpuinfra project: the CLI checks for it
        (tmp_path / folder).symlink_to(ROOT / folder)
    text = (ROOT / "Pulumi.dev.yaml").read_text() + "  gpuinfra:costSpotFactor: '1.5'\n"
    (tmp_path / "Pulumi.dev.yaml").write_text(text)
    result = gpuinfra("preview", "--cwd", str(tmp_path), "--stack", "dev")
    assert result.returncode == 2
    assert "gpuinfra:costSpotFactor" in result.stderr and "Traceback" not in result.stderr


def test_sizing_lists_fitting_types_cheapest_first() -> None:
    result = gpuinfra(
        "sizing", "--params", "3e8", "--precision", "bf16", "--cloud", "aws", "--json"
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    prices = [f["per_hour"] for f in doc["fits"]]
    assert prices and prices == sorted(prices)
    assert doc["memory"]["weights_gib"] == pytest.approx(3e8 * 2 / 1024**3)
    assert "ZeRO" in doc["formula"]
