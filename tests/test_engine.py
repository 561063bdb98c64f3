"""The mock engine itself: records what it is given, refuses what a real engine would."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest

from gpuinfra.engine import DuplicateResourceError, run_program
from gpuinfra.mocks import UnmockedCallError


def _run(program):  # type: ignore[no-untyped-def]
    return run_program(program, project="p", stack="s", config={"aws:region": "eu-west-1"})


def test_records_type_name_parent_inputs_and_protect() -> None:
    class Box(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("test:index:Box", name)
            aws.s3.Bucket(
                f"{name}-bucket",
                tags={"k": "v"},
                opts=pulumi.ResourceOptions(parent=self, protect=True),
            )
            self.register_outputs({})

    plan = _run(lambda: Box("box"))
    box = plan.one("test:index:Box")
    bucket = plan.one("aws:s3/bucket:Bucket")
    assert bucket.parent == box.urn and not box.custom and bucket.custom
    assert bucket.protect is True and box.protect is False
    assert bucket.inputs == {"tags": {"k": "v"}}
    assert bucket.outputs["arn"] == f"arn:aws:s3:::{bucket.outputs['bucket']}"
    assert bucket.outputs["region"] == "eu-west-1"


def test_ids_are_stable_between_runs() -> None:
    def program() -> None:
        aws.ec2.Vpc("net", cidr_block="10.0.0.0/16")

    first = _run(program).one("aws:ec2/vpc:Vpc")
    second = _run(program).one("aws:ec2/vpc:Vpc")
    assert first.id == second.id and first.id is not None and first.id.startswith("vpc-")


def test_duplicate_resource_names_are_refused() -> None:
    def program() -> None:
        aws.ec2.Vpc("same", cidr_block="10.0.0.0/16")
        aws.ec2.Vpc("same", cidr_block="10.1.0.0/16")

    with pytest.raises(DuplicateResourceError, match="same"):
        _run(program)


def test_unmocked_lookup_fails_loudly() -> None:
    def program() -> None:
        aws.ec2.get_vpc_output(default=True).id.apply(lambda _: None)

    with pytest.raises(UnmockedCallError, match="getVpc"):
        _run(program)


def test_applies_run_and_their_errors_surface() -> None:
    def program() -> None:
        vpc = aws.ec2.Vpc("net", cidr_block="10.0.0.0/16")

        def boom(_: str) -> str:
            raise RuntimeError("apply ran")

        vpc.id.apply(boom)

    with pytest.raises(RuntimeError, match="apply ran"):
        _run(program)


def test_exports_and_secrets() -> None:
    def program() -> None:
        pulumi.export("plain", "a")
        pulumi.export("hidden", pulumi.Output.secret("b"))

    plan = _run(program)
    assert plan.outputs == {"plain": "a", "hidden": "b"}
    assert plan.secret_outputs == {"hidden"}


def test_unmocked_ssm_parameter_fails_loudly() -> None:
    def program() -> None:
        aws.ssm.get_parameter_output(name="/my/own/parameter").value.apply(lambda _: None)

    with pytest.raises(UnmockedCallError, match="/my/own/parameter"):
        _run(program)


def test_a_run_leaves_no_open_event_loop() -> None:
    """The SDK's mock monitor makes an event loop per executor thread and never closes it;
    left to the garbage collector, one could print "Exception ignored in BaseEventLoop.__del__"
    at exit. After a run, every loop it made is closed."""
    import asyncio
    import gc

    def program() -> None:
        for i in range(8):  # several registrations and a lookup, on several threads
            aws.ec2.Vpc(f"net-{i}", cidr_block=f"10.{i}.0.0/16")
        aws.get_availability_zones_output(state="available")

    def loops() -> list[asyncio.BaseEventLoop]:
        # type(), not isinstance(): some objects (torch's deprecated aliases) warn on __class__.
        return [o for o in gc.get_objects() if issubclass(type(o), asyncio.BaseEventLoop)]

    before = {id(o) for o in loops()}
    _run(program)
    made = [o for o in loops() if id(o) not in before]
    assert made, "the run made no event loop: this test checks nothing"
    assert [loop for loop in made if not loop.is_closed()] == []
