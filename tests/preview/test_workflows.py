# ruff: noqa: E501
"""The GitHub Actions workflows: schema-valid and free of zizmor findings, checked offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def test_workflows_exist() -> None:
    assert {p.name for p in WORKFLOWS} >= {"preview.yml", "deploy.yml"}


def test_schema_valid() -> None:
    result = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_offline_clean() -> None:
    result = subprocess.run(
        [str(BIN / "zizmor"), "--offline", str(ROOT / ".github" / "workflows")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_preview_runs_offline_with_diff_and_cloud_only_with_oidc() -> None:
    wf = yaml.safe_load((ROOT / ".github/workflows/preview.yml").read_text())
    steps = "\n".join(str(s.get("run", "")) for s in wf["jobs"]["offline"]["steps"])
    assert "--diff base-plans" in steps and "--format markdown" in steps
    assert "GITHUB_STEP_SUMMARY" in steps
    cloud = wf["jobs"]["cloud"]
    assert "vars.AWS_ROLE_ARN" in cloud["if"] and cloud["permissions"]["id-token"] == "write"
    assert any("pulumi/actions" in s.get("uses", "") for s in cloud["steps"])


def test_deploy_is_behind_an_environment() -> None:
    wf = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())
    assert wf[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads `on` as True
    assert wf["jobs"]["up"]["environment"] == "${{ matrix.stack }}"


def test_every_policy_run_gets_the_stacks_opt_ins() -> None:
    """The pack cannot read stack config: each pulumi/actions step with the pack is handed
    the file `gpuinfra policy-config` writes for that stack, in an earlier step."""
    seen = 0
    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            steps = job.get("steps", [])
            for i, step in enumerate(steps):
                given = step.get("with", {})
                if "pulumi/actions" not in step.get("uses", "") or "policyPacks" not in given:
                    continue
                seen += 1
                config = given.get("policyPackConfigs")
                assert config, f"{path.name}: policyPacks without policyPackConfigs"
                earlier = "\n".join(str(s.get("run", "")) for s in steps[:i])
                assert "gpuinfra policy-config" in earlier and f"--out {config}" in earlier
    assert seen == 2  # preview (cloud job) and deploy
