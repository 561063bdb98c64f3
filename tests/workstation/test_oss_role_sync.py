"""The Alibaba workstation's OSS sync: role credentials through the hardened metadata mode."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from components.alicloud import oss_role_sync
from components.alicloud.workstation import OSS_SYNC_SCRIPT, oss_role_sync_source
from tests.fake_http import Answer, Fake

from .conftest import USER_DATA, instance

ROLE = "ws-role"
TOKEN = "metadata-session-token"
CREDENTIALS = {
    "AccessKeyId": "STS.key-id",
    "AccessKeySecret": "key-secret",
    "SecurityToken": "sts-token",
    "Expiration": "2026-11-30T12:00:00Z",
    "Code": "Success",
}


def _hardened_metadata(method: str, path: str, headers: dict[str, str], body: object) -> tuple:
    """Like ECS metadata in hardened mode: credentials only with a session token."""
    if method == "PUT":
        ok = path == "/latest/api/token" and headers.get("x-aliyun-ecs-metadata-token-ttl-seconds")
        return (200, TOKEN) if ok else (400, "")
    if headers.get("x-aliyun-ecs-metadata-token") != TOKEN:
        return 401, ""
    if path != f"/latest/meta-data/ram/security-credentials/{ROLE}":
        return 404, ""
    return 200, CREDENTIALS


@pytest.fixture
def metadata_url(serve: Callable[[Answer], Fake]) -> str:
    return serve(_hardened_metadata).url


@pytest.fixture
def fake_ossutil(tmp_path: Path) -> tuple[Path, Path]:
    """An `ossutil` that records its arguments, its -c file and that file's mode."""
    record = tmp_path / "record.json"
    tool = tmp_path / "ossutil"
    tool.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "path = sys.argv[sys.argv.index('-c') + 1]\n"
        "seen = {'argv': sys.argv[1:], 'config': open(path).read(), 'path': path,"
        " 'mode': oct(os.stat(path).st_mode & 0o777)}\n"
        f"json.dump(seen, open({str(record)!r}, 'w'))\n"
    )
    tool.chmod(0o755)
    return tool, record


def _run(metadata_url: str, ossutil: Path, role: str = ROLE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            oss_role_sync.__file__,
            "--role",
            role,
            "--endpoint",
            "https://oss-cn-hangzhou-internal.aliyuncs.com",
            "--ossutil",
            str(ossutil),
            "--metadata-url",
            metadata_url,
            "oss://bucket/tb/",
            "/var/lib/gpuinfra/tb/",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_ossutil_gets_role_credentials_in_a_private_file(
    metadata_url: str, fake_ossutil: tuple[Path, Path]
) -> None:
    tool, record = fake_ossutil
    result = _run(metadata_url, tool)
    assert result.returncode == 0, result.stderr
    seen = json.loads(record.read_text())
    path = seen["path"]
    assert seen["argv"] == [
        "sync",
        "oss://bucket/tb/",
        "/var/lib/gpuinfra/tb/",
        "-f",
        "-u",
        "-c",
        path,
    ]
    assert seen["mode"] == "0o600"
    assert seen["config"].splitlines() == [
        "[Credentials]",
        "endpoint=https://oss-cn-hangzhou-internal.aliyuncs.com",
        "accessKeyID=STS.key-id",
        "accessKeySecret=key-secret",
        "stsToken=sts-token",
    ]
    # Never on a command line, and the file is gone afterwards.
    assert not any(secret in " ".join(seen["argv"]) for secret in ("key-secret", "sts-token"))
    assert not Path(path).exists()


def test_unknown_role_exits_1_with_a_message(
    metadata_url: str, fake_ossutil: tuple[Path, Path]
) -> None:
    tool, record = fake_ossutil
    result = _run(metadata_url, tool, role="other-role")
    assert result.returncode == 1
    assert result.stderr.startswith("oss sync: metadata service:") and "404" in result.stderr
    assert "Traceback" not in result.stderr
    assert not record.exists()


def test_the_workstation_ships_this_script(ws_plans: dict) -> None:
    document = yaml.safe_load(
        instance(ws_plans["alicloud"], "alicloud").inputs[USER_DATA["alicloud"]]
    )
    [script] = [f for f in document["write_files"] if f["path"] == OSS_SYNC_SCRIPT]
    assert script["content"] == oss_role_sync_source() == Path(oss_role_sync.__file__).read_text()
    sync = next(
        f["content"]
        for f in document["write_files"]
        if f["path"].endswith("gpuinfra-tb-sync.service")
    )
    role = ws_plans["alicloud"].one(
        "alicloud:ram/role:Role", "gpuinfra-alicloud-dev-workstation-role"
    )
    assert f"python3 {OSS_SYNC_SCRIPT} --role {role.inputs['roleName']} " in sync
