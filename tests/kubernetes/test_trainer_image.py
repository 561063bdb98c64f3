"""The default training image is the one the trainer-image workflow publishes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from components.settings.schema import BY_NAME

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "trainer-image.yml"


def _version() -> str:
    """trainer/__init__.py's __version__, read the way the workflow's `sed` reads it."""
    text = (ROOT / "trainer" / "__init__.py").read_text()
    [version] = re.findall(r'^__version__ = "(.*)"$', text, flags=re.MULTILINE)
    return version


def test_default_trainer_image_is_the_published_tag() -> None:
    default = str(BY_NAME["trainerImage"].default)
    assert default == f"ghcr.io/gpuinfra/trainer:{_version()}"


def test_workflow_builds_the_trainer_dockerfile_and_publishes_that_tag_on_main() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    build = "\n".join(str(s.get("run", "")) for s in wf["jobs"]["build"]["steps"])
    assert "--file trainer/Dockerfile" in build
    publish = wf["jobs"]["publish"]
    assert "refs/heads/main" in publish["if"] and "pull_request" in publish["if"]
    assert publish["permissions"] == {"contents": "read", "packages": "write"}
    assert "packages" not in wf["jobs"]["build"]["permissions"]
    steps = "\n".join(str(s.get("run", "")) for s in publish["steps"])
    assert "sed -n 's/^__version__ = \"\\(.*\\)\"$/\\1/p' trainer/__init__.py" in steps
    assert "ref=ghcr.io/${OWNER,,}/trainer:${version}" in steps
    assert "docker manifest inspect" in steps  # a published tag is never overwritten
    assert 'docker push "$REF"' in steps
