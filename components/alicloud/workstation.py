"""GPU workstation on ECS: Ubuntu with the NVIDIA driver, Jupyter and TensorBoard.

One instance behind the admin security group (22, 8888, 6006 from `adminCidrs` only), the
metadata service in hardened mode (tokens required, like IMDSv2), an encrypted ESSD system
disk and a RAM role that reaches one OSS bucket.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from components.settings.workstation import WorkstationSettings
from components.workstation_access import WorkstationBase
from components.workstation_cloud_init import (
    TENSORBOARD_PREFIX,
    CloudInitArgs,
    render,
)

from .identity import bucket_access_policy
from .storage import oss_endpoint

IMAGE_NAME_REGEX = r"^ubuntu_22_04_x64"
"""Alibaba's public (owners=system) Ubuntu 22.04 images are named `ubuntu_22_04_x64_20G_
alibase_<date>.vhd`; the lookup also filters on the instance type, so only images that run on
the GPU type match. They carry no NVIDIA driver: cloud-init installs Ubuntu's packaged
datacenter driver (`ubuntu-drivers install --gpgpu`, Ubuntu Server docs "NVIDIA drivers
installation")."""
DRIVER_BRANCH = "550-server"
LOGIN_USER = "root"
SERVICE_USER = "gpuinfra"
"""Runs JupyterLab and TensorBoard: never root, since a Jupyter terminal is a shell."""
"""Alibaba's Ubuntu images log in as root with the key pair."""
OSSUTIL_INSTALL = "curl -fsSL https://gosspublic.alicdn.com/ossutil/install.sh | bash"
"""Alibaba's installer for ossutil 1.x (OSS docs, "Install ossutil")."""
TB_DIR = "/var/lib/gpuinfra/tb"


@dataclass(frozen=True)
class GpuWorkstationArgs:
    settings: WorkstationSettings
    vswitch_id: pulumi.Input[str]
    admin_security_group_id: pulumi.Input[str]
    bucket_name: pulumi.Input[str]
    region: str
    tags: Mapping[str, str]


class GpuWorkstation(WorkstationBase):
    def __init__(
        self, name: str, args: GpuWorkstationArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:GpuWorkstation", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        s = args.settings
        tags = {**args.tags, "Name": f"{name}-workstation"}

        images = alicloud.ecs.get_images_output(
            owners="system",
            name_regex=IMAGE_NAME_REGEX,
            instance_type=s.instance.instance_type,
            most_recent=True,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        jupyter_token = self.new_jupyter_token(name)

        role = alicloud.ram.Role(
            f"{name}-workstation-role",
            role_name=f"{name}-workstation",
            assume_role_policy_document=_ecs_trust_policy(),
            description="GPU workstation: the stack's OSS bucket, nothing else",
            tags=dict(args.tags),
            opts=child,
        )
        policy = alicloud.ram.Policy(
            f"{name}-workstation-policy",
            policy_name=f"{name}-workstation-oss",
            policy_document=pulumi.Output.from_input(args.bucket_name).apply(bucket_access_policy),
            description="What the GPU workstation may do: one bucket's objects",
            tags=dict(args.tags),
            opts=child,
        )
        alicloud.ram.RolePolicyAttachment(
            f"{name}-workstation-policy-attachment",
            role_name=role.role_name,
            policy_name=policy.policy_name,
            policy_type="Custom",
            opts=child,
        )
        key = alicloud.ecs.EcsKeyPair(
            f"{name}-workstation-key",
            key_pair_name=f"{name}-workstation",
            public_key=s.ssh_public_key,
            tags=dict(args.tags),
            opts=child,
        )

        endpoint = oss_endpoint(args.region, internal=True)

        def cloud_init(parts: list[str]) -> str:
            bucket, role_name, secret = parts
            return render(
                CloudInitArgs(
                    user=LOGIN_USER,
                    # Alibaba's Ubuntu images log in as root: the services get their own user.
                    service_user=SERVICE_USER,
                    ssh_public_key=s.ssh_public_key,
                    tensorboard_logdir=TB_DIR,
                    notebook_dir=f"/home/{SERVICE_USER}/notebooks",
                    driver_install=[
                        "apt-get install -y ubuntu-drivers-common",
                        f"ubuntu-drivers install --gpgpu nvidia:{DRIVER_BRANCH}",
                        f"apt-get install -y nvidia-utils-{DRIVER_BRANCH}",
                        "modprobe nvidia",
                    ],
                    setup=[OSSUTIL_INSTALL],
                    # The instance's RAM role, fetched from the metadata service by ossutil.
                    tensorboard_sync=(
                        f"ossutil sync oss://{bucket}/{TENSORBOARD_PREFIX} {TB_DIR}/ -f -u "
                        f"--mode EcsRamRole --ecs-role-name {role_name} -e {endpoint}"
                    ),
                ),
                secret,
            )

        user_data: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(args.bucket_name, role.role_name, jupyter_token).apply(cloud_init)
        )
        public = s.subnet == "public"
        instance = alicloud.ecs.Instance(
            f"{name}-workstation",
            instance_name=f"{name}-workstation",
            image_id=images.ids.apply(_first_image),
            instance_type=s.instance.instance_type,
            vswitch_id=args.vswitch_id,
            security_groups=[args.admin_security_group_id],
            role_name=role.role_name,
            key_name=key.key_pair_name,
            # Hardened metadata mode: every metadata read needs a session token (IMDSv2-like).
            http_endpoint="enabled",
            http_tokens="required",
            http_put_response_hop_limit=1,
            system_disk_category="cloud_essd",
            system_disk_size=s.root_disk_gb,
            system_disk_encrypted=True,
            instance_charge_type="PostPaid",
            spot_strategy="SpotAsPriceGo" if s.capacity_type == "spot" else "NoSpot",
            internet_charge_type="PayByTraffic",
            internet_max_bandwidth_out=100 if public else 0,
            user_data=user_data,
            tags=tags,
            volume_tags=tags,
            opts=child,
        )
        self.publish(
            instance_id=instance.id,
            address=instance.public_ip if public else instance.private_ip,
            login_user=LOGIN_USER,
            jupyter_token=jupyter_token,
        )


def _first_image(ids: list[str]) -> str:
    if not ids:
        raise ValueError(f"no public image matches {IMAGE_NAME_REGEX} for this instance type")
    return ids[0]


def _ecs_trust_policy() -> str:
    """ECS instances (and only them) may assume the role (RAM "instance RAM role" guide)."""
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRole",
                    "Principal": {"Service": ["ecs.aliyuncs.com"]},
                }
            ],
        }
    )
