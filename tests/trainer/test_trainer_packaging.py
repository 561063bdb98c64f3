"""The trainer's Dockerfile (hadolint) and requirement pins."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from trainer_testlib import REPO

TRAINER = os.path.join(REPO, "trainer")


def _hadolint() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "hadolint")
    found = here if os.path.exists(here) else shutil.which("hadolint")
    assert found, "hadolint not found: pip install -r trainer/requirements-test.txt"
    return found


def test_dockerfile_passes_hadolint() -> None:
    dockerfile = os.path.join(TRAINER, "Dockerfile")
    proc = subprocess.run(
        [_hadolint(), "--no-color", dockerfile], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the linter really lints: an unpinned, root-user Dockerfile is rejected
    bad = subprocess.run(
        [_hadolint(), "--no-color", "-"],
        input="FROM pytorch/pytorch:latest\nRUN pip install s3fs\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "DL3007" in bad.stdout


def test_dockerfile_contract() -> None:
    text = Path(TRAINER, "Dockerfile").read_text()
    base = re.search(r"^FROM (\S+)", text, re.M)
    assert base and re.fullmatch(
        r"pytorch/pytorch:\d+\.\d+\.\d+-cuda12\.\d+-cudnn9-runtime", base[1]
    )
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and not user[-1].startswith(("root", "0"))
    assert 'ENTRYPOINT ["python", "-m", "trainer.launch"]' in text


def test_requirements_are_pinned_by_major() -> None:
    for name in ("requirements.txt", "requirements-test.txt"):
        for line in Path(TRAINER, name).read_text().splitlines():
            spec = line.split("#")[0].strip()
            if not spec or spec.startswith("-r"):
                continue
            assert re.search(r">=[\d.]+,<\d+$", spec), f"{name}: {spec!r} not pinned by major"
            assert not spec.startswith("torch"), "torch comes from the base image / test setup"
