"""The rendered cloud-init: YAML, the GPU check and both services, restarting on failure."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
import yaml

from components.tencentcloud.workstation import COSCLI_CONFIG
from components.workstation_cloud_init import SYNC_STATE_DIR, ubuntu_driver_install
from gpuinfra.engine import Plan

from .conftest import STACKS, USER_DATA, instance, token


def _units(document: dict) -> dict[str, str]:
    return {
        f["path"].rsplit("/", 1)[-1]: f["content"]
        for f in document["write_files"]
        if f["path"].endswith(".service")
    }


@pytest.mark.parametrize("cloud", list(STACKS))
def test_user_data_is_cloud_config_with_both_services(
    ws_plans: dict[str, Plan], cloud: str
) -> None:
    plan = ws_plans[cloud]
    text = instance(plan, cloud).inputs[USER_DATA[cloud]]
    assert text.startswith("#cloud-config\n")
    document = yaml.safe_load(text)
    units = _units(document)
    jupyter, tensorboard = units["gpuinfra-jupyter.service"], units["gpuinfra-tensorboard.service"]
    assert "--port=8888" in jupyter and "Restart=on-failure" in jupyter
    assert "--port 6006" in tensorboard and "Restart=on-failure" in tensorboard
    assert "ExecStart=/usr/bin/nvidia-smi" in units["gpuinfra-gpu-check.service"]
    enable = [c for c in document["runcmd"] if c.startswith("systemctl enable --now")]
    assert enable and all(
        s in enable[0] for s in ("gpuinfra-gpu-check", "gpuinfra-jupyter", "gpuinfra-tensorboard")
    )
    # TensorBoard reads the bucket's tb/ (directly on AWS, through a sync service elsewhere).
    bucket_uri = "s3://" if cloud == "aws" else ("oss://" if cloud == "alicloud" else "cos://")
    where = tensorboard if cloud == "aws" else units["gpuinfra-tb-sync.service"]
    assert bucket_uri in where and "/tb/" in where
    # The token lives in a root-only file, never on a command line.
    token_file = next(
        f for f in document["write_files"] if f["path"] == "/etc/gpuinfra/jupyter.env"
    )
    assert token_file["permissions"] == "0600"
    assert token_file["content"] == f"JUPYTER_TOKEN={token(plan)}\n"
    assert token(plan) not in jupyter
    assert document["ssh_pwauth"] is False


@pytest.mark.parametrize("cloud", list(STACKS))
def test_user_data_is_a_secret_input(ws_plans: dict[str, Plan], cloud: str) -> None:
    assert USER_DATA[cloud] in instance(ws_plans[cloud], cloud).secret_inputs


@pytest.mark.parametrize("cloud", list(STACKS))
def test_services_never_run_as_root(ws_plans: dict[str, Plan], cloud: str) -> None:
    document = yaml.safe_load(instance(ws_plans[cloud], cloud).inputs[USER_DATA[cloud]])
    users = {
        line.removeprefix("User=")
        for unit in _units(document).values()
        for line in unit.splitlines()
        if line.startswith("User=")
    }
    assert users and "root" not in users
    if cloud == "alicloud":  # its images log in as root: a service user is created first
        assert users == {"gpuinfra"}
        assert document["runcmd"][0].endswith("useradd --create-home --shell /bin/bash gpuinfra")


def test_render_refuses_root_services() -> None:
    from components.workstation_cloud_init import CloudInitArgs, render

    args = CloudInitArgs(
        user="root", ssh_public_key="ssh-ed25519 AAAA", tensorboard_logdir="/tb", notebook_dir="/nb"
    )
    with pytest.raises(ValueError, match="root"):
        render(args, "token")
    assert "User=gpuinfra" in render(
        CloudInitArgs(**{**args.__dict__, "service_user": "gpuinfra"}), "token"
    )


@pytest.mark.parametrize("has_driver", [True, False])
def test_driver_install_runs_only_without_a_working_driver(
    tmp_path: Path, has_driver: bool
) -> None:
    """The guarded command, run by sh against stub tools: a no-op on a GPU image."""
    log = tmp_path / "calls"
    for tool, status in [
        ("nvidia-smi", 0 if has_driver else 1),
        ("apt-get", 0),
        ("ubuntu-drivers", 0),
        ("modprobe", 0),
    ]:
        stub = tmp_path / tool
        stub.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\nexit {status}\n')
        stub.chmod(0o755)
    [command] = ubuntu_driver_install("550-server")
    subprocess.run(["sh", "-ec", command], check=True, env={"PATH": f"{tmp_path}:/usr/bin:/bin"})
    calls = log.read_text().splitlines()
    if has_driver:
        assert calls == ["nvidia-smi -L"]
    else:
        assert calls == [
            "nvidia-smi -L",
            "apt-get install -y ubuntu-drivers-common",
            "ubuntu-drivers install --gpgpu nvidia:550-server",
            "apt-get install -y nvidia-utils-550-server",
            "modprobe nvidia",
        ]


@pytest.mark.parametrize("cloud", ["alicloud", "tencentcloud"])
def test_driver_step_and_sync_state_dir(ws_plans: dict[str, Plan], cloud: str) -> None:
    document = yaml.safe_load(instance(ws_plans[cloud], cloud).inputs[USER_DATA[cloud]])
    assert ubuntu_driver_install("550-server")[0] in document["runcmd"]
    sync = _units(document)["gpuinfra-tb-sync.service"]
    assert f"StateDirectory={SYNC_STATE_DIR.removeprefix('/var/lib/')}" in sync
    assert f"WorkingDirectory={SYNC_STATE_DIR}" in sync


def test_coscli_reads_the_cvm_role_from_its_config(ws_plans: dict[str, Plan]) -> None:
    """coscli has no role flag: mode and role name must be in the file its -c names."""
    plan = ws_plans["tencentcloud"]
    document = yaml.safe_load(instance(plan, "tencentcloud").inputs[USER_DATA["tencentcloud"]])
    sync = _units(document)["gpuinfra-tb-sync.service"]
    assert "--mode" not in sync and "--init-skip" not in sync
    assert f"-c {COSCLI_CONFIG}" in sync
    [config_file] = [f for f in document["write_files"] if f["path"] == COSCLI_CONFIG]
    config = yaml.safe_load(config_file["content"])["cos"]
    role = plan.one("tencentcloud:Cam/role:Role", "gpuinfra-tencentcloud-dev-workstation-role")
    bucket = plan.one("tencentcloud:Cos/bucket:Bucket").inputs["bucket"]
    assert config["base"]["mode"] == "CvmRole"
    assert config["base"]["cvmrolename"] == role.inputs["name"]
    assert not config["base"].get("secretid") and not config["base"].get("secretkey")
    assert config["buckets"] == [
        {
            "name": bucket,
            "alias": bucket,
            "region": "ap-guangzhou",
            "endpoint": "cos.ap-guangzhou.myqcloud.com",
        }
    ]
    assert f"cos://{bucket}/tb/" in sync


@pytest.mark.parametrize("cloud", list(STACKS))
def test_user_data_fits_every_clouds_limit(ws_plans: dict[str, Plan], cloud: str) -> None:
    """16 KB is the smallest limit of the three (EC2: raw; counted here after base64)."""
    text = instance(ws_plans[cloud], cloud).inputs[USER_DATA[cloud]]
    assert len(base64.b64encode(text.encode())) <= 16 * 1024
