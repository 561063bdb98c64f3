"""cloud-init of the GPU workstation, the same on every cloud.

It checks the GPU with `nvidia-smi`, then runs JupyterLab (8888, token login) and TensorBoard
(6006, the bucket's `tb/` logs) as systemd services that restart on failure. Each cloud's
`workstation.py` supplies what differs: where the driver comes from, how TensorBoard reaches
the bucket, the login user.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import yaml

JUPYTER_PORT = 8888
TENSORBOARD_PORT = 6006
TENSORBOARD_PREFIX = "tb/"
"""Bucket prefix TensorBoard reads: training jobs write their event files under it."""
VENV = "/opt/gpuinfra/venv"
JUPYTERLAB_VERSION = "4.4.10"
"""Pinned (PyPI jupyterlab 4.4.x, 2025-10)."""
TENSORBOARD_VERSION = "2.20.0"
"""Pinned (PyPI tensorboard 2.20.0, 2025-07)."""
TOKEN_FILE = "/etc/gpuinfra/jupyter.env"
SERVICES = ("gpuinfra-gpu-check", "gpuinfra-jupyter", "gpuinfra-tensorboard")
SYNCED_TENSORBOARD_DIR = "/var/lib/gpuinfra/tb"
"""Where the sync service copies the bucket's `tb/` to, on clouds whose TensorBoard cannot
read the bucket itself."""
UBUNTU_DRIVER_BRANCH = "550-server"
"""Ubuntu's packaged NVIDIA datacenter driver branch, for images without a driver."""
SYNC_STATE_DIR = "/var/lib/gpuinfra-sync"
"""Working directory of the sync service, made by systemd (StateDirectory) and owned by the
service user: the bucket CLIs write their logs and checkpoints next to where they run."""


def ubuntu_driver_install(branch: str = UBUNTU_DRIVER_BRANCH) -> list[str]:
    """Ubuntu's packaged NVIDIA datacenter driver (Ubuntu Server docs, "NVIDIA drivers
    installation"), skipped when the image already has a working driver."""
    install = " && ".join(
        [
            "apt-get install -y ubuntu-drivers-common",
            f"ubuntu-drivers install --gpgpu nvidia:{branch}",
            f"apt-get install -y nvidia-utils-{branch}",
            "modprobe nvidia",
        ]
    )
    return [f"nvidia-smi -L >/dev/null 2>&1 || {{ {install}; }}"]


@dataclass(frozen=True)
class CloudInitArgs:
    user: str
    """Login user of the image (gets the SSH key; runs the services unless `service_user`)."""
    ssh_public_key: str
    tensorboard_logdir: str
    """What TensorBoard's --logdir reads: `s3://<bucket>/tb/`, or a local folder a sync
    service fills from the bucket."""
    notebook_dir: str
    driver_install: Sequence[str] = ()
    """Commands that install the NVIDIA driver, on images without one."""
    packages: Sequence[str] = ()
    """Extra pip packages in the venv (e.g. boto3, so TensorBoard reads s3://)."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Environment of the TensorBoard service (e.g. AWS_REGION)."""
    tensorboard_sync: str | None = None
    """A shell command run every minute that copies the bucket's `tb/` into
    `tensorboard_logdir` (clouds where TensorBoard cannot read the bucket itself)."""
    setup: Sequence[str] = ()
    """Commands run before the services start (e.g. install the bucket CLI, mount a disk)."""
    service_user: str = ""
    """Created to run Jupyter, TensorBoard and the sync: required where the image's login
    user is root, since a Jupyter terminal is a shell as whoever runs Jupyter."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Extra files (path: content), readable by all: no secrets (e.g. a bucket CLI config
    that names the instance role)."""

    @property
    def runs_services(self) -> str:
        return self.service_user or self.user


def _unit(description: str, exec_start: str, user: str, extra: Sequence[str] = ()) -> str:
    lines = [
        "[Unit]",
        f"Description={description}",
        "After=network-online.target gpuinfra-gpu-check.service",
        "Wants=network-online.target",
        "",
        "[Service]",
        f"User={user}",
        *extra,
        f"ExecStart={exec_start}",
        "Restart=on-failure",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def render(args: CloudInitArgs, jupyter_token: str) -> str:
    """The `#cloud-config` document (YAML). Holds the Jupyter token: pass it only as a secret."""
    if args.runs_services == "root":
        raise ValueError("the workstation's services must not run as root: set service_user")
    svc = args.runs_services
    env_lines = [f"Environment={k}={v}" for k, v in sorted(args.environment.items())]
    jupyter = _unit(
        "JupyterLab on port 8888 (token login)",
        f"{VENV}/bin/jupyter lab --ip=0.0.0.0 --port={JUPYTER_PORT} --no-browser "
        f"--ServerApp.root_dir={shlex.quote(args.notebook_dir)} "
        "--IdentityProvider.token=${JUPYTER_TOKEN}",
        svc,
        [f"EnvironmentFile={TOKEN_FILE}", f"WorkingDirectory={args.notebook_dir}"],
    )
    tensorboard = _unit(
        "TensorBoard on port 6006 (the bucket's tb/ logs)",
        f"{VENV}/bin/tensorboard --logdir {shlex.quote(args.tensorboard_logdir)} "
        f"--host 0.0.0.0 --port {TENSORBOARD_PORT}",
        svc,
        env_lines,
    )
    gpu_check = "\n".join(
        [
            "[Unit]",
            "Description=Fail early when the GPU or its driver is missing",
            "",
            "[Service]",
            "Type=oneshot",
            "RemainAfterExit=yes",
            "ExecStart=/usr/bin/nvidia-smi",
            "",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )
    files = [
        {"path": "/etc/systemd/system/gpuinfra-gpu-check.service", "content": gpu_check},
        {"path": "/etc/systemd/system/gpuinfra-jupyter.service", "content": jupyter},
        {"path": "/etc/systemd/system/gpuinfra-tensorboard.service", "content": tensorboard},
        {
            "path": TOKEN_FILE,
            "permissions": "0600",
            "owner": "root:root",
            "content": f"JUPYTER_TOKEN={jupyter_token}\n",
        },
    ]
    units = list(SERVICES)
    if args.tensorboard_sync:
        files.append(
            {
                "path": "/etc/systemd/system/gpuinfra-tb-sync.service",
                "content": _unit(
                    "Copy the bucket's tb/ logs for TensorBoard, every minute",
                    "/bin/sh -c "
                    + shlex.quote(f"while true; do {args.tensorboard_sync}; sleep 60; done"),
                    svc,
                    [
                        *env_lines,
                        f"StateDirectory={SYNC_STATE_DIR.removeprefix('/var/lib/')}",
                        f"WorkingDirectory={SYNC_STATE_DIR}",
                    ],
                ),
            }
        )
        units.append("gpuinfra-tb-sync")
    files.extend(
        {"path": path, "permissions": "0644", "content": content}
        for path, content in sorted(args.files.items())
    )
    pip = " ".join(
        [f"jupyterlab=={JUPYTERLAB_VERSION}", f"tensorboard=={TENSORBOARD_VERSION}", *args.packages]
    )
    create_user = (
        [f"id -u {svc} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash {svc}"]
        if args.service_user
        else []
    )
    runcmd: list[str] = [
        *create_user,
        *args.driver_install,
        *args.setup,
        f"mkdir -p {shlex.quote(args.notebook_dir)}",
        f"chown {svc}: {shlex.quote(args.notebook_dir)}",
        f"python3 -m venv {VENV}",
        f"{VENV}/bin/pip install --quiet {pip}",
        "systemctl daemon-reload",
        f"systemctl enable --now {' '.join(units)}",
    ]
    if args.tensorboard_sync:
        runcmd.insert(
            len(create_user) + len(args.driver_install) + len(args.setup),
            f"install -d -o {svc} {shlex.quote(args.tensorboard_logdir)}",
        )
    document = {
        # The image's default user (`user`) gets the key; no password logins.
        "ssh_authorized_keys": [args.ssh_public_key],
        "ssh_pwauth": False,
        "package_update": True,
        "packages": ["python3-venv"],
        "write_files": files,
        "runcmd": runcmd,
    }
    return "#cloud-config\n" + yaml.safe_dump(document, sort_keys=False, width=1000)
