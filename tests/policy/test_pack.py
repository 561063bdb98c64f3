"""The CrossGuard pack imports without starting its server and runs the shared rules."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pulumi_policy import PolicyResource, PolicyResourceOptions, StackValidationArgs

from gpuinfra.policy_rules import RULES

PACK = Path(__file__).resolve().parents[2] / "policy" / "__main__.py"


@pytest.fixture(scope="module")
def pack() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpuinfra_policy_pack", PACK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # would block forever if it built the PolicyPack
    return module


def resource(type_: str, props: dict[str, Any], protect: bool = False) -> PolicyResource:
    opts = PolicyResourceOptions(
        protect=protect, ignore_changes=[], delete_before_replace=None, aliases=[],
        custom_timeouts=None, additional_secret_outputs=[],  # type: ignore[arg-type]
    )  # fmt: skip
    return PolicyResource(type_, props, f"urn:{type_}::r", "r", opts, None, None, [], {})


def run(pack: ModuleType, name: str, resources: list, config: dict | None = None) -> list[str]:
    [policy] = [p for p in pack.policies() if p.name == name]
    reported: list[str] = []
    args = StackValidationArgs(resources, config or {})
    policy.validate(args, lambda message, urn=None: reported.append(message))
    return reported


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
    assert "runtime: python" in (root / "PulumiPolicy.yaml").read_text()
    assert "pulumi-policy" in (root / "requirements.txt").read_text()
