"""The cloud SDKs are for `gpuinfra prices` alone: the offline preview and sizing load none
of them (they are an optional extra, and slow to import)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDKS = (
    "boto3",
    "botocore",
    "alibabacloud",
    "darabonba",
    "tencentcloud.common",
    "tencentcloud.cvm",
    "volcenginesdk",
)
PROBE = f"""
import contextlib, io, sys
from gpuinfra import cli
with contextlib.redirect_stdout(io.StringIO()):
    assert cli.main(["preview", "--stack", "alicloud-dev"]) == 0
    assert cli.main(["sizing", "--params", "3e8"]) == 0
print(sorted(m for m in sys.modules if m.startswith({SDKS!r})))
"""


def test_preview_and_sizing_import_no_cloud_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
