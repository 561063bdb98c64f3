"""Stack files are handed to the program exactly as the Pulumi CLI would hand them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuinfra.project import (
    SECRET_PLACEHOLDER,
    ProjectError,
    engine_text,
    load_project,
    load_stack_config,
)


def test_engine_text() -> None:
    assert engine_text(True) == "true" and engine_text(False) == "false"
    assert engine_text(3) == "3"
    assert engine_text("1.33") == "1.33"
    assert json.loads(engine_text(["10.0.0.0/8"])) == ["10.0.0.0/8"]


def _project(tmp_path: Path, stack_yaml: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: gpuinfra\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text(stack_yaml)
    return tmp_path


def test_secure_values_are_placeholders_and_secret(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        "config:\n  gpuinfra:token:\n    secure: v1:abc\n  aws:region: us-east-1\n  plain: 2\n",
    )
    config = load_stack_config(load_project(root), "x")
    assert config.values["gpuinfra:token"] == SECRET_PLACEHOLDER
    assert config.secret_keys == ["gpuinfra:token"]
    assert config.values["aws:region"] == "us-east-1"
    assert config.values["gpuinfra:plain"] == "2"  # unqualified keys belong to the project


def test_malformed_stack_file(tmp_path: Path) -> None:
    root = _project(tmp_path, "config: [1, 2\n")
    with pytest.raises(ProjectError, match="not valid YAML"):
        load_stack_config(load_project(root), "x")


def test_stacks_are_listed(tmp_path: Path) -> None:
    root = _project(tmp_path, "config: {}\n")
    assert load_project(root).stacks() == ["x"]
