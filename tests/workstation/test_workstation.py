"""GpuWorkstation on each cloud: admin group, encryption, IMDSv2, role, outputs, absent when
off."""

from __future__ import annotations

import json

import pytest

from gpuinfra import cost, planview
from gpuinfra.engine import Plan
from gpuinfra.policy_rules import evaluate, has_mandatory
from tests.conftest import build

from .conftest import INSTANCE, STACKS, USER_DATA, build_ws, instance


def _admin_group_id(plan: Plan, cloud: str) -> str:
    suffix = "-admin-sg"
    groups = {
        "aws": "aws:ec2/securityGroup:SecurityGroup",
        "alicloud": "alicloud:ecs/securityGroup:SecurityGroup",
        "tencentcloud": "tencentcloud:Security/group:Group",
    }
    [group] = [r for r in plan.of_type(groups[cloud]) if r.name.endswith(suffix)]
    assert group.id
    return group.id


@pytest.mark.parametrize("cloud", list(STACKS))
def test_absent_when_off(cloud: str) -> None:
    plan = build(STACKS[cloud])
    assert plan.of_type(INSTANCE[cloud]) == []
    assert plan.of_type("random:index/randomPassword:RandomPassword") == []
    assert not [k for k in plan.outputs if k.startswith("workstation")]
    assert not [r for r in plan.resources if "workstation" in r.name]


@pytest.mark.parametrize("cloud", list(STACKS))
def test_behind_the_admin_security_group(ws_plans: dict[str, Plan], cloud: str) -> None:
    plan = ws_plans[cloud]
    inputs = instance(plan, cloud).inputs
    key = {"aws": "vpcSecurityGroupIds", "alicloud": "securityGroups"}.get(
        cloud, "orderlySecurityGroups"
    )
    assert _admin_group_id(plan, cloud) in inputs[key]


def test_aws_imdsv2_encrypted_root_and_bucket_only_profile(ws_plans: dict[str, Plan]) -> None:
    plan = ws_plans["aws"]
    i = instance(plan, "aws").inputs
    assert i["metadataOptions"]["httpTokens"] == "required"
    assert i["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert i["rootBlockDevice"]["encrypted"] is True
    assert i["rootBlockDevice"]["volumeSize"] == 200
    assert i["instanceType"] == "g5.xlarge"  # the GPU pool's type when none is given
    assert i["ami"].startswith("ami-")
    profile = plan.one("aws:iam/instanceProfile:InstanceProfile")
    assert i["iamInstanceProfile"] == profile.outputs["name"]
    policy = json.loads(
        plan.one("aws:iam/rolePolicy:RolePolicy", "gpuinfra-dev-workstation-bucket").inputs[
            "policy"
        ]
    )
    bucket = plan.one("aws:s3/bucket:Bucket").outputs["arn"]
    resources = {
        r
        for s in policy["Statement"]
        for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    }
    assert resources <= {bucket, f"{bucket}/*"}


def test_aws_spot_and_private_subnet() -> None:
    plan = build_ws("aws", {"workstationCapacityType": "spot", "workstationSubnet": "private"})
    i = instance(plan, "aws").inputs
    assert i["instanceMarketOptions"]["marketType"] == "spot"
    # One-time: no spot request outlives `pulumi destroy` (terraform-provider-aws#38142).
    assert i["instanceMarketOptions"]["spotOptions"] == {
        "spotInstanceType": "one-time",
        "instanceInterruptionBehavior": "terminate",
    }
    assert i["associatePublicIpAddress"] is False
    private = {r.id for r in plan.of_type("aws:ec2/subnet:Subnet") if "private" in r.name}
    assert i["subnetId"] in private
    assert plan.outputs["workstationAddress"].startswith("10.")


def test_alicloud_hardened_metadata_encrypted_disk_ram_role(ws_plans: dict[str, Plan]) -> None:
    plan = ws_plans["alicloud"]
    ecs = instance(plan, "alicloud")
    i = ecs.inputs
    assert i["httpTokens"] == "required"
    # Neither the deprecated `role_name` nor the hop limit the provider marks unavailable.
    assert "roleName" not in i and "httpPutResponseHopLimit" not in i
    assert i["systemDiskEncrypted"] is True
    assert i["systemDiskSize"] == 200
    role = plan.one("alicloud:ram/role:Role", "gpuinfra-alicloud-dev-workstation-role")
    attachment = plan.one("alicloud:ecs/ramRoleAttachment:RamRoleAttachment")
    assert attachment.inputs == {"instanceId": ecs.id, "ramRoleName": role.inputs["roleName"]}
    trust = json.loads(role.inputs["assumeRolePolicyDocument"])
    assert trust["Statement"][0]["Principal"]["Service"] == ["ecs.aliyuncs.com"]
    # The public image with the driver preinstalled, not the plain one that is newer.
    assert i["imageId"] == "ubuntu_22_04_x64_100G_with_gpu_driver_and_cuda_alibase_20260520"


def test_alicloud_image_falls_back_to_plain_ubuntu() -> None:
    from components.alicloud.workstation import pick_image

    assert pick_image(["gpu-new", "gpu-old"], ["plain"]) == "gpu-new"
    assert pick_image([], ["plain-new", "plain-old"]) == "plain-new"
    with pytest.raises(ValueError, match="no public image matches"):
        pick_image([], [])


def test_tencentcloud_encrypted_disk_and_cam_role(ws_plans: dict[str, Plan]) -> None:
    plan = ws_plans["tencentcloud"]
    i = instance(plan, "tencentcloud").inputs
    assert [d["encrypt"] for d in i["dataDisks"]] == [True]
    assert i["dataDisks"][0]["dataDiskSize"] == 200
    role = plan.one("tencentcloud:Cam/role:Role", "gpuinfra-tencentcloud-dev-workstation-role")
    assert i["camRoleName"] == role.inputs["name"]
    assert i["imageId"].startswith("img-")


@pytest.mark.parametrize("cloud", list(STACKS))
def test_outputs_say_how_to_reach_it_and_hold_no_secret(
    ws_plans: dict[str, Plan], cloud: str
) -> None:
    """An SSH tunnel to the servers on the VM's loopback; the token fetched over SSH."""
    plan = ws_plans[cloud]
    address = plan.outputs["workstationAddress"]
    user = {"aws": "ubuntu", "alicloud": "root", "tencentcloud": "ubuntu"}[cloud]
    assert plan.outputs["workstationSshCommand"] == f"ssh {user}@{address}"
    assert plan.outputs["workstationTunnelCommand"] == (
        f"ssh -N -L 8888:127.0.0.1:8888 -L 6006:127.0.0.1:6006 {user}@{address}"
    )
    token_file = (
        "/data/gpuinfra/jupyter-token"
        if cloud == "tencentcloud"
        else ("/var/lib/gpuinfra/jupyter-token")
    )
    sudo = "" if user == "root" else "sudo "
    assert plan.outputs["workstationJupyterTokenCommand"] == (
        f"ssh {user}@{address} {sudo}cat {token_file}"
    )
    assert plan.outputs["workstationJupyterUrl"] == "http://localhost:8888/lab"
    assert plan.outputs["workstationTensorBoardUrl"] == "http://localhost:6006/"
    assert not [k for k in plan.secret_outputs if k.startswith("workstation")]
    # The token is made on the VM: nothing in the plan generates or holds one.
    assert plan.of_type("random:index/randomPassword:RandomPassword") == []
    assert "token=" not in instance(plan, cloud).inputs[USER_DATA[cloud]]


@pytest.mark.parametrize("cloud", list(STACKS))
def test_no_mandatory_policy_finding_and_costed(ws_plans: dict[str, Plan], cloud: str) -> None:
    view = planview.from_plan(ws_plans[cloud], cloud)
    findings = evaluate(view)
    assert not has_mandatory(findings), [f for f in findings]
    lines = [line for line in cost.estimate(view).lines if line.type == INSTANCE[cloud]]
    assert [line.item for line in lines] == ["instance", "root volume"]  # the disk bills too
    assert "workstation" in lines[0].what
    if cloud == "aws":
        assert lines[0].monthly and lines[0].monthly > 500  # g5.xlarge on-demand, all month


@pytest.mark.parametrize("cloud", list(STACKS))
def test_keeps_its_image_and_user_data(ws_plans: dict[str, Plan], cloud: str) -> None:
    """A newer image or cloud-init template must not replace the VM holding the notebooks."""
    i = instance(ws_plans[cloud], cloud)
    image = {"aws": "ami", "alicloud": "imageId", "tencentcloud": "imageId"}[cloud]
    assert i.ignore_changes == [image, USER_DATA[cloud]]
    # Names the engine knows: each is an input the instance was given.
    assert all(name in i.inputs for name in i.ignore_changes)


def test_alicloud_spot_workstation_is_stopped_not_released() -> None:
    spot = instance(build_ws("alicloud", {"workstationCapacityType": "spot"}), "alicloud").inputs
    assert (spot["spotStrategy"], spot["spotInterruptionBehavior"]) == ("SpotAsPriceGo", "Stop")
    on_demand = instance(build_ws("alicloud"), "alicloud").inputs
    assert on_demand["spotStrategy"] == "NoSpot" and "spotInterruptionBehavior" not in on_demand


def test_aws_public_workstation_keeps_its_address(ws_plans: dict[str, Plan]) -> None:
    """An Elastic IP: a stop/start (spot reclaim with `stop`) must not change the address."""
    plan = ws_plans["aws"]
    eip = plan.one("aws:ec2/eip:Eip", "gpuinfra-dev-workstation-eip")
    assert eip.inputs["instance"] == instance(plan, "aws").id
    assert eip.inputs["domain"] == "vpc"
    assert plan.outputs["workstationAddress"] == eip.outputs["publicDns"]
    assert plan.outputs["workstationAddress"].startswith("ec2-198-51-")
    private = build_ws("aws", {"workstationSubnet": "private"})
    assert not [r for r in private.of_type("aws:ec2/eip:Eip") if "workstation" in r.name]


def test_the_type_picker_takes_a_named_gpu_pools_type() -> None:
    """`workstationGpuPool` picks that pool's type (dev: `large` is g5.12xlarge); a name of
    no pool, or a pool next to an explicit type, is refused naming the key."""
    from components.settings import SettingsError

    plan = build_ws("aws", {"workstationGpuPool": "large"})
    assert instance(plan, "aws").inputs["instanceType"] == "g5.12xlarge"
    with pytest.raises(SettingsError) as caught:
        build_ws("aws", {"workstationGpuPool": "huge"})
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith('gpuinfra:workstationGpuPool = "huge"')
    assert "small (g5.xlarge), large (g5.12xlarge)" in problem
    with pytest.raises(SettingsError) as caught:
        build_ws("aws", {"workstationGpuPool": "large", "workstationInstanceType": "g5.xlarge"})
    assert [p.key for p in caught.value.problems] == ["gpuinfra:workstationGpuPool"]
