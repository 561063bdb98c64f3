"""`gpuinfra policy-config`: a stack's explicit opt-ins reach the CrossGuard pack as its config."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import yaml

from gpuinfra.policy_config import pack_config
from tests.conftest import ROOT

from .conftest import resource, run

OPTED_IN = {"gpuinfra:allowPublicAdminAccess": "true", "gpuinfra:protectBucket": "false"}
WORLD_OPEN_SSH = (
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    {"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "0.0.0.0/0"},
)
BUCKET = (
    "tencentcloud:Cos/bucket:Bucket",
    {"acl": "private", "encryptionAlgorithm": "AES256", "versioningEnable": True},
)


def test_each_opt_in_for_the_policy_and_its_accepted_twin() -> None:
    assert pack_config(OPTED_IN) == {
        "no-world-open-admin-ports": {"allowPublicAdminAccess": True},
        "no-world-open-admin-ports-accepted": {"allowPublicAdminAccess": True},
        "cluster-endpoint-not-world-open": {"allowPublicAdminAccess": True},
        "cluster-endpoint-not-world-open-accepted": {"allowPublicAdminAccess": True},
        "bucket-protected": {"protectBucket": False},
        "bucket-protected-accepted": {"protectBucket": False},
    }
    # Keys the stack leaves unset are not opt-ins, whatever their defaults.
    assert pack_config({"gpuinfra:adminCidrs": '["10.0.0.0/8"]'}) == {}


def test_the_pack_turns_accepted_findings_advisory(pack: ModuleType) -> None:
    """As CrossGuard runs it: each policy gets its own entry of the generated config."""
    config = pack_config(OPTED_IN)
    ssh = [resource(*WORLD_OPEN_SSH)]
    bucket = [resource(*BUCKET)]
    for policy, resources in (("no-world-open-admin-ports", ssh), ("bucket-protected", bucket)):
        assert len(run(pack, policy, resources)) == 1  # without the config: mandatory
        assert run(pack, policy, resources, config[policy]) == []
        accepted = f"{policy}-accepted"
        assert len(run(pack, accepted, resources, config[accepted])) == 1


def test_cli_writes_the_file_for_a_stack(tmp_path: Path) -> None:
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("components", "stacks"):  # a gpuinfra project: the CLI checks for it
        (tmp_path / folder).symlink_to(ROOT / folder)
    stack = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    stack["config"]["gpuinfra:allowPublicAdminAccess"] = True
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    out = tmp_path / "policy-config.json"
    command = [sys.executable, "-m", "gpuinfra", "policy-config", "--cwd", str(tmp_path)]
    done = subprocess.run([*command, "--stack", "dev", "--out", str(out)], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["no-world-open-admin-ports"] == {
        "allowPublicAdminAccess": True
    }
    missing = subprocess.run([*command, "--stack", "nope"], capture_output=True, text=True)
    assert missing.returncode == 2
    assert "no stack 'nope'" in missing.stderr and "Traceback" not in missing.stderr
