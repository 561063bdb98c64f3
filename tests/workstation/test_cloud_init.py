"""The rendered cloud-init: YAML, the GPU check and both services, restarting on failure."""

from __future__ import annotations

import pytest
import yaml

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
