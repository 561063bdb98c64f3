"""cloud-init of the GPU workstation, the same on every cloud.

One setup script (run once by cloud-init, as root) makes an unprivileged service user, a
Jupyter token on the VM, the server venv (JupyterLab, TensorBoard) and the user's notebook
kernel (a CUDA build of PyTorch), then starts four systemd units: a GPU check that the
others require, JupyterLab (8888) and TensorBoard (6006) listening on 127.0.0.1 only (reached
through an SSH tunnel), and a sync that copies every training Job's `<job>/tb/` from the
bucket into the folder TensorBoard reads. Each cloud's `workstation.py` supplies what
differs: the login user, where the driver and PyTorch come from, the sync backend, the disk.

No secret is in the user data: the token is generated on the VM (readable by root and the
service user) and the user fetches it over SSH.
"""

from __future__ import annotations

import ast
import base64
import gzip
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from components import workstation_tb_sync

JUPYTER_PORT = 8888
TENSORBOARD_PORT = 6006
LISTEN_ADDRESS = "127.0.0.1"
"""Both servers listen on loopback only: reached through `ssh -L`, so neither plain HTTP nor
the token crosses the network unencrypted, and the admin group's 8888/6006 are not needed."""
JUPYTERLAB_VERSION = "4.6.6"
"""Pinned (PyPI jupyterlab, newest 4.x checked 2026-11)."""
TENSORBOARD_VERSION = "2.21.0"
"""Pinned (PyPI). 2.20.0 imports `pkg_resources` at start (tensorboard/default.py:30), which
the setuptools a fresh venv gets (84.x, 2026-11) no longer has, so it crashes on Ubuntu
24.04's Python 3.12; 2.21.0 starts with it."""
TENSORBOARD_FLAGS = ("--load_fast=false",)
"""The sync renames a new copy over a grown event file. TensorBoard's default Rust loader
keeps reading the file it opened and never sees the new steps; the Python loader opens the
file by path at each read (tensorboard 2.21.0 compat/tensorflow_stub/io/gfile.py
LocalFileSystem.read) and does. `--detect_file_replacement` alone warns that it needs
TensorFlow 2.9+ for reopening and only works because it turns the Rust loader off too."""
IPYKERNEL_VERSION = "7.3.0"
"""Pinned (PyPI ipykernel): makes the kernel venv a Jupyter kernel. The newest that installs
on Ubuntu 22.04's Python 3.10 (Alibaba, Tencent): 7.4.0 requires Python >= 3.11."""
TORCH_VERSION = "2.9.1"
"""PyTorch installed where the image has none (Alibaba, Tencent). PyPI's x86_64 wheel is a
CUDA 12.8 build (requires nvidia-cuda-runtime-cu12==12.8.90), which runs on any 12.x driver
(>= 525.60.13, CUDA minor-version compatibility), e.g. Ubuntu's 550-server."""
TORCH_INDEX_BEFORE_TURING = "https://download.pytorch.org/whl/cu126"
"""PyTorch's CUDA 12.6 builds, for GPUs older than Turing (V100, compute capability 7.0),
whose kernels PyTorch's CUDA 12.8 builds leave out."""
TURING = "7.5"
SERVICE_USER = "gpuinfra"
"""Runs JupyterLab, TensorBoard and the sync: no sudo, since a Jupyter terminal is a shell
as this user."""
KERNEL_NAME = "pytorch"
LIB_DIR = "/usr/local/lib/gpuinfra"
SETUP_SCRIPT = f"{LIB_DIR}/setup.sh"
KERNEL_SCRIPT = f"{LIB_DIR}/kernel.sh"
TB_SYNC_SCRIPT = f"{LIB_DIR}/tb_sync.py"
SYNC_EVERY_SECONDS = 60
GPU_CHECK = "gpuinfra-gpu-check"
SERVICES = (GPU_CHECK, "gpuinfra-jupyter", "gpuinfra-tensorboard", "gpuinfra-tb-sync")
UBUNTU_DRIVER_BRANCH = "550-server"
"""Ubuntu's packaged NVIDIA datacenter driver branch, for images without a driver."""


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
class Layout:
    """Where the workstation keeps its state: all of it below `data_root` and `home_root`,
    so a cloud whose system disk is not encrypted can put both on an encrypted data disk."""

    data_root: str = "/var/lib/gpuinfra"
    home_root: str = "/home"

    @property
    def venv(self) -> str:
        return f"{self.data_root}/venv"

    @property
    def tensorboard_dir(self) -> str:
        """One folder per training Job, filled by the sync."""
        return f"{self.data_root}/tb"

    @property
    def sync_dir(self) -> str:
        """Working directory of the sync (the bucket CLIs write logs there)."""
        return f"{self.data_root}/sync"

    @property
    def token_file(self) -> str:
        """The Jupyter token: owned by the service user, mode 0400."""
        return f"{self.data_root}/jupyter-token"

    @property
    def home(self) -> str:
        return f"{self.home_root}/{SERVICE_USER}"

    @property
    def notebooks(self) -> str:
        return f"{self.home}/notebooks"

    @property
    def kernel_venv(self) -> str:
        """The notebook kernel's venv, the service user's own: `pip install` works there."""
        return f"{self.home}/venv"


@dataclass(frozen=True)
class CloudInitArgs:
    login_user: str
    """The image's SSH user: gets the key (and has sudo, or is root)."""
    ssh_public_key: str
    sync: Sequence[str]
    """`tb_sync.py` arguments naming the backend and the bucket, e.g. `["s3", "--region",
    "us-east-1", "s3://bucket/"]`; the destination folder is added."""
    image_pytorch: str = ""
    """The Python of the image's own CUDA PyTorch environment (the kernel venv sees its
    packages); empty: the kernel venv installs PyTorch from PyPI."""
    layout: Layout = field(default_factory=Layout)
    driver_install: Sequence[str] = ()
    """Commands that install the NVIDIA driver, on images without one."""
    setup: Sequence[str] = ()
    """Shell commands run first (e.g. mount the data disk, install the bucket CLI)."""
    server_packages: Sequence[str] = ()
    """Extra pip packages in the server venv (e.g. boto3 for the S3 sync)."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Extra files (path: content), readable by all: no secrets (e.g. a bucket CLI config
    that names the instance role)."""

    def __post_init__(self) -> None:
        if self.login_user == SERVICE_USER:
            raise ValueError(f"the login user must not be the service user {SERVICE_USER!r}")


# --- systemd units ------------------------------------------------------------------------


def _unit(description: str, exec_start: str, extra: Sequence[str] = ()) -> str:
    """A service of the service user that runs only when the GPU check passed."""
    return "\n".join(
        [
            "[Unit]",
            f"Description={description}",
            f"Requires={GPU_CHECK}.service",
            f"After=network-online.target {GPU_CHECK}.service",
            "Wants=network-online.target",
            "",
            "[Service]",
            f"User={SERVICE_USER}",
            *extra,
            f"ExecStart={exec_start}",
            "Restart=on-failure",
            "RestartSec=5",
            "",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )


def gpu_check_unit() -> str:
    """Fails when the GPU or its driver is missing; the other units require it, so then
    none of them starts (`systemctl status gpuinfra-gpu-check` says why)."""
    return "\n".join(
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


def jupyter_command(layout: Layout) -> str:
    """JupyterLab on loopback; the token comes from the file JUPYTER_TOKEN_FILE names
    (jupyter_server auth/identity.py), so it is on no command line and, unlike JUPYTER_TOKEN,
    not in the environment every kernel and terminal inherits. Notebooks open on the
    PyTorch kernel; the server venv's own kernel (ipykernel's `python3`, no PyTorch) is not
    offered."""
    return shlex.join(
        [
            f"{layout.venv}/bin/jupyter",
            "lab",
            "--no-browser",
            f"--ServerApp.ip={LISTEN_ADDRESS}",
            f"--ServerApp.port={JUPYTER_PORT}",
            f"--ServerApp.root_dir={layout.notebooks}",
            f"--MappingKernelManager.default_kernel_name={KERNEL_NAME}",
            f"--KernelSpecManager.allowed_kernelspecs={KERNEL_NAME}",
        ]
    )


def tensorboard_command(layout: Layout) -> str:
    return shlex.join(
        [
            f"{layout.venv}/bin/tensorboard",
            "--logdir",
            layout.tensorboard_dir,
            "--host",
            LISTEN_ADDRESS,
            "--port",
            str(TENSORBOARD_PORT),
            *TENSORBOARD_FLAGS,
        ]
    )


def sync_command(args: CloudInitArgs) -> str:
    return shlex.join(
        [
            f"{args.layout.venv}/bin/python",
            TB_SYNC_SCRIPT,
            "--every",
            str(SYNC_EVERY_SECONDS),
            *args.sync,
            f"{args.layout.tensorboard_dir}/",
        ]
    )


def units(args: CloudInitArgs) -> dict[str, str]:
    """Unit file name -> content."""
    layout = args.layout
    return {
        f"{GPU_CHECK}.service": gpu_check_unit(),
        "gpuinfra-jupyter.service": _unit(
            f"JupyterLab on {LISTEN_ADDRESS}:{JUPYTER_PORT} (token login)",
            jupyter_command(layout),
            [
                f"Environment=JUPYTER_TOKEN_FILE={layout.token_file}",
                f"WorkingDirectory={layout.notebooks}",
            ],
        ),
        "gpuinfra-tensorboard.service": _unit(
            f"TensorBoard on {LISTEN_ADDRESS}:{TENSORBOARD_PORT}, one run per training Job",
            tensorboard_command(layout),
        ),
        "gpuinfra-tb-sync.service": _unit(
            "Copy every training Job's TensorBoard folder from the bucket, every minute",
            sync_command(args),
            [f"WorkingDirectory={layout.sync_dir}"],
        ),
    }


# --- scripts ------------------------------------------------------------------------------


def server_pip_packages(extra: Sequence[str] = ()) -> list[str]:
    return [f"jupyterlab=={JUPYTERLAB_VERSION}", f"tensorboard=={TENSORBOARD_VERSION}", *extra]


def kernel_script() -> str:
    """Run as the service user: the notebook kernel, a venv of the user's own with a CUDA
    PyTorch. With the image's PyTorch environment as argument, the venv sees its packages
    (a .pth file); without, it installs PyTorch from PyPI, the build fitting the GPU."""
    return f"""#!/bin/bash
# The gpuinfra workstation's notebook kernel (run by {SETUP_SCRIPT} as {SERVICE_USER}).
set -euo pipefail

image_python=${{1:-}}
venv="$HOME/venv"

# pip arguments for PyTorch, one per line: the CUDA 12.6 build for GPUs older than Turing.
torch_pip_args() {{
  local cap major minor
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
  major=${{cap%%.*}}
  minor=${{cap#*.}}
  if (( major * 10 + minor < {TURING.replace(".", "")} )); then
    printf '%s\\n' --index-url {TORCH_INDEX_BEFORE_TURING}
  fi
  printf '%s\\n' torch=={TORCH_VERSION}
}}

main() {{
  cd "$HOME"
  if [[ -n "$image_python" ]]; then
    "$image_python" -m venv "$venv"
    local purelib
    local paths='import sysconfig; p = sysconfig.get_paths()'
    paths+='; print(p["purelib"]); print(p["platlib"])'
    purelib=$("$venv/bin/python" -c "$paths" | head -n 1)
    "$image_python" -c "$paths" | sort -u >"$purelib/gpuinfra-image-pytorch.pth"
  else
    python3 -m venv "$venv"
    local args
    mapfile -t args < <(torch_pip_args)
    "$venv/bin/pip" install --quiet "${{args[@]}}"
  fi
  "$venv/bin/pip" install --quiet ipykernel=={IPYKERNEL_VERSION}
  "$venv/bin/python" -m ipykernel install --user --name {KERNEL_NAME} \\
    --display-name "Python 3 (PyTorch)"
  "$venv/bin/python" -c \\
    'import torch; print("PyTorch", torch.__version__, "CUDA:", torch.cuda.is_available())'
}}

if [[ "${{BASH_SOURCE[0]}}" == "$0" ]]; then
  main "$@"
fi
"""


def token_commands(layout: Layout) -> list[str]:
    """The Jupyter token, made on the VM once: never in the user data or the Pulumi state."""
    token = shlex.quote(layout.token_file)
    return [
        f"if [[ ! -s {token} ]]; then",
        # No newline after it: jupyter_server takes the whole file as the token
        # (auth/identity.py _token_default reads JUPYTER_TOKEN_FILE without stripping).
        "  (umask 077 && python3 -c 'import secrets, sys; sys.stdout.write(secrets.token_hex(24))'"
        f" >{token})",
        "fi",
        f"chown {SERVICE_USER}: {token}",
        f"chmod 0400 {token}",
    ]


def setup_script(args: CloudInitArgs) -> str:
    layout = args.layout
    q = shlex.quote
    owned = f"install -d -o {SERVICE_USER} -g {SERVICE_USER} -m 0750"
    pip = " ".join(q(p) for p in server_pip_packages(args.server_packages))
    lines = [
        "#!/bin/bash",
        "# Sets up the gpuinfra GPU workstation; cloud-init runs it once, as root.",
        "set -euo pipefail",
        "export DEBIAN_FRONTEND=noninteractive",
        "",
        *args.setup,
        *args.driver_install,
        "",
        f"install -d -m 0755 {q(layout.data_root)} {q(layout.home_root)}",
        f"id -u {SERVICE_USER} >/dev/null 2>&1 || "
        f"useradd --create-home --home-dir {q(layout.home)} --shell /bin/bash {SERVICE_USER}",
        f"{owned} {q(layout.tensorboard_dir)} {q(layout.sync_dir)} {q(layout.notebooks)}",
        *token_commands(layout),
        "",
        f"python3 -m venv {q(layout.venv)}",
        f"{q(layout.venv)}/bin/pip install --quiet {pip}",
        f"runuser -u {SERVICE_USER} -- env HOME={q(layout.home)} "
        f"bash {KERNEL_SCRIPT} {q(args.image_pytorch)}",
        "",
        "systemctl daemon-reload",
        f"systemctl enable --now {' '.join(SERVICES)}",
        "",
    ]
    return "\n".join(lines)


def tb_sync_source() -> str:
    """The sync script as cloud-init writes it onto the workstation: the same code, without
    comments and docstrings but the module's first line (the user data limit is 16 KB)."""
    tree = ast.parse(Path(workstation_tb_sync.__file__).read_text())
    first_line = (ast.get_docstring(tree) or "").splitlines()[0]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kept = [stmt for stmt in body if not _is_string_statement(stmt)]
            node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    return f'"""{first_line}"""\n' + ast.unparse(tree) + "\n"


def _is_string_statement(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _compressed(text: str) -> str:
    """gzip + base64 (cloud-init write_files `encoding: gz+b64`), without a timestamp so the
    same text always renders the same user data."""
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def render(args: CloudInitArgs) -> str:
    """The `#cloud-config` document (YAML). Holds no secret."""
    files: list[dict[str, str]] = [
        {"path": f"/etc/systemd/system/{name}", "content": content}
        for name, content in units(args).items()
    ]
    files += [
        {"path": SETUP_SCRIPT, "permissions": "0700", "content": setup_script(args)},
        {"path": KERNEL_SCRIPT, "permissions": "0755", "content": kernel_script()},
        {
            "path": TB_SYNC_SCRIPT,
            "permissions": "0755",
            "encoding": "gz+b64",
            "content": _compressed(tb_sync_source()),
        },
    ]
    files += [
        {"path": path, "permissions": "0644", "content": content}
        for path, content in sorted(args.files.items())
    ]
    document = {
        # The image's login user gets the key; no password logins.
        "ssh_authorized_keys": [args.ssh_public_key],
        "ssh_pwauth": False,
        "package_update": True,
        "packages": ["python3-venv"],
        "write_files": files,
        "runcmd": [["bash", SETUP_SCRIPT]],
    }
    return "#cloud-config\n" + yaml.dump(
        document, Dumper=_LiteralDumper, sort_keys=False, width=1000
    )


class _LiteralDumper(yaml.SafeDumper):
    """Multi-line strings (units, scripts) as YAML literal blocks: readable user data."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_LiteralDumper.add_representer(str, _represent_str)
