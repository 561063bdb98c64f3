# ruff: noqa: E501
"""The CrossGuard pack imports without starting its server and runs the shared rules."""

from __future__ import annotations

from types import ModuleType

import yaml

from gpuinfra.policy_rules import RULES

from .conftest import PACK, PACK_VERSION, resource, run


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
    """PulumiPolicy.yaml as pulumi/pulumi reads it: `runtime` is a ProjectRuntimeInfo (a name,
    or `{name, options}`; sdk/go/common/workspace/project.go `PolicyPackProject`), the Python
    host takes `options.virtualenv` relative to the pack (pulumi-language-python main.go
    `parseOptions`), and `version` is the pack's version (the Python SDK reports 0.0.1)."""
    root = PACK.parent
    project = yaml.safe_load((root / "PulumiPolicy.yaml").read_text())
    assert project["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}
    assert project["version"] == PACK_VERSION and isinstance(project["version"], str)
    assert set(project) <= {"runtime", "version", "main", "description", "author", "website", "license"}  # fmt: skip
    requirements = (root / "requirements.txt").read_text()
    assert "pulumi-policy" in requirements and "pulumi>=" in requirements
    assert "policy/venv" in (root.parent / ".gitignore").read_text()
