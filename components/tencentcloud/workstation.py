"""GPU workstation on CVM: Ubuntu with the NVIDIA driver, Jupyter and TensorBoard.

One instance behind the admin security group (SSH from `adminCidrs` only; Jupyter and
TensorBoard listen on loopback, reached through an SSH tunnel) plus an egress-only group, a
CAM role that reaches one COS bucket, and an encrypted data disk at /data: the provider's CVM
resource cannot encrypt the system disk (only `data_disks` take `encrypt`), so everything the
workstation keeps (the service user's home and notebooks, the venvs, the synced TensorBoard
logs, the Jupyter token) lives on /data and the system disk holds the OS only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import tencentcloud_iac_pulumi as tencentcloud
import yaml

from components.settings.workstation import WorkstationSettings
from components.workstation_access import WorkstationBase
from components.workstation_cloud_init import (
    CloudInitArgs,
    Layout,
    render,
    ubuntu_driver_install,
)

from .identity import bucket_access_policy
from .names import key_pair_name
from .storage import cos_endpoint

IMAGE_NAME_REGEX = r"^Ubuntu Server 22\.04"
"""Tencent's public images are named e.g. `Ubuntu Server 22.04 LTS 64位`; the lookup
(`images.get_instance`, PUBLIC_IMAGE, filtered on the instance type, newest first) returns
those that run on the GPU type. No public Ubuntu image carries the Tesla driver (Tencent's
public GRID-driver images are for vGPU types only; driver images in the Marketplace are old
CentOS ones), and the console's "install the GPU driver in the background" has no API field
(RunInstances' EnhancedService holds only security, monitor and automation agents; the
provider's `tencentcloud_instance` has no driver argument). So cloud-init installs Ubuntu's
packaged datacenter driver. Sources: Tencent docs 560/76423 (NVIDIA driver guide), CVM API
2017-03-12 RunInstances, terraform-provider-tencentcloud@v1.82.42 `instance` docs."""
LOGIN_USER = "ubuntu"
"""The image's SSH user (has sudo; the services run as an unprivileged user)."""
SYSTEM_DISK_GB = 50
DATA_DIR = "/data"
LAYOUT = Layout(data_root=f"{DATA_DIR}/gpuinfra", home_root=f"{DATA_DIR}/home")
"""All the workstation's state on the encrypted data disk."""
MOUNT_DATA_DISK = f"""\
root_disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)")
data_disk=$(lsblk -dpno NAME,TYPE \\
  | awk -v root="/dev/$root_disk" '$2 == "disk" && $1 != root {{print $1}}' | tail -n 1)
if [[ -z "$data_disk" ]]; then echo "no data disk besides /dev/$root_disk" >&2; exit 1; fi
blkid "$data_disk" >/dev/null || mkfs.ext4 -q "$data_disk"
mkdir -p {DATA_DIR}
uuid=$(blkid -s UUID -o value "$data_disk")
if ! grep -q ' {DATA_DIR} ' /etc/fstab; then
  echo "UUID=$uuid {DATA_DIR} ext4 defaults,nofail 0 2" >>/etc/fstab
fi
mount -a
mountpoint -q {DATA_DIR}"""
"""The encrypted data disk (the one disk that is not the root disk) becomes /data, by UUID."""
COSCLI_VERSION = "v1.0.6"
"""Latest tencentyun/coscli release checked (util/const.go, tag of 2025-03-20); release assets
are named `coscli-<version>-linux-amd64`."""
COSCLI_CONFIG = "/etc/gpuinfra/cos.yaml"
"""coscli takes the CVM role only from its config file (`cos.base.mode: CvmRole`,
`cvmrolename`): its command line has no role flag, and `--init-skip` without a config file
demands a SecretId (coscli cmd/root.go, util/client.go at v1.0.6)."""


@dataclass(frozen=True)
class GpuWorkstationArgs:
    settings: WorkstationSettings
    vpc_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    availability_zone: pulumi.Input[str]
    admin_security_group_id: pulumi.Input[str]
    bucket_name: pulumi.Input[str]
    app_id: str
    region: str
    tags: Mapping[str, str]


class GpuWorkstation(WorkstationBase):
    def __init__(
        self, name: str, args: GpuWorkstationArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:GpuWorkstation", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        s = args.settings

        images = tencentcloud.images.get_instance_output(
            image_types=["PUBLIC_IMAGE"],
            image_name_regex=IMAGE_NAME_REGEX,
            instance_type=s.instance.instance_type,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )

        # A Tencent security group without rules drops everything: one group lets traffic out.
        egress = tencentcloud.security.Group(
            f"{name}-workstation-egress-sg",
            name=f"{name}-workstation-egress-sg",
            description="gpuinfra workstation: outbound only (packages, COS); no ingress",
            tags=dict(args.tags),
            opts=child,
        )
        tencentcloud.security.GroupRuleSet(
            f"{name}-workstation-egress-sg-rules",
            security_group_id=egress.id,
            egresses=[
                {
                    "action": "ACCEPT",
                    "protocol": "ALL",
                    "port": "ALL",
                    "cidr_block": "0.0.0.0/0",
                    "description": "outbound to package mirrors and COS",
                }
            ],
            opts=child,
        )
        role = tencentcloud.cam.Role(
            f"{name}-workstation-role",
            name=f"{name}-workstation",
            document=_cvm_trust_policy(),
            description="GPU workstation: the stack's COS bucket, nothing else",
            console_login=False,
            tags=dict(args.tags),
            opts=child,
        )
        policy = tencentcloud.cam.Policy(
            f"{name}-workstation-policy",
            name=f"{name}-workstation-bucket",
            document=pulumi.Output.from_input(args.bucket_name).apply(
                lambda bucket: bucket_access_policy(args.region, args.app_id, bucket)
            ),
            description="What the GPU workstation may do: one bucket's objects",
            opts=child,
        )
        tencentcloud.cam.RolePolicyAttachment(
            f"{name}-workstation-policy-attachment",
            role_id=role.id,
            policy_id=policy.id,
            opts=child,
        )
        key = tencentcloud.key.Pair(
            f"{name}-workstation-key",
            key_name=key_pair_name(name, "ws"),
            public_key=s.ssh_public_key,
            tags=dict(args.tags),
            opts=child,
        )

        def cloud_init(parts: list[str]) -> str:
            bucket, role_name = parts
            return render(
                CloudInitArgs(
                    login_user=LOGIN_USER,
                    ssh_public_key=s.ssh_public_key,
                    # The instance's CAM role, fetched from the metadata service by coscli.
                    sync=["cos", "--config", COSCLI_CONFIG, f"cos://{bucket}/"],
                    layout=LAYOUT,
                    driver_install=ubuntu_driver_install(),
                    setup=[
                        MOUNT_DATA_DISK,
                        "curl -fsSL -o /usr/local/bin/coscli https://github.com/tencentyun/"
                        f"coscli/releases/download/{COSCLI_VERSION}/coscli-{COSCLI_VERSION}"
                        "-linux-amd64",
                        "chmod 755 /usr/local/bin/coscli",
                    ],
                    files={COSCLI_CONFIG: coscli_config(bucket, args.region, role_name)},
                )
            )

        # No secret in it: the Jupyter token is generated on the instance.
        user_data = pulumi.Output.all(args.bucket_name, role.name).apply(cloud_init)
        public = s.subnet == "public"
        instance = tencentcloud.instance.Instance(
            f"{name}-workstation",
            instance_name=f"{name}-workstation",
            image_id=images.images.apply(_first_image),
            instance_type=s.instance.instance_type,
            availability_zone=args.availability_zone,
            vpc_id=args.vpc_id,
            subnet_id=args.subnet_id,
            orderly_security_groups=[args.admin_security_group_id, egress.id],
            cam_role_name=role.name,
            key_ids=[key.id],
            system_disk_type="CLOUD_PREMIUM",
            system_disk_size=SYSTEM_DISK_GB,
            data_disks=[
                {
                    "data_disk_type": "CLOUD_PREMIUM",
                    "data_disk_size": s.root_disk_gb,
                    "encrypt": True,
                    "delete_with_instance": True,
                }
            ],
            instance_charge_type="SPOTPAID" if s.capacity_type == "spot" else "POSTPAID_BY_HOUR",
            allocate_public_ip=public,
            internet_charge_type="TRAFFIC_POSTPAID_BY_HOUR" if public else None,
            internet_max_bandwidth_out=100 if public else 0,
            user_data_raw=user_data,
            tags={**args.tags, "Name": f"{name}-workstation"},
            opts=self.instance_options(image="imageId", user_data="userDataRaw"),
        )
        self.publish(
            instance_id=instance.id,
            address=instance.public_ip if public else instance.private_ip,
            login_user=LOGIN_USER,
            layout=LAYOUT,
        )


def _first_image(images: Sequence[Any]) -> str:
    if not images:
        raise ValueError(f"no public image matches {IMAGE_NAME_REGEX} for this instance type")
    return str(images[0].image_id)


def coscli_config(bucket: str, region: str, role_name: str) -> str:
    """coscli's config (its `cos:` key, util/types.go): the CVM role, and the bucket's region
    and endpoint so no `-e` is needed. No keys: coscli fetches temporary ones for the role."""
    return yaml.safe_dump(
        {
            "cos": {
                "base": {
                    "mode": "CvmRole",
                    "cvmrolename": role_name,
                    "protocol": "https",
                    # Nothing to encrypt: the file holds no key.
                    "disableencryption": "true",
                },
                "buckets": [
                    {
                        "name": bucket,
                        "alias": bucket,
                        "region": region,
                        "endpoint": cos_endpoint(region).removeprefix("https://"),
                    }
                ],
            }
        },
        sort_keys=False,
    )


def _cvm_trust_policy() -> str:
    """CVM instances (and only them) may assume the role (CAM "role for CVM" guide)."""
    return json.dumps(
        {
            "version": "2.0",
            "statement": [
                {
                    "action": "name/sts:AssumeRole",
                    "effect": "allow",
                    "principal": {"service": ["cvm.qcloud.com"]},
                }
            ],
        }
    )
