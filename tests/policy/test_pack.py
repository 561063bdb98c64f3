"""The CrossGuard pack imports without starting its server and runs the shared rules."""

from __future__ import annotations

from types import ModuleType

import yaml

from gpuinfra.policy_rules import RULES

from .conftest import PACK, resource, run


def test_one_policy_per_rule_plus_accepted_variants(pack: ModuleType) -> None:
    names = {p.name for p in pack.policies()}
    assert {r.id for r in RULES} <= names
    assert "no-world-open-admin-ports-accepted" in names


def test_pack_reports_a_world_open_port_as_mandatory(pack: ModuleType) -> None:
    rule = resource(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        {"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "0.0.0.0/0"},
    )
    assert len(run(pack, "no-world-open-admin-ports", [rule])) == 1
    accepted = {"allowPublicAdminAccess": True}
    assert run(pack, "no-world-open-admin-ports", [rule], accepted) == []
    assert len(run(pack, "no-world-open-admin-ports-accepted", [rule], accepted)) == 1


def test_pack_sees_protect(pack: ModuleType) -> None:
    bucket = {"acl": "private", "encryptionAlgorithm": "AES256", "versioningEnable": True}
    assert run(pack, "bucket-protected", [resource("tencentcloud:Cos/bucket:Bucket", bucket)])
    protected = resource("tencentcloud:Cos/bucket:Bucket", bucket, protect=True)
    assert run(pack, "bucket-protected", [protected]) == []


def test_pack_files() -> None:
    root = PACK.parent
    runtime = yaml.safe_load((root / "PulumiPolicy.yaml").read_text())["runtime"]
    assert runtime["name"] == "python" and runtime["options"]["virtualenv"] == "venv"
    assert "pulumi-policy" in (root / "requirements.txt").read_text()
