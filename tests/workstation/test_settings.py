"""Workstation settings: exit 2 naming the key for a CPU type, a missing or malformed key."""

from __future__ import annotations

import pytest

from components.settings import SettingsError, parse_settings
from components.settings.workstation import ssh_key_problem
from tests.autoscaling.conftest import parse
from tests.autoscaling.conftest import problems as stack_problems

from .conftest import ON, SSH_KEY

BASE = {
    "cloud": "aws",
    "gpuPoolInstanceType": "g5.xlarge",
    "workstationEnabled": "true",
    "gpuLayer": "separate",
}


def _problems(**raw: str) -> dict[str, object]:
    with pytest.raises(SettingsError) as info:
        parse_settings({**BASE, **raw}, stack="t", provider_config={"aws:region": "us-east-1"})
    return {p.key: p for p in info.value.problems}


def test_cpu_instance_type_is_refused() -> None:
    problems = _problems(workstationInstanceType="m6i.large", workstationSshPublicKey=SSH_KEY)
    assert "gpuinfra:workstationInstanceType" in problems


def test_missing_key_is_refused() -> None:
    problems = _problems()
    assert list(problems) == ["gpuinfra:workstationSshPublicKey"]


@pytest.mark.parametrize(
    "key",
    [
        "ssh-ed25519",
        "ssh-dss AAAAB3NzaC1kc3M=",
        "ssh-ed25519 not-base64!",
        "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIG",
    ],
)
def test_malformed_key_is_refused(key: str) -> None:
    assert ssh_key_problem(key)
    assert "gpuinfra:workstationSshPublicKey" in _problems(workstationSshPublicKey=key)


def test_off_by_default_and_on() -> None:
    off = parse_settings(
        {"cloud": "aws", "gpuPoolInstanceType": "g5.xlarge", "gpuLayer": "separate"},
        stack="t",
        provider_config={"aws:region": "us-east-1"},
    )
    assert off.workstation is None
    on = parse_settings(
        {**BASE, "workstationSshPublicKey": SSH_KEY, "workstationGpuModel": "A10G"},
        stack="t",
        provider_config={"aws:region": "us-east-1"},
    )
    assert on.workstation is not None and on.workstation.instance.gpu_model == "A10G"
    assert ssh_key_problem(SSH_KEY) is None


def test_existing_cluster_refuses_every_workstation_key() -> None:
    """`cloud: kubernetes` creates no VM, so a workstation key there is a mistake, not a no-op."""
    found = stack_problems(
        "k8s-dev",
        {
            "workstationEnabled": True,
            "workstationSshPublicKey": SSH_KEY,
            "workstationInstanceType": "g5.xlarge",
        },
    )
    for key in ("workstationEnabled", "workstationSshPublicKey", "workstationInstanceType"):
        assert "does not apply to cloud kubernetes" in found[f"gpuinfra:{key}"]


@pytest.mark.parametrize("disk", [80, 4096])
def test_alicloud_bounds_the_system_disk(disk: int) -> None:
    """On Alibaba the disk is the system disk (at most 2048) holding the 100 GB GPU image;
    both sizes are fine elsewhere."""
    found = stack_problems("alicloud-dev", {**ON, "workstationRootDiskGb": disk})
    assert list(found) == ["gpuinfra:workstationRootDiskGb"]
    assert "between 100 and 2048" in found["gpuinfra:workstationRootDiskGb"]
    assert "GPU driver" in found["gpuinfra:workstationRootDiskGb"]
    for stack in ("dev", "tencentcloud-dev"):
        workstation = parse(stack, {**ON, "workstationRootDiskGb": disk}).workstation
        assert workstation is not None and workstation.root_disk_gb == disk


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"workstationInstanceType": "p3.2xlarge"}, "gpuinfra:workstationInstanceType"),
        ({"workstationGpuModel": "V100"}, "gpuinfra:workstationGpuModel"),
        ({"gpuPoolInstanceType": "p3.8xlarge"}, "gpuinfra:workstationInstanceType"),
    ],
)
def test_aws_refuses_types_the_deep_learning_ami_does_not_support(
    raw: dict[str, str], key: str
) -> None:
    """P3 (V100) is not among the DLAMI's supported instances: refused before anything runs,
    naming the key that chose it and the types that work."""
    problems = _problems(workstationSshPublicKey=SSH_KEY, **raw)
    assert list(problems) == [key]
    text = str(problems[key])
    assert "Deep Learning AMI" in text and "p3." in text and "g5.xlarge" in text
    assert "p4d.24xlarge" in text and "p3.2xlarge, " not in text.split("choose one of:")[1]


def test_aws_takes_a_supported_type() -> None:
    for instance_type in ("g4dn.xlarge", "g6.xlarge", "p4d.24xlarge", "p5.48xlarge"):
        settings = parse_settings(
            {**BASE, "workstationSshPublicKey": SSH_KEY, "workstationInstanceType": instance_type},
            stack="t",
            provider_config={"aws:region": "us-east-1"},
        )
        assert settings.workstation is not None
        assert settings.workstation.instance.instance_type == instance_type


def test_a_spot_workstation_is_refused_on_tencent_cloud() -> None:
    """A SPOTPAID CVM cannot delete its data disk with it (the provider refuses
    delete_with_instance there), so the notebooks' disk would outlive `pulumi destroy`."""
    found = stack_problems("tencentcloud-dev", {**ON, "workstationCapacityType": "spot"})
    assert list(found) == ["gpuinfra:workstationCapacityType"]
    message = found["gpuinfra:workstationCapacityType"]
    assert "Tencent" in message and "onDemand" in message and "826-833" in message
