"""`gpuinfra sizing --stack` and `gpuinfra reachability` read a GPU-layer stack's cluster stack
offline, which they can only where it is a stack of this project: another project's is
refused, each in its own command's words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuinfra.cli_errors import UserError
from gpuinfra.project import ProjectError
from gpuinfra.reachability import stack_deploy_from
from gpuinfra.sizing import stack_pools
from tests.conftest import ROOT


@pytest.fixture
def foreign_layer(tmp_path: Path) -> Path:
    """This project with a GPU-layer stack `layer` on a stack of another project."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    text = (ROOT / "Pulumi.prod-gpu.yaml").read_text()
    foreign = text.replace("organization/gpuinfra/prod", "organization/elsewhere/prod")
    assert foreign != text
    (tmp_path / "Pulumi.layer.yaml").write_text(foreign)
    return tmp_path


def test_sizing_refuses_a_cluster_stack_of_another_project(foreign_layer: Path) -> None:
    with pytest.raises(UserError) as caught:
        stack_pools(foreign_layer, "layer")
    assert "'organization/elsewhere/prod' is not a stack of this project" in str(caught.value)
    assert "--stack" in str(caught.value)


def test_reachability_refuses_a_cluster_stack_of_another_project(foreign_layer: Path) -> None:
    with pytest.raises(ProjectError) as caught:
        stack_deploy_from(foreign_layer, "layer")
    message = str(caught.value)
    assert "gpuinfra:clusterStack = 'organization/elsewhere/prod'" in message
    assert "(<org>/gpuinfra/<stack>) can be read offline" in message


def test_both_read_the_cluster_stack_of_this_project() -> None:
    assert [p.name for p in stack_pools(ROOT, "prod-gpu")] == [
        p.name for p in stack_pools(ROOT, "prod")
    ]
    assert stack_deploy_from(ROOT, "prod-gpu").sentence.startswith("inside")
