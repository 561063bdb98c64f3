"""Each cloud's dev stack with the GPU workstation on, built once under the mock engine."""

from __future__ import annotations

import base64
import gzip
import shutil
import socket
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuinfra.engine import Plan, RecordedResource
from tests.conftest import build

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGnE0e2B4Hq7kq0P5o2p3b0v8kqfZr3X0yq7xWQy1u3z you@laptop"
)
ON = {"workstationEnabled": True, "workstationSshPublicKey": SSH_KEY}
STACKS = {"aws": "dev", "alicloud": "alicloud-dev", "tencentcloud": "tencentcloud-dev"}
INSTANCE = {
    "aws": "aws:ec2/instance:Instance",
    "alicloud": "alicloud:ecs/instance:Instance",
    "tencentcloud": "tencentcloud:Instance/instance:Instance",
}
USER_DATA = {"aws": "userData", "alicloud": "userData", "tencentcloud": "userDataRaw"}


def build_ws(cloud: str, overrides: dict[str, object] | None = None) -> Plan:
    return build(STACKS[cloud], {**ON, **(overrides or {})})


@pytest.fixture(scope="session")
def ws_plans() -> dict[str, Plan]:
    return {cloud: build_ws(cloud) for cloud in STACKS}


def instance(plan: Plan, cloud: str) -> RecordedResource:
    return plan.one(INSTANCE[cloud])


def user_data(plan: Plan, cloud: str) -> dict:
    """The instance's `#cloud-config` document."""
    text = instance(plan, cloud).inputs[USER_DATA[cloud]]
    assert text.startswith("#cloud-config\n")
    return yaml.safe_load(text)


def written_files(document: dict) -> dict[str, str]:
    """path -> content of `write_files`, decoded as cloud-init decodes it."""
    files = {}
    for entry in document["write_files"]:
        content = entry["content"]
        encoding = entry.get("encoding", "text/plain")
        if encoding == "gz+b64":
            content = gzip.decompress(base64.b64decode(content)).decode()
        else:
            assert encoding == "text/plain", encoding
        files[entry["path"]] = content
    return files


def unit_files(document: dict) -> dict[str, str]:
    """systemd unit file name -> content."""
    return {
        path.rsplit("/", 1)[-1]: content
        for path, content in written_files(document).items()
        if path.startswith("/etc/systemd/system/")
    }


def unit_value(unit: str, key: str) -> list[str]:
    """Every value of `key=` in a unit file."""
    return [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{key}=")]


def require_tool(name: str, how: str) -> str:
    """The tool's path; a missing tool fails the test (never a silent skip)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"`{name}` is needed for this test and is not installed: {how}")
    return found


BUCKET = "gpuinfra-dev-data"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def s3_bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A local S3 (moto) with an empty bucket; boto3 in this process and in subprocesses
    reaches it through AWS_ENDPOINT_URL_S3. Yields a client for it."""
    import boto3
    from moto.server import ThreadedMotoServer

    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    for var, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_S3": endpoint,
    }.items():
        monkeypatch.setenv(var, value)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    # moto keeps its buckets in this process across servers: start empty.
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"))
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    try:
        yield client
    finally:
        server.stop()
