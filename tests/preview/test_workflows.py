# ruff: noqa: E501
"""The GitHub Actions workflows: schema-valid and free of zizmor findings, checked offline;
each job deploys from where its stack's API endpoint answers, with the role meant for it; and
each step that runs the policy pack would find the pack's packages, shown by making the venv
the workflow makes and starting the pack from it the way Pulumi's analyzer does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent
PACK = "policy"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def pulumi_steps() -> Iterator[tuple[str, str, dict[str, Any], list[dict[str, Any]], int]]:
    """(workflow, job id, job, steps, index) of every pulumi/actions step."""
    for path in WORKFLOWS:
        for job_id, job in yaml.safe_load(path.read_text())["jobs"].items():
            steps = job.get("steps", [])
            for i, step in enumerate(steps):
                if "pulumi/actions" in step.get("uses", ""):
                    yield path.name, job_id, job, steps, i


def runs(steps: list[dict[str, Any]]) -> str:
    return "\n".join(str(s.get("run", "")) for s in steps)


def pack_virtualenv() -> str:
    """The venv the analyzer starts the pack from: `<pack>/<runtime.options.virtualenv>`."""
    runtime = yaml.safe_load((ROOT / PACK / "PulumiPolicy.yaml").read_text())["runtime"]
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    venv = options.get("virtualenv")
    # Without it Pulumi runs the pack with the runner's bare python3 (pulumi/pulumi
    # sdk/python/cmd/pulumi-language-python/main.go RunPlugin; parseOptions gives analyzers no
    # default venv), which has neither pulumi nor pulumi-policy.
    assert venv, "policy/PulumiPolicy.yaml names no runtime.options.virtualenv"
    return f"{PACK}/{venv}"


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


def test_preview_runs_offline_with_diff_and_cloud_only_with_the_read_only_role() -> None:
    wf = load("preview.yml")
    steps = runs(wf["jobs"]["offline"]["steps"])
    assert "--diff base-plans" in steps and "--format markdown" in steps
    assert "GITHUB_STEP_SUMMARY" in steps
    cloud = wf["jobs"]["cloud"]
    assert (
        "vars.AWS_PREVIEW_ROLE_ARN" in cloud["if"] and cloud["permissions"]["id-token"] == "write"
    )
    assert "environment" not in cloud  # the deploy environments' role never reaches a PR
    [credentials] = [s for s in cloud["steps"] if "configure-aws-credentials" in s.get("uses", "")]
    assert credentials["with"]["role-to-assume"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}"
    [preview] = [s for s in cloud["steps"] if "pulumi/actions" in s.get("uses", "")]
    assert preview["with"]["command"] == "preview"


def test_deploy_roles_only_in_protected_environments() -> None:
    """The deploy role's variable lives in the dev/prod environments; any job naming it must
    run in one (and so wait for its reviewers), and no workflow uses a repository-wide role."""
    for path in WORKFLOWS:
        text = path.read_text()
        assert "vars.AWS_ROLE_ARN" not in text, path.name
        for job_id, job in yaml.safe_load(text)["jobs"].items():
            if "AWS_DEPLOY_ROLE_ARN" in yaml.safe_dump(job):
                assert job.get("environment") in ("dev", "prod"), f"{path.name}:{job_id}"
    deploy = load("deploy.yml")
    assert deploy[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads `on` as True


def test_each_stack_deploys_from_where_its_endpoint_answers() -> None:
    """REACHABILITY item 6: dev on a runner in adminCidrs after a preflight, prod (cluster
    only) on a hosted runner, prod-gpu inside prod's VPC after prod."""
    jobs = load("deploy.yml")["jobs"]
    stacks = {}
    for job_id, job in jobs.items():
        for step in job["steps"]:
            if "pulumi/actions" in step.get("uses", ""):
                assert step["with"]["command"] == "up"
                assert step["with"]["upsert"] is True, job_id  # a new stack is created
                stacks[step["with"]["stack-name"]] = job_id
    assert set(stacks) == {"dev", "prod", "prod-gpu"}
    dev, prod, gpu = (jobs[stacks[s]] for s in ("dev", "prod", "prod-gpu"))
    assert dev["runs-on"] == "${{ vars.GPUINFRA_DEV_RUNNER || 'ubuntu-latest' }}"
    assert prod["runs-on"] == "ubuntu-latest"
    assert gpu["runs-on"] == ["self-hosted", "gpuinfra-prod"]
    assert gpu["needs"] == stacks["prod"]
    for job in (dev, prod, gpu):
        names = [s.get("uses", "") + str(s.get("run", "")) for s in job["steps"]]
        preflight = next(i for i, n in enumerate(names) if "gpuinfra reachability" in n)
        up = next(i for i, n in enumerate(names) if "pulumi/actions" in n)
        assert preflight < up and '--stack "$STACK"' in names[preflight]
        assert '--from-ip "$address"' in names[preflight]
    shipped = {
        p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml")
    }
    # prod-gpu (cloud: kubernetes, clusterStack: <org>/gpuinfra/prod) ships with the GPU-layer
    # issue's gpuLayer/clusterStack settings.
    assert {"dev", "prod"} <= shipped


def test_every_policy_run_gets_the_stacks_opt_ins() -> None:
    """The pack cannot read stack config: each pulumi/actions step with the pack is handed
    the file `gpuinfra policy-config` writes for that stack, in an earlier step."""
    seen = 0
    for name, _, _, steps, i in pulumi_steps():
        given = steps[i].get("with", {})
        if "policyPacks" not in given:
            continue
        seen += 1
        config = given.get("policyPackConfigs")
        assert config, f"{name}: policyPacks without policyPackConfigs"
        earlier = runs(steps[:i])
        assert "gpuinfra policy-config" in earlier and f"--out {config}" in earlier
    assert seen == 4  # preview: one matrix job (dev, prod); deploy: dev, prod, prod-gpu


def test_every_pulumi_step_finds_the_program_and_pack_venvs() -> None:
    """Before each pulumi/actions step: the program's venv (Pulumi.yaml's virtualenv) with
    requirements.txt, and the pack's (PulumiPolicy.yaml's) with policy/requirements.txt.
    PULUMI_PYTHON_CMD is read by neither once a virtualenv is named, so it is not set."""
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    program_venv = project["runtime"]["options"]["virtualenv"]
    pack_venv = pack_virtualenv()
    checked = 0
    for name, job_id, job, steps, i in pulumi_steps():
        earlier = runs(steps[:i])
        where = f"{name}:{job_id}"
        assert f"python -m venv {program_venv}" in earlier, where
        assert f"{program_venv}/bin/pip install -q -r requirements.txt" in earlier, where
        if "policyPacks" in steps[i].get("with", {}):
            assert steps[i]["with"]["policyPacks"] == PACK
            assert f"python -m venv {pack_venv}" in earlier, where
            assert f"{pack_venv}/bin/pip install -q -r {PACK}/requirements.txt" in earlier, where
        assert "PULUMI_PYTHON_CMD" not in yaml.safe_dump(job), where
        checked += 1
    assert checked == 4


def _pack_venv_command() -> str:
    """The run line every workflow uses to make the pack's venv (one line, the same in all)."""
    lines = {
        str(step["run"])
        for _, _, _, steps, i in pulumi_steps()
        for step in steps[:i]
        if f"-m venv {pack_virtualenv()}" in str(step.get("run", ""))
    }
    assert len(lines) == 1, lines
    return lines.pop()


@pytest.fixture(scope="module")
def runner_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout as the runner has it (the pack plus the project code it imports), after the
    workflow's own step made the pack's venv, with `python` being a plain interpreter."""
    root = tmp_path_factory.mktemp("runner")
    shutil.copytree(ROOT / PACK, root / PACK, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    for package in ("gpuinfra", "components"):
        shutil.copytree(
            ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(getattr(sys, "_base_executable", sys.executable))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _pack_venv_command()],
        cwd=root, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def _start_pack(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    """As Pulumi's Python host starts an analyzer: `<venv>/bin/python -u -m pulumi.policy
    <engine address> <pack dir>` in the pack's directory; the pack answers with its port."""
    pack_dir = root / PACK
    python = root / pack_virtualenv() / "bin" / "python"
    process = subprocess.Popen(
        [str(python), "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(pack_dir)],
        cwd=pack_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    line = b""
    while time.monotonic() < deadline and not line:
        line = process.stdout.readline()
        if process.poll() is not None:
            break
    if not line.strip().isdigit():
        process.kill()
        _, err = process.communicate(timeout=10)
        pytest.fail(f"the pack did not start from its venv: {line!r} {err.decode()[-2000:]}")
    return process, int(line)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def test_pack_starts_from_the_venv_the_workflow_makes(runner_checkout: Path) -> None:
    process, port = _start_pack(runner_checkout)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=60)
            assert info.name == "gpuinfra"
            assert "bucket-encrypted" in {p.name for p in info.policies}
            bucket = analyzer_pb2.AnalyzerResource(
                type="aws:s3/bucket:Bucket",
                properties=_struct({"bucket": "data"}),
                urn="urn:pulumi:dev::gpuinfra::aws:s3/bucket:Bucket::data",
                name="data",
                options=analyzer_pb2.AnalyzerResourceOptions(protect=True),
            )
            response = analyzer.AnalyzeStack(
                analyzer_pb2.AnalyzeStackRequest(resources=[bucket]), timeout=60
            )
        found = {d.policyName for d in response.diagnostics}
        assert "bucket-encrypted-stack" in found, found
    finally:
        process.kill()
        process.communicate(timeout=10)


def test_pack_venv_command_is_the_documented_one() -> None:
    command = _pack_venv_command()
    assert re.fullmatch(
        r"python -m venv policy/venv && policy/venv/bin/pip install -q -r policy/requirements\.txt",
        command.strip(),
    ), command


def _gpuinfra_invocations() -> Iterator[tuple[str, list[str]]]:
    """(workflow, argv) of every `gpuinfra ...` command the workflows run, continuation
    lines joined and shell variables replaced by a placeholder word."""
    import shlex

    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            for step in job.get("steps", []):
                script = str(step.get("run", "")).replace("\\\n", " ")
                for line in script.splitlines():
                    match = re.search(r"(?:\.venv/bin/gpuinfra|-m gpuinfra)\s+(.*)", line)
                    if not match:
                        continue
                    command = re.split(r"\s(?:>>?|\|\|?|&&)\s", match.group(1))[0]
                    command = re.sub(r'"?\$\{?\w+\}?"?', "X", command)
                    yield path.name, shlex.split(command)


def test_every_gpuinfra_command_in_the_workflows_parses() -> None:
    """A renamed or removed option would only fail on GitHub: parse each one here."""
    import argparse

    from gpuinfra.cli import build_parser

    seen = list(_gpuinfra_invocations())
    assert any("--diff-missing" in argv for _, argv in seen), seen
    for workflow, argv in seen:
        try:
            build_parser().parse_args(argv)
        except (SystemExit, argparse.ArgumentError) as error:  # the parser refused it
            raise AssertionError(f"{workflow}: gpuinfra {' '.join(argv)}") from error
