"""The mock engine: runs the Pulumi program with no CLI, no plugins and no credentials.

Tests and the offline preview both use it. It answers every resource registration
and lookup with realistic outputs (`mock_outputs`) and records each resource with
its type, name, parent, provider, options and inputs as the engine receives them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from . import mocks as mock_outputs
from .mocks.stack_reference import (
    STACK_REFERENCE,
    StackOutputs,
    UnresolvedStackReferenceError,
    stack_reference_outputs,
)
from .provider_rules import ProviderRulesError, check_resources


class DuplicateResourceError(Exception):
    """Two resources with the same URN: the real engine would refuse the program."""


@dataclass
class RecordedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    """URN of the parent, or None for a child of the stack."""
    provider: str | None
    custom: bool
    protect: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    id: str | None
    dependencies: list[str] = field(default_factory=list)
    ignore_changes: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    """Input paths whose change makes Pulumi replace the resource (`*`: any)."""
    secret_inputs: list[str] = field(default_factory=list)
    """Top-level inputs that are (or hold) a secret: `inputs` has them in plain text for the
    tests; the JSON plan prints them as `[secret]`."""


@dataclass
class Plan:
    project: str
    stack: str
    resources: list[RecordedResource]
    outputs: dict[str, Any]
    secret_outputs: set[str]
    config: dict[str, str] = field(default_factory=dict)
    """The stack config the program ran with (qualified keys; secret values masked), so the
    cost estimate and the policy checks can read settings such as explicit opt-ins."""

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> RecordedResource:
        found = [r for r in self.of_type(type_) if name is None or r.name == name]
        if len(found) != 1:
            names = [r.name for r in self.of_type(type_)]
            raise LookupError(f"expected one {type_} named {name!r}, found {len(found)}: {names}")
        return found[0]


class _CloudMocks(pulumi.runtime.Mocks):
    def __init__(
        self, config: Mapping[str, str], stack_references: Mapping[str, StackOutputs]
    ) -> None:
        self.config = config
        self.stack_references = stack_references

    def region(self, token: str) -> str:
        """The region the token's provider runs in: its own `<package>:region` config key."""
        package = token.split(":")[0]
        return self.config.get(f"{package}:region") or mock_outputs.DEFAULT_REGION.get(
            package, "us-east-1"
        )

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict]:
        if args.typ == STACK_REFERENCE:
            state = stack_reference_outputs(args.inputs, self.stack_references)
            return state["name"], state
        resource_id, state = mock_outputs.resource_outputs(
            args.typ, args.name, args.inputs, custom=bool(args.custom), region=self.region(args.typ)
        )
        return resource_id or "", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        region = self.region(args.token)
        return mock_outputs.call_result(args.token, args.args, region=region), []


class _RecordingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: _CloudMocks) -> None:
        super().__init__(mocks)
        self.recorded: list[RecordedResource] = []
        self.errors: list[Exception] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.thread_loops: set[asyncio.AbstractEventLoop] = set()
        """Event loops the SDK's mock monitor made on executor threads; closed after a run."""

    def _track_thread_loop(self) -> None:
        # MockMonitor's RPC methods give each executor thread an event loop of its own
        # (pulumi.runtime.sync_await._ensure_event_loop) and never close it. Left to the
        # garbage collector, such a loop could be collected after its socket and print
        # "Exception ignored in BaseEventLoop.__del__" at exit.
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # this call made none
            return
        with self._lock:
            self.thread_loops.add(loop)

    def Invoke(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        try:
            return super().Invoke(request)
        finally:
            self._track_thread_loop()

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        try:
            return super().ReadResource(request)
        except UnresolvedStackReferenceError as error:
            # The SDK's RPC plumbing would swallow it: `run_program` raises it afterwards.
            self.errors.append(error)
            raise
        finally:
            self._track_thread_loop()

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        urn = self.make_urn(request.parent, request.type, request.name)
        with self._lock:  # registrations arrive on several executor threads at once
            if urn in self._seen:
                # Recorded, not raised: an exception here is swallowed by the SDK's RPC
                # plumbing; `run_program` raises it once the program has finished.
                self.errors.append(DuplicateResourceError(f"duplicate resource URN {urn}"))
            self._seen.add(urn)
        try:
            response = super().RegisterResource(request)
        finally:
            self._track_thread_loop()
        if request.type == "pulumi:pulumi:Stack":
            return response
        registration = self.resources[response.urn]
        inputs = rpc.deserialize_properties(request.object)
        self.recorded.append(
            RecordedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                provider=request.provider or None,
                custom=bool(request.custom),
                protect=bool(request.protect),
                inputs=_plain(inputs),
                outputs=_plain(registration.state),
                id=registration.id or None,
                dependencies=list(request.dependencies),
                ignore_changes=list(request.ignoreChanges),
                replace_on_changes=list(request.replaceOnChanges),
                secret_inputs=sorted(k for k, v in inputs.items() if _holds_secret(v)),
            )
        )
        return response


def _holds_secret(value: Any) -> bool:
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return True
        return any(_holds_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secret(v) for v in value)
    return False


def _plain(value: Any) -> Any:
    """Plain JSON-able data: no secret wrappers, whole numbers as ints."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return _plain(value.get("value"))
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire format has only doubles; show 2, not 2.0
    return value


def run_program(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str],
    secret_keys: Sequence[str] = (),
    provider_rules: bool = True,
    stack_references: Mapping[str, StackOutputs] | None = None,
) -> Plan:
    """Run `program` as `pulumi up` would (preview=False: every apply runs) and record it.

    `stack_references`: what each `pulumi.StackReference` the program makes answers, by the
    referenced stack's fully qualified name (`gpuinfra.preview` previews those stacks first).

    Exceptions from the program (e.g. `SettingsError`) propagate unchanged. Then every
    resource meets its provider's rules (`gpuinfra.provider_rules`): `ProviderRulesError`
    lists what a real `pulumi up` would refuse. `provider_rules=False` is for tests that
    check a rule on a plan they build on purpose.
    """
    mocks = _CloudMocks(config, stack_references or {})
    monitor = _RecordingMonitor(mocks)
    # A fresh event loop per run: a program that failed half-way must not leave
    # registrations behind that would surface in the next run (tests run many).
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        pulumi_settings.ROOT.set(None)
        pulumi.runtime.set_all_config(dict(config), list(secret_keys))
        pulumi.runtime.set_mocks(
            mocks, project=project, stack=stack, preview=False, monitor=monitor
        )
        # As `pulumi.runtime.test` does: forget outputs a previous run left pending.
        pulumi_settings.SETTINGS.rpc_manager.clear()
        pulumi_settings.SETTINGS.outputs.clear()
        root = pulumi_settings.get_root_resource()
        _sync_await(run_pulumi_func(program))
        if monitor.errors:
            raise monitor.errors[0]
        outputs, secret = _sync_await(_resolve_exports(getattr(root, "outputs", {})))
    finally:
        _close(loop, monitor.thread_loops)
    if provider_rules:
        refusals = check_resources(monitor.recorded, config)
        if refusals:
            raise ProviderRulesError(refusals)
    return Plan(
        project=project,
        stack=stack,
        resources=monitor.recorded,
        outputs=outputs,
        secret_outputs=secret,
        config={k: "[secret]" if k in secret_keys else v for k, v in config.items()},
    )


def _close(loop: asyncio.AbstractEventLoop, thread_loops: set[asyncio.AbstractEventLoop]) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    # Join the executor threads the SDK ran registrations on, then close the loops they made.
    loop.run_until_complete(loop.shutdown_default_executor())
    for thread_loop in thread_loops - {loop}:
        if not thread_loop.is_closed():
            thread_loop.close()
    loop.close()
    asyncio.set_event_loop(None)


async def _resolve_exports(exports: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    values: dict[str, Any] = {}
    secret: set[str] = set()
    for name, value in exports.items():
        output = pulumi.Output.from_input(value)
        values[name] = await output.future()
        if await output.is_secret():
            secret.add(name)
    return values, secret


__all__ = [
    "DuplicateResourceError",
    "Plan",
    "ProviderRulesError",
    "RecordedResource",
    "StackOutputs",
    "run_program",
]
