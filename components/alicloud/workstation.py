"""GPU workstation on ECS: Alibaba's Ubuntu image with the NVIDIA driver, Jupyter, TensorBoard.

One instance behind the admin security group (SSH from `adminCidrs` only; Jupyter and
TensorBoard listen on loopback, reached through an SSH tunnel), the metadata service in
hardened mode (tokens required, like IMDSv2), an encrypted ESSD system disk and a RAM role,
attached with `ecs.RamRoleAttachment`, that reaches one OSS bucket.
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
    CloudInitArgs,
    Layout,
    render,
    ubuntu_driver_install,
)

from .identity import bucket_access_policy
from .storage import oss_endpoint

GPU_IMAGE_NAME_REGEX = r"^ubuntu_22_04_x64_\d+G_with_gpu_driver_and_cuda_alibase_"
"""Alibaba's public (owners=system) Ubuntu 22.04 image with the NVIDIA driver and CUDA
preinstalled, e.g. `ubuntu_22_04_x64_100G_with_gpu_driver_and_cuda_alibase_20260405.vhd`.
Source: image names used on gn7i in cn-hangzhou and cn-shanghai by public Terraform modules
and scripts (2025-12 to 2026-05); Alibaba's help pages do not list the 22.04 edition by name.
Its system disk is 100 GiB, which the settings enforce. The lookup also filters on the instance
type, so only images that run on the GPU type match."""
PLAIN_IMAGE_NAME_REGEX = r"^ubuntu_22_04_x64_20G_alibase_"
"""Fallback where a region lacks the GPU image: plain Ubuntu 22.04, whose driver cloud-init
installs. Anchored on `_20G_alibase_` because `^ubuntu_22_04_x64` alone also matches the GPU
image, and `most_recent` would then pick whichever of the two is newer."""
LOGIN_USER = "root"
"""Alibaba's Ubuntu images log in as root with the key pair (the services run as an
unprivileged user)."""
OSSUTIL_INSTALL = "curl -fsSL https://gosspublic.alicdn.com/ossutil/install.sh | bash"
"""Alibaba's installer for ossutil 1.x (OSS docs, "Install ossutil"), which the TensorBoard
sync's `oss` backend runs (components/workstation_tb_sync.py)."""


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

        gpu_images, plain_images = (
            alicloud.ecs.get_images_output(
                owners="system",
                name_regex=regex,
                instance_type=s.instance.instance_type,
                status="Available",
                most_recent=True,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            for regex in (GPU_IMAGE_NAME_REGEX, PLAIN_IMAGE_NAME_REGEX)
        )

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
        layout = Layout()

        def cloud_init(parts: list[str]) -> str:
            bucket, role_name = parts
            return render(
                CloudInitArgs(
                    login_user=LOGIN_USER,
                    ssh_public_key=s.ssh_public_key,
                    # As the instance's RAM role, through the hardened metadata mode.
                    sync=["oss", "--role", role_name, "--endpoint", endpoint, f"oss://{bucket}/"],
                    layout=layout,
                    # A no-op on the GPU image; installs the driver on the fallback image.
                    # Not Alibaba's console auto-install: that script is fetched through the
                    # metadata service's `source-address`, which hardened mode guards with a
                    # token; Ubuntu's own packaged driver is the dependable route.
                    driver_install=ubuntu_driver_install(),
                    setup=[OSSUTIL_INSTALL],
                )
            )

        # No secret in it: the Jupyter token is generated on the instance.
        user_data = pulumi.Output.all(args.bucket_name, role.role_name).apply(cloud_init)
        public = s.subnet == "public"
        instance = alicloud.ecs.Instance(
            f"{name}-workstation",
            instance_name=f"{name}-workstation",
            image_id=pulumi.Output.all(gpu_images.ids, plain_images.ids).apply(
                lambda found: pick_image(found[0], found[1])
            ),
            instance_type=s.instance.instance_type,
            vswitch_id=args.vswitch_id,
            security_groups=[args.admin_security_group_id],
            key_name=key.key_pair_name,
            # Hardened metadata mode: every metadata read needs a session token (IMDSv2-like).
            # No `http_put_response_hop_limit`: the provider documents it as "not available
            # for use yet" (website/docs/r/instance.html.markdown:241 at v1.289.0); the API
            # default is 1.
            http_endpoint="enabled",
            http_tokens="required",
            system_disk_category="cloud_essd",
            system_disk_size=s.root_disk_gb,
            system_disk_encrypted=True,
            instance_charge_type="PostPaid",
            spot_strategy="SpotAsPriceGo" if s.capacity_type == "spot" else "NoSpot",
            # A reclaimed spot workstation is stopped, not released: its disk of notebooks
            # stays (the provider's default, Terminate, releases both).
            spot_interruption_behavior="Stop" if s.capacity_type == "spot" else None,
            internet_charge_type="PayByTraffic",
            internet_max_bandwidth_out=100 if public else 0,
            user_data=user_data,
            tags=tags,
            volume_tags=tags,
            opts=self.instance_options(image="imageId", user_data="userData"),
        )
        # The instance's `role_name` is deprecated since provider 1.275.0 in favour of this
        # resource (resource_alicloud_instance.go:765-769 at v1.289.0). The role arrives
        # after the first boot; the TensorBoard sync retries every minute until it does.
        alicloud.ecs.RamRoleAttachment(
            f"{name}-workstation-role-attachment",
            instance_id=instance.id,
            ram_role_name=role.role_name,
            opts=child,
        )
        self.publish(
            instance_id=instance.id,
            address=instance.public_ip if public else instance.private_ip,
            login_user=LOGIN_USER,
            layout=layout,
        )


def pick_image(gpu_image_ids: list[str], plain_image_ids: list[str]) -> str:
    """The newest GPU image, else the newest plain Ubuntu 22.04 (both lists newest first)."""
    for ids in (gpu_image_ids, plain_image_ids):
        if ids:
            return ids[0]
    raise ValueError(
        f"no public image matches {GPU_IMAGE_NAME_REGEX} or {PLAIN_IMAGE_NAME_REGEX} for this "
        "instance type in this region"
    )


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
