"""JupyterLab, TensorBoard, the notebook kernel and the sync, run here the way the workstation
runs them: the rendered install line into a venv of the AWS image's Python (3.12), the
rendered kernel script, the rendered units' commands (only the ports changed), the sync
against a local S3 with a bucket shaped like the Jobs'.

Slow (about a minute and a half: it installs the pinned JupyterLab, TensorBoard and ipykernel
from PyPI). Needs a Python 3.12 (Ubuntu 24.04's, as on the Deep Learning AMI) and the network
to PyPI; without them it fails, saying which.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.aws.workstation import S3_SYNC_PACKAGES
from components.workstation_cloud_init import (
    JUPYTER_PORT,
    KERNEL_NAME,
    TENSORBOARD_PORT,
    TENSORBOARD_VERSION,
    CloudInitArgs,
    Layout,
    kernel_script,
    setup_script,
    tb_sync_source,
    units,
)

from .conftest import BUCKET, SSH_KEY, unit_value

PYTHON_312 = (
    "python3.12",
    "/usr/bin/python3.12",
    *sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.12*/bin/python3.12")),
)
"""Where a Python like the AWS image's (Ubuntu 24.04: 3.12) may be."""
FAKE_TORCH = """__version__ = "2.9.1+image"


class cuda:
    @staticmethod
    def is_available():
        return False
"""


def _python_312() -> str:
    for candidate in PYTHON_312:
        try:
            done = subprocess.run(
                [candidate, "--version"], capture_output=True, text=True, timeout=30
            )
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.startswith("Python 3.12"):
            return candidate
    pytest.fail(
        "this test needs Python 3.12 (the Deep Learning AMI's, Ubuntu 24.04): install it "
        "(apt-get install python3.12-venv, or actions/setup-python) so `python3.12` runs"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(command: list[str], **kwargs: Any) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{shlex.join(command)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _wait_for(check: Callable[[], Any], what: str, timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (urllib.error.URLError, ConnectionError, OSError, ValueError, KeyError) as error:
            last = error
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}: {last!r}")


@dataclass
class Machine:
    """The workstation's files in a temporary folder, and the commands its units run."""

    layout: Layout
    args: CloudInitArgs
    units: dict[str, str]
    token: str
    kernel_log: str
    started: list[subprocess.Popen[str]]

    def command(self, unit: str, **ports: int) -> list[str]:
        """The unit's ExecStart, split as systemd splits it, with ports swapped for free ones."""
        args = shlex.split(unit_value(self.units[unit], "ExecStart")[0])
        swaps = {
            f"--ServerApp.port={JUPYTER_PORT}": f"--ServerApp.port={ports.get('jupyter')}",
            str(TENSORBOARD_PORT): str(ports.get("tensorboard")),
        }
        command = [swaps.get(a, a) for a in args]
        if unit == "gpuinfra-jupyter.service" and os.geteuid() == 0:
            # Some test machines run as root, which JupyterLab refuses; the VM runs it as the
            # unprivileged service user.
            command.append("--ServerApp.allow_root=True")
        return command

    def environment(self, unit: str) -> dict[str, str]:
        """What systemd gives the service: its Environment= lines, HOME of its user."""
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.layout.home}
        for line in unit_value(self.units[unit], "Environment"):
            key, value = line.split("=", 1)
            env[key] = value
        return env

    def start(
        self, unit: str, extra_env: dict[str, str] | None = None, **ports: int
    ) -> subprocess.Popen[str]:
        [workdir] = unit_value(self.units[unit], "WorkingDirectory") or [self.layout.home]
        process = subprocess.Popen(
            self.command(unit, **ports),
            env={**self.environment(unit), **(extra_env or {})},
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.started.append(process)
        return process


def _fake_image_pytorch(root: Path, python: str) -> str:
    """A stand-in for the DLAMI's /opt/pytorch: a venv whose site-packages hold `torch`."""
    _run([python, "-m", "venv", str(root)])
    purelib = _run(
        [
            str(root / "bin/python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]
    ).strip()
    (Path(purelib) / "torch").mkdir()
    (Path(purelib) / "torch/__init__.py").write_text(FAKE_TORCH)
    return str(root / "bin/python")


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    python = _python_312()
    root = tmp_path_factory.mktemp("workstation")
    layout = Layout(data_root=str(root / "data"), home_root=str(root / "home"))
    args = CloudInitArgs(
        login_user="ubuntu",
        ssh_public_key=SSH_KEY,
        sync=["s3", "--region", "us-east-1", f"s3://{BUCKET}/"],
        image_pytorch=_fake_image_pytorch(root / "opt-pytorch", python),
        layout=layout,
        server_packages=S3_SYNC_PACKAGES,
    )
    setup = setup_script(args).splitlines()
    for folder in (layout.tensorboard_dir, layout.sync_dir, layout.notebooks):
        Path(folder).mkdir(parents=True)
    # The setup script's own lines, as root would run them (less useradd, chown, systemctl).
    token_lines = setup[setup.index(next(x for x in setup if x.startswith("if [[ ! -s"))) :][:3]
    _run(
        [
            "bash",
            "-euo",
            "pipefail",
            "-c",
            "\n".join([*token_lines, f"chmod 0400 {layout.token_file}"]),
        ]
    )
    [venv_line] = [x for x in setup if x.startswith("python3 -m venv ")]
    _run([python, *shlex.split(venv_line)[1:]])
    [pip_line] = [x for x in setup if x.startswith(f"{layout.venv}/bin/pip install")]
    _run(shlex.split(pip_line))
    kernel = root / "kernel.sh"
    kernel.write_text(kernel_script())
    kernel_log = _run(
        ["bash", str(kernel), args.image_pytorch],
        env={"HOME": layout.home, "PATH": f"{Path(python).parent}:/usr/bin:/bin"},
    )
    (Path(layout.sync_dir) / "tb_sync.py").write_text(tb_sync_source())
    rendered = units(args)
    # Exactly what `cat` prints to the user, and what jupyter_server compares: the whole file.
    token = Path(layout.token_file).read_text()
    assert len(token) == 48 and token.isalnum(), repr(token)
    machine = Machine(layout, args, rendered, token, kernel_log, [])
    try:
        yield machine
    finally:
        for process in machine.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)


def _get(url: str, token: str | None = None, method: str = "GET", body: object = None) -> Any:
    request = urllib.request.Request(url, method=method)
    if token:
        request.add_header("Authorization", f"token {token}")
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data=data, timeout=10) as response:
        text = response.read().decode()
    return json.loads(text) if text else None


def _cmdlines() -> dict[int, str]:
    found = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                found[int(proc.name)] = (
                    (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                )
            except OSError:
                continue
    return found


def _tiny_wheel(folder: Path) -> Path:
    """A pure-Python wheel, built by hand: `pip install` it with no index."""
    wheel = folder / "hello_ws-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("hello_ws.py", "GREETING = 'installed by the notebook user'\n")
        z.writestr(
            "hello_ws-0.1.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: hello-ws\nVersion: 0.1\n",
        )
        z.writestr(
            "hello_ws-0.1.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        z.writestr("hello_ws-0.1.dist-info/RECORD", "")
    return wheel


# --- the notebook ----------------------------------------------------------------------------


def test_jupyter_takes_the_token_from_the_environment_and_opens_on_pytorch(
    machine: Machine,
) -> None:
    port = _free_port()
    server = machine.start("gpuinfra-jupyter.service", jupyter=port)
    base = f"http://127.0.0.1:{port}"
    _wait_for(lambda: _get(f"{base}/api/status", machine.token), "JupyterLab")
    # Token login: refused without it (the token came from the file JUPYTER_TOKEN_FILE names).
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(f"{base}/api/kernelspecs")
    assert refused.value.code == 403
    specs = _get(f"{base}/api/kernelspecs", machine.token)
    assert specs["default"] == KERNEL_NAME
    assert list(specs["kernelspecs"]) == [KERNEL_NAME]  # the server venv's kernel is hidden
    argv = specs["kernelspecs"][KERNEL_NAME]["spec"]["argv"]
    assert argv[0] == f"{machine.layout.kernel_venv}/bin/python"

    kernel = _get(f"{base}/api/kernels", machine.token, "POST", {"name": KERNEL_NAME})
    try:
        kernel_pid = _wait_for(
            lambda: next(
                pid for pid, cmd in _cmdlines().items()
                if "ipykernel_launcher" in cmd and machine.layout.kernel_venv in cmd
            ),
            "the kernel process",
        )  # fmt: skip
        # In no process's command line (`ps`), and not in the kernel's environment either:
        # only the path of the file (JUPYTER_TOKEN would be inherited by every kernel).
        assert not [cmd for cmd in _cmdlines().values() if machine.token in cmd]
        environ = Path(f"/proc/{kernel_pid}/environ").read_bytes().decode().split("\0")
        assert f"JUPYTER_TOKEN_FILE={machine.layout.token_file}" in environ
        assert not [e for e in environ if machine.token in e]
    finally:
        _get(f"{base}/api/kernels/{kernel['id']}", machine.token, "DELETE")
    assert server.poll() is None


def test_the_kernel_has_the_images_pytorch_and_takes_the_users_packages(
    machine: Machine, tmp_path: Path
) -> None:
    assert "PyTorch 2.9.1+image CUDA: False" in machine.kernel_log
    python = f"{machine.layout.kernel_venv}/bin/python"
    _run(
        [
            f"{machine.layout.kernel_venv}/bin/pip",
            "install",
            "--no-index",
            str(_tiny_wheel(tmp_path)),
        ]
    )
    out = _run(
        [python, "-c", "import torch, hello_ws; print(torch.__version__, hello_ws.GREETING)"]
    )
    assert out.strip() == "2.9.1+image installed by the notebook user"


# --- TensorBoard ------------------------------------------------------------------------------


class Events:
    """A training Job's event file as the trainer writes it: one file that grows."""

    def __init__(self, folder: Path) -> None:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self.writer = EventFileWriter(str(folder))
        self.step = 0

    def add(self, steps: int) -> None:
        from tensorboard.compat.proto import event_pb2, summary_pb2

        for _ in range(steps):
            value = summary_pb2.Summary.Value(tag="loss", simple_value=1.0 / (self.step + 1))
            summary = summary_pb2.Summary(value=[value])
            self.writer.add_event(
                event_pb2.Event(wall_time=time.time(), step=self.step, summary=summary)
            )
            self.step += 1
        self.writer.flush()


def _event_file(folder: Path) -> Path:
    [found] = folder.glob("events.out.tfevents.*")
    return found


def test_tensorboard_shows_each_job_and_the_steps_a_sync_brings(
    machine: Machine, s3_bucket: Any, tmp_path: Path
) -> None:
    """Job-shaped bucket -> the sync -> one run per Job; a grown event file, renamed over the
    old copy by the next sync, shows its new steps."""
    jobs = {name: Events(tmp_path / name) for name in ("job-a", "job-b")}
    jobs["job-a"].add(5)
    jobs["job-b"].add(3)

    def upload() -> None:
        for name in jobs:
            event = _event_file(tmp_path / name)
            s3_bucket.put_object(
                Bucket=BUCKET, Key=f"{name}/tb/{event.name}", Body=event.read_bytes()
            )

    upload()
    s3_bucket.put_object(Bucket=BUCKET, Key="job-a/step-000100.pt", Body=b"checkpoint")
    s3_bucket.put_object(Bucket=BUCKET, Key="datasets/train/0001.jpg", Body=b"image")
    sync_once = machine.command("gpuinfra-tb-sync.service")
    sync_once[sync_once.index("--every") + 1] = "0"  # one round each time it is called
    sync_once[1] = str(Path(machine.layout.sync_dir) / "tb_sync.py")  # the shipped copy
    environment = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}

    def sync() -> None:
        _run(sync_once, env={**machine.environment("gpuinfra-tb-sync.service"), **environment},
             cwd=machine.layout.sync_dir)  # fmt: skip

    sync()
    port = _free_port()
    machine.start("gpuinfra-tensorboard.service", tensorboard=port)
    base = f"http://127.0.0.1:{port}"

    def points(run: str) -> int:
        return len(_get(f"{base}/data/plugin/scalars/scalars?run={run}&tag=loss"))

    runs = _wait_for(lambda: sorted(_get(f"{base}/data/runs")) or None, "TensorBoard's runs")
    assert runs == ["job-a", "job-b"]  # no checkpoint, no dataset
    assert _wait_for(lambda: points("job-a") == 5, "job-a's first steps")
    assert points("job-b") == 3

    jobs["job-a"].add(5)
    upload()
    sync()
    assert _wait_for(lambda: points("job-a") == 10, "job-a's new steps after the rename-over", 60)


def test_tensorboard_version_starts_in_a_fresh_venv(machine: Machine) -> None:
    """2.20 crashed on import here (no pkg_resources in a fresh venv's setuptools)."""
    out = _run([f"{machine.layout.venv}/bin/tensorboard", "--version"])
    assert out.strip().splitlines()[-1] == TENSORBOARD_VERSION
