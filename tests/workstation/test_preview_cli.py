"""`gpuinfra preview` with the workstation on: listed, token never printed; bad input exits 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import SSH_KEY

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path, stack: str, extra: dict[str, object]) -> Path:
    """A copy of the project whose stack file turns the workstation on."""
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    for folder in ("components", "stacks"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    config["config"].update({f"gpuinfra:{k}": v for k, v in extra.items()})
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def _preview(root: Path, stack: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--cwd", str(root), "--stack", stack, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("stack", ["dev", "alicloud-dev", "tencentcloud-dev"])
def test_preview_lists_it_and_how_to_reach_it(tmp_path: Path, stack: str) -> None:
    """The outputs say how to reach it (tunnel, token over SSH); no token exists to print."""
    root = _project(
        tmp_path, stack, {"workstationEnabled": True, "workstationSshPublicKey": SSH_KEY}
    )
    text = _preview(root, stack)
    assert text.returncode == 0, text.stderr
    assert "GpuWorkstation" in text.stdout and "workstation-role" in text.stdout
    assert "workstationTunnelCommand: ssh -N -L 8888:127.0.0.1:8888 -L 6006:127.0.0.1:6006 " in (
        text.stdout
    )
    assert "workstationJupyterUrl: http://localhost:8888/lab" in text.stdout
    assert "workstationJupyterTokenCommand: ssh " in text.stdout
    plan = _preview(root, stack, "--json")
    assert plan.returncode == 0, plan.stderr
    assert "RandomPassword" not in plan.stdout and "JUPYTER_TOKEN=" not in plan.stdout


def test_cpu_type_exits_2_naming_the_key(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        "dev",
        {
            "workstationEnabled": True,
            "workstationSshPublicKey": SSH_KEY,
            "workstationInstanceType": "m6i.large",
        },
    )
    result = _preview(root, "dev")
    assert result.returncode == 2
    assert "gpuinfra:workstationInstanceType" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_missing_key_exits_2_naming_the_key(tmp_path: Path) -> None:
    root = _project(tmp_path, "dev", {"workstationEnabled": True})
    result = _preview(root, "dev")
    assert result.returncode == 2
    assert "gpuinfra:workstationSshPublicKey" in result.stdout + result.stderr
