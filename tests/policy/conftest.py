"""The CrossGuard pack, loaded as a module without starting its server, and driven through the
SDK's own analyzer service (`Analyze`, `AnalyzeStack`) with requests marshalled the way the
engine marshals them, unknown values included.

The engine's side (pulumi/pulumi, cited by path and line):
- `Analyze` gets a resource's inputs before its step, `AnalyzeStack` every resource's outputs
  after all steps (pkg/resource/deploy/step_generator.go:1469 and :3496);
- both marshal with `KeepUnknowns: true, KeepSecrets: true` (pkg/resource/plugin/
  analyzer_plugin.go:307, :351): an unknown value becomes its type's sentinel string
  (sdk/go/common/resource/plugin/rpc.go:190-200 and `marshalUnknownProperty`, :290-306;
  sentinels at :64-86), a secret becomes `{sig: secret, value}`;
- a policy pack's config reaches `Configure` with every policy's enforcement level
  (pkg/engine/update.go:1031-1038, `ReconcilePolicyPackConfig` then `Configure`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from pulumi_policy.policy import _PolicyAnalyzerServicer

PACK = Path(__file__).resolve().parents[2] / "policy" / "__main__.py"
PACK_VERSION = "0.2.0"

# The engine's unknown sentinels (sdk/go/common/resource/plugin/rpc.go:64-86).
UNKNOWN_SENTINELS = {
    "bool": "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
    "number": "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
    "string": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
    "array": "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
    "object": "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
}
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


@dataclass(frozen=True)
class Unknown:
    """A value the engine does not know yet, of one type (string, number, bool, array, object)."""

    kind: str = "string"


@dataclass(frozen=True)
class Secret:
    value: Any


UNKNOWN = Unknown()


def marshal(value: Any) -> Any:
    """`value` as the engine puts it on the wire to an analyzer."""
    if isinstance(value, Unknown):
        return UNKNOWN_SENTINELS[value.kind]
    if isinstance(value, Secret):
        return {SIG_KEY: SECRET_SIG, "value": marshal(value.value)}
    if isinstance(value, dict):
        return {k: marshal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [marshal(v) for v in value]
    return value


def struct(props: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(marshal(props), struct_pb2.Struct())


@dataclass
class Res:
    """One resource as a test writes it: type, properties (with `Unknown`/`Secret`), protect."""

    type: str
    props: dict[str, Any]
    protect: bool = False
    name: str = "r"
    links: dict[str, list[str]] = field(default_factory=dict)
    """Property dependencies (input -> URNs), sent with AnalyzeStack."""
    given_urn: str = ""

    @property
    def urn(self) -> str:
        return self.given_urn or f"urn:pulumi:test::gpuinfra::{self.type}::{self.name}"

    def request(self) -> Any:
        return proto.AnalyzeRequest(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=struct(self.props),
            options=proto.AnalyzerResourceOptions(protect=self.protect),
        )

    def stack_entry(self) -> Any:
        deps = {k: proto.AnalyzerPropertyDependencies(urns=v) for k, v in self.links.items()}
        return proto.AnalyzerResource(
            type=self.type,
            urn=self.urn,
            name=self.name,
            properties=struct(self.props),
            options=proto.AnalyzerResourceOptions(protect=self.protect),
            propertyDependencies=deps,
        )


def resource(type_: str, props: dict[str, Any], protect: bool = False, name: str = "r") -> Res:
    return Res(type_, props, protect, name)


@dataclass(frozen=True)
class Diagnostic:
    policy: str
    level: str
    message: str
    urn: str

    @property
    def cannot_run(self) -> bool:
        """The SDK's "can't run policy ... during preview" (an unknown value was read)."""
        return "can't run policy" in self.message


_LEVEL_NAMES = {proto.MANDATORY: "mandatory", proto.ADVISORY: "advisory"}


class Analyzer:
    """The pack behind the SDK's gRPC servicer, called as the engine calls it."""

    def __init__(self, pack: ModuleType, config: dict[str, dict[str, Any]] | None = None) -> None:
        self.servicer = _PolicyAnalyzerServicer(
            pack.PACK_NAME, PACK_VERSION, pack.policies(), pack.EnforcementLevel.ADVISORY
        )
        info = self.servicer.GetAnalyzerInfo(None, None)
        self.info = {p.name: p for p in info.policies}
        request = proto.ConfigureAnalyzerRequest()
        for name, policy in self.info.items():
            entry = proto.PolicyConfig(enforcementLevel=policy.enforcementLevel)
            if config and name in config:
                entry.properties.update(config[name])
            request.policyConfig[name].CopyFrom(entry)
        self.servicer.Configure(request, None)

    @staticmethod
    def _diagnostics(response: Any) -> list[Diagnostic]:
        return [
            Diagnostic(d.policyName, _LEVEL_NAMES[d.enforcementLevel], d.message, d.urn)
            for d in response.diagnostics
        ]

    def analyze(self, res: Res) -> list[Diagnostic]:
        """What the engine hears before the resource's step (preview and up alike)."""
        return self._diagnostics(self.servicer.Analyze(res.request(), None))

    def analyze_stack(self, resources: list[Res]) -> list[Diagnostic]:
        """What the engine hears after all steps."""
        request = proto.AnalyzeStackRequest(resources=[r.stack_entry() for r in resources])
        return self._diagnostics(self.servicer.AnalyzeStack(request, None))

    def all(self, resources: list[Res]) -> list[Diagnostic]:
        found = [d for r in resources for d in self.analyze(r)]
        return found + self.analyze_stack(resources)


@pytest.fixture(scope="module")
def pack() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpuinfra_policy_pack", PACK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # would block forever if it built the PolicyPack
    return module


def run(pack: ModuleType, name: str, resources: list[Res], config: dict | None = None) -> list[str]:
    """The messages policy `name` reports for `resources`, through Analyze and AnalyzeStack,
    with `config` as that policy's config (the opt-ins `gpuinfra policy-config` writes)."""
    analyzer = Analyzer(pack, {name: config} if config else None)
    return [d.message for d in analyzer.all(resources) if d.policy == name]
