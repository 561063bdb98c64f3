"""`gpuinfra preview` as a user runs it: a subprocess, exit codes, stdout and stderr."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def gpuinfra(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuinfra", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def dev_json() -> dict:
    result = gpuinfra("preview", "--stack", "dev", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_tree_lists_every_component_and_a_count() -> None:
    result = gpuinfra("preview", "--stack", "dev")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for fragment in (
        "pulumi:pulumi:Stack",
        "gpuinfra:aws:Network",
        "aws:eks:Cluster",
        "aws:eks:NodeGroup",
        "gpuinfra-dev-small-nodes",
        "gpuinfra-dev-large-nodes",
        "aws:s3:Bucket",
        "[protected]",
        "aws:iam:OpenIdConnectProvider",
        "kubeconfig: [secret]",
    ):
        assert fragment in out, fragment
    count = int(out.split("+ ")[-1].split(" to create")[0])
    assert count == out.count("\n +   ")


def test_json_plan_shape(dev_json: dict) -> None:
    assert dev_json["stack"] == "dev" and dev_json["cloud"] == "aws"
    resources = dev_json["resources"]
    assert {"urn", "type", "name", "parent", "inputs"} <= set(resources[0])
    [gpu] = [r for r in resources if r["name"] == "gpuinfra-dev-small-nodes"]
    assert gpu["inputs"]["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    parents = {r["urn"] for r in resources}
    assert all(r["parent"] in parents for r in resources if r["type"].startswith("aws:"))
    assert dev_json["outputs"]["kubeconfig"] == "[secret]"


def test_json_plan_is_stable(dev_json: dict) -> None:
    again = json.loads(gpuinfra("preview", "--stack", "dev", "--json").stdout)
    assert again == dev_json


def test_prod_preview() -> None:
    result = gpuinfra("preview", "--stack", "prod", "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    types = [r["type"] for r in plan["resources"]]
    assert types.count("aws:ec2/natGateway:NatGateway") == 3


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def _write_stack(project: Path, stack: str, changes: dict[str, object]) -> None:
    config = yaml.safe_load((project / "Pulumi.dev.yaml").read_text())["config"]
    config.update(changes)
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))


def test_cwd_option_and_a_users_own_stack(
    project_copy: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    pools = [{"name": "gpu", "instanceType": "p5.48xlarge", "capacityType": "onDemand"}]
    _write_stack(project_copy, "mine", {"gpuinfra:gpuPools": pools})
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = gpuinfra(
        "preview", "--stack", "mine", "--cwd", str(project_copy), "--json", cwd=elsewhere
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    [gpu] = [r for r in plan["resources"] if r["name"] == "gpuinfra-mine-gpu-nodes"]
    assert gpu["inputs"]["instanceTypes"] == ["p5.48xlarge"]


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"gpuinfra:cloud": "gcp"}, "gpuinfra:cloud"),
        ({"gpuinfra:gpuPoolInstanceType": "x1.huge"}, "gpuinfra:gpuPoolInstanceType"),
        ({"gpuinfra:gpuPoolMinNodes": 3}, "gpuinfra:gpuPoolMinNodes"),
        ({"gpuinfra:adminCidrs": ["0.0.0.0/0"]}, "gpuinfra:adminCidrs"),
        ({"gpuinfra:vpcCidr": "10.0.0.0/99"}, "gpuinfra:vpcCidr"),
        (
            {"gpuinfra:privateSubnetCidrs": ["10.0.0.0/19", "10.0.0.0/20"]},
            "gpuinfra:privateSubnetCidrs",
        ),
        ({"gpuinfra:bucketName": "UPPER"}, "gpuinfra:bucketName"),
        ({"gpuinfra:kubernetesVersion": "1.30"}, "gpuinfra:kubernetesVersion"),
    ],
)
def test_bad_setting_exits_2_naming_the_key(project_copy: Path, changes: dict, key: str) -> None:
    _write_stack(project_copy, "bad", changes)
    result = gpuinfra("preview", "--stack", "bad", "--cwd", str(project_copy))
    assert result.returncode == 2
    assert result.stdout == ""
    assert key in result.stderr
    assert "Traceback" not in result.stderr


def test_several_mistakes_are_all_named(project_copy: Path) -> None:
    changes = {
        "gpuinfra:cloud": "gcp",
        "gpuinfra:gpuPoolMinNodes": 9,
        "gpuinfra:bucketName": "UPPER",
        "gpuinfra:kubernetesVersion": "1.20",
    }
    _write_stack(project_copy, "bad", changes)
    result = gpuinfra("preview", "--stack", "bad", "--cwd", str(project_copy))
    assert result.returncode == 2
    for key in changes:
        assert key in result.stderr
    assert "(4 problems)" in result.stderr


def test_unknown_stack_exits_2() -> None:
    result = gpuinfra("preview", "--stack", "nope")
    assert result.returncode == 2
    assert "no stack 'nope'" in result.stderr and "dev" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_project_exits_2(tmp_path: Path) -> None:
    result = gpuinfra("preview", "--cwd", str(tmp_path))
    assert result.returncode == 2 and "no Pulumi.yaml" in result.stderr


def test_console_script_is_declared() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["gpuinfra"] == "gpuinfra.cli:main"
