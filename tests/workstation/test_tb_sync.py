"""The TensorBoard sync the workstation runs: every Job's `<bucket>/<job>/tb/` into
`<dest>/<job>/`, nothing else of the bucket; per cloud, as the instance's role."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components import workstation_tb_sync as sync
from components.workstation_cloud_init import TB_SYNC_SCRIPT
from tests.fake_http import Answer, Fake

from .conftest import BUCKET, user_data, written_files

ROLE = "ws-role"
TOKEN = "metadata-session-token"
CREDENTIALS = {
    "AccessKeyId": "STS.key-id",
    "AccessKeySecret": "key-secret",
    "SecurityToken": "sts-token",
    "Expiration": "2026-11-30T12:00:00Z",
    "Code": "Success",
}
JOB_SHAPED = {
    "job-a/tb/events.out.tfevents.1.host": b"a1",
    "job-a/tb/nested/events.out.tfevents.2.host": b"a2",
    "job-a/step-000100.pt": b"checkpoint",
    "job-b/tb/events.out.tfevents.3.host": b"b1",
    "datasets/imagenet/train/0001.jpg": b"image",
    "README.txt": b"top-level object",
    "../tb/escape": b"a key that would leave dest",
    "job-c/tb/../../escape": b"so would this one",
}


@pytest.fixture(scope="module")
def shipped_script(ws_plans: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sync script exactly as the AWS workstation's cloud-init writes it."""
    text = written_files(user_data(ws_plans["aws"], "aws"))[TB_SYNC_SCRIPT]
    path = tmp_path_factory.mktemp("shipped") / "tb_sync.py"
    path.write_text(text)
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# --- s3 ------------------------------------------------------------------------------------


def test_s3_copies_every_jobs_tb_folder_and_nothing_else(s3_bucket: Any, tmp_path: Path) -> None:
    for key, body in JOB_SHAPED.items():
        s3_bucket.put_object(Bucket=BUCKET, Key=key, Body=body)
    dest = tmp_path / "tb"
    folders = ["datasets", "job-a", "job-b", "job-c"]  # `..` left out
    assert sync.s3_round(BUCKET, dest, "us-east-1") == folders
    assert _tree(dest) == {
        "job-a/events.out.tfevents.1.host": b"a1",
        "job-a/nested/events.out.tfevents.2.host": b"a2",
        "job-b/events.out.tfevents.3.host": b"b1",
    }
    assert not list(tmp_path.glob("escape*")) and not (tmp_path / "tb" / "escape").exists()


def test_s3_replaces_a_grown_event_file_and_leaves_the_rest(s3_bucket: Any, tmp_path: Path) -> None:
    """A grown file arrives as a new file renamed over the old (a reader never sees half of
    it); an unchanged one is not downloaded again."""
    key_a, key_b = "job-a/tb/events.out.tfevents.1.host", "job-b/tb/events.out.tfevents.3.host"
    s3_bucket.put_object(Bucket=BUCKET, Key=key_a, Body=b"step1")
    s3_bucket.put_object(Bucket=BUCKET, Key=key_b, Body=b"other")
    dest = tmp_path / "tb"
    sync.s3_round(BUCKET, dest, "us-east-1")
    a, b = dest / "job-a/events.out.tfevents.1.host", dest / "job-b/events.out.tfevents.3.host"
    inode_a, inode_b = a.stat().st_ino, b.stat().st_ino
    s3_bucket.put_object(Bucket=BUCKET, Key=key_a, Body=b"step1step2")
    sync.s3_round(BUCKET, dest, "us-east-1")
    assert a.read_bytes() == b"step1step2" and a.stat().st_ino != inode_a
    assert b.stat().st_ino == inode_b
    assert sorted(p.name for p in (dest / "job-a").iterdir()) == [a.name]  # no temp left


def test_the_shipped_script_syncs_s3_from_the_command_line(
    s3_bucket: Any, tmp_path: Path, shipped_script: Path
) -> None:
    """The stripped copy in the user data runs as the unit runs it (one round here)."""
    s3_bucket.put_object(Bucket=BUCKET, Key="job-a/tb/events.1", Body=b"x")
    done = subprocess.run(
        [sys.executable, str(shipped_script), "s3", "--region", "us-east-1",
         f"s3://{BUCKET}/", f"{tmp_path}/tb/"],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tb sync: 1 folder(s): job-a"
    assert (tmp_path / "tb/job-a/events.1").read_bytes() == b"x"


def test_a_failed_round_exits_1_with_a_message(tmp_path: Path, shipped_script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(shipped_script), "s3", "--region", "us-east-1",
         "s3://a/b/", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == "tb sync: expected s3://<bucket>/, got 's3://a/b/'"


# --- oss (Alibaba Cloud) ------------------------------------------------------------------


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


def _fake_cli(tmp_path: Path, name: str, listing: str) -> tuple[Path, Path]:
    """A bucket CLI that prints `listing` for `ls` and records every call (arguments, its -c
    file's content and mode) in a JSON lines file."""
    record = tmp_path / f"{name}.calls"
    tool = tmp_path / name
    tool.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "path = sys.argv[sys.argv.index('-c') + 1]\n"
        "seen = {'argv': sys.argv[1:], 'config': open(path).read(), 'path': path,"
        " 'mode': oct(os.stat(path).st_mode & 0o777)}\n"
        f"open({str(record)!r}, 'a').write(json.dumps(seen) + '\\n')\n"
        f"if sys.argv[1] == 'ls': print({listing!r})\n"
    )
    tool.chmod(0o755)
    return tool, record


# ossutil 1.x `ls oss://<bucket>/ -d`: objects and common prefixes as URLs, then a summary
# (lib/ls.go showObjects/showDirectories at v1.7.19).
OSSUTIL_LS = f"""oss://{BUCKET}/README.txt
oss://{BUCKET}/datasets/
oss://{BUCKET}/job-a/
oss://{BUCKET}/job-b/
oss://{BUCKET}/../
Object and Directory Number is: 5

0.101234(s) elapsed"""


def _run_oss(
    script: Path, metadata_url: str, ossutil: Path, dest: Path, role: str = ROLE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), "oss", "--role", role,
         "--endpoint", "https://oss-cn-hangzhou-internal.aliyuncs.com",
         "--ossutil", str(ossutil), "--metadata-url", metadata_url,
         f"oss://{BUCKET}/", f"{dest}/"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_oss_syncs_each_job_as_the_ram_role_with_a_private_config(
    metadata_url: str, tmp_path: Path, shipped_script: Path
) -> None:
    tool, record = _fake_cli(tmp_path, "ossutil", OSSUTIL_LS)
    dest = tmp_path / "tb"
    done = _run_oss(shipped_script, metadata_url, tool, dest)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    path = calls[0]["path"]
    assert [c["argv"] for c in calls] == [
        ["ls", f"oss://{BUCKET}/", "-d", "-c", path],
        # datasets/ has no tb/ folder: syncing it copies nothing (one listing request).
        ["sync", f"oss://{BUCKET}/datasets/tb/", f"{dest}/datasets/", "-f", "-u", "-c", path],
        ["sync", f"oss://{BUCKET}/job-a/tb/", f"{dest}/job-a/", "-f", "-u", "-c", path],
        ["sync", f"oss://{BUCKET}/job-b/tb/", f"{dest}/job-b/", "-f", "-u", "-c", path],
    ]
    assert {c["mode"] for c in calls} == {"0o600"}
    assert calls[0]["config"].splitlines() == [
        "[Credentials]",
        "endpoint=https://oss-cn-hangzhou-internal.aliyuncs.com",
        "accessKeyID=STS.key-id",
        "accessKeySecret=key-secret",
        "stsToken=sts-token",
    ]
    # Never on a command line, and the file is gone afterwards.
    assert not any("key-secret" in " ".join(c["argv"]) for c in calls)
    assert not Path(path).exists()


def test_unknown_role_exits_1_with_a_message(
    metadata_url: str, tmp_path: Path, shipped_script: Path
) -> None:
    tool, record = _fake_cli(tmp_path, "ossutil", OSSUTIL_LS)
    done = _run_oss(shipped_script, metadata_url, tool, tmp_path / "tb", role="other-role")
    assert done.returncode == 1
    assert done.stderr.startswith("tb sync: metadata service:") and "404" in done.stderr
    assert "Traceback" not in done.stderr
    assert not record.exists()


def test_the_alibaba_workstation_syncs_as_its_role(ws_plans: dict) -> None:
    plan = ws_plans["alicloud"]
    units = written_files(user_data(plan, "alicloud"))
    unit = units["/etc/systemd/system/gpuinfra-tb-sync.service"]
    role = plan.one("alicloud:ram/role:Role", "gpuinfra-alicloud-dev-workstation-role")
    assert f" oss --role {role.inputs['roleName']} --endpoint " in unit
    assert units[TB_SYNC_SCRIPT] == sync_source_as_shipped()


def sync_source_as_shipped() -> str:
    from components.workstation_cloud_init import tb_sync_source

    return tb_sync_source()


# --- cos (Tencent Cloud) ------------------------------------------------------------------


# coscli `ls cos://<bucket>/`: a borderless tablewriter table, common prefixes as DIR rows
# (util/list.go ListObjects at v1.0.6).
COSCLI_LS = "\n".join(
    [
        "     KEY     |   TYPE   |       LAST MODIFIED       |   ETAG   | SIZE  | RESTORESTATUS",
        "-------------+----------+---------------------------+----------+-------+----------------",
        "  datasets/  | DIR      |                           |          |       |",
        "  job-a/     | DIR      |                           |          |       |",
        "  job-b/     | DIR      |                           |          |       |",
        '  README.txt | STANDARD | 2026-11-30T12:00:00+08:00 | "abc123" | 16 B  |',
        "-------------+----------+---------------------------+----------+-------+----------------",
        "                                                     TOTAL OBJECTS:  |       4",
    ]
)


def test_cos_syncs_each_job_with_the_cvm_role_config(tmp_path: Path, shipped_script: Path) -> None:
    tool, record = _fake_cli(tmp_path, "coscli", COSCLI_LS)
    config = tmp_path / "cos.yaml"
    config.write_text("cos: {base: {mode: CvmRole, cvmrolename: ws-role}}\n")
    dest = tmp_path / "tb"
    done = subprocess.run(
        [sys.executable, str(shipped_script), "cos", "--config", str(config),
         "--coscli", str(tool), f"cos://{BUCKET}/", f"{dest}/"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line)["argv"] for line in record.read_text().splitlines()]
    c = str(config)
    assert calls == [
        ["ls", f"cos://{BUCKET}/", "-c", c],
        ["sync", f"cos://{BUCKET}/datasets/tb/", f"{dest}/datasets/", "-r", "-c", c],
        ["sync", f"cos://{BUCKET}/job-a/tb/", f"{dest}/job-a/", "-r", "-c", c],
        ["sync", f"cos://{BUCKET}/job-b/tb/", f"{dest}/job-b/", "-r", "-c", c],
    ]


def test_listing_parsers_take_only_safe_folder_names() -> None:
    assert sync.oss_top_level(OSSUTIL_LS, BUCKET) == ["datasets/", "job-a/", "job-b/", "../"]
    assert sync.cos_top_level(COSCLI_LS) == ["datasets/", "job-a/", "job-b/"]
    assert sync.job_names(["job-a/", "../", "./", "a b/", "-x/", "job_b.2/"]) == [
        "job-a",
        "job_b.2",
    ]
    assert sync.safe_relative("events.1") == Path("events.1")
    assert sync.safe_relative("nested/events.1") == Path("nested/events.1")
    for unsafe in ("", "folder/", "../x", "a/../../x", "a//b", "./x"):
        assert sync.safe_relative(unsafe) is None, unsafe
