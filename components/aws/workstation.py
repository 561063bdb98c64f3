"""GPU workstation on EC2: the Deep Learning AMI with PyTorch, Jupyter and TensorBoard.

One instance behind the admin security group (SSH from `adminCidrs` only; Jupyter and
TensorBoard listen on loopback, reached through an SSH tunnel), IMDSv2 required, an encrypted
gp3 root volume and an instance profile that reaches one bucket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.settings.workstation import WorkstationSettings
from components.workstation_access import WorkstationBase
from components.workstation_cloud_init import CloudInitArgs, Layout, render

from .iam import service_trust_policy
from .identity import bucket_access_policy

DLAMI_PARAMETER = (
    "/aws/service/deeplearning/ami/x86_64/oss-nvidia-driver-gpu-pytorch-2.9-ubuntu-24.04/"
    "latest/ami-id"
)
"""Public SSM parameter AWS keeps pointing at the newest "Deep Learning OSS Nvidia Driver AMI
GPU PyTorch 2.9 (Ubuntu 24.04)" (DLAMI developer guide, release notes 2026-01 and 2026-03:
NVIDIA driver 580, PyTorch in /opt/pytorch; supports G4dn, G5, G6, G6e, P4, P5). The AMI id
changes when AWS publishes a new build; the instance ignores it (`instance_options`). The
instance types it supports are the settings' `IMAGE_FAMILIES["aws"]`."""
DLAMI_PYTORCH_PYTHON = "/opt/pytorch/bin/python"
"""The DLAMI's PyTorch environment (release notes: `python_location`); the notebook kernel
sees its CUDA PyTorch, built for the AMI's driver."""
LOGIN_USER = "ubuntu"
"""Default user of the Ubuntu DLAMI (has sudo; the services run as an unprivileged user)."""
S3_SYNC_PACKAGES = ["boto3>=1.40,<2"]
"""The S3 backend of the TensorBoard sync (components/workstation_tb_sync.py)."""
SPOT_OPTIONS: aws.ec2.InstanceInstanceMarketOptionsSpotOptionsArgsDict = {
    "spot_instance_type": "one-time",
    "instance_interruption_behavior": "terminate",
}
"""A one-time request closes once fulfilled, so nothing outlives the instance. A persistent
request (the only kind EC2 allows with `stop`) is not cancelled when the provider deletes the
instance and launches an untracked one (hashicorp/terraform-provider-aws#38142; the fix,
PR #41206, is unmerged). A reclaim therefore terminates the workstation with its disk."""


@dataclass(frozen=True)
class GpuWorkstationArgs:
    settings: WorkstationSettings
    vpc_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    """A public subnet when `settings.subnet` is public, else a private one."""
    admin_security_group_id: pulumi.Input[str]
    bucket_name: pulumi.Input[str]
    bucket_arn: pulumi.Input[str]
    region: str
    tags: Mapping[str, str]


class GpuWorkstation(WorkstationBase):
    def __init__(
        self, name: str, args: GpuWorkstationArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:GpuWorkstation", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        s = args.settings
        tags = {**args.tags, "Name": f"{name}-workstation"}

        ami = aws.ssm.get_parameter_output(
            name=DLAMI_PARAMETER, opts=pulumi.InvokeOutputOptions(parent=self)
        )

        # Without an egress rule the instance could not install packages or reach S3.
        egress = aws.ec2.SecurityGroup(
            f"{name}-workstation-egress-sg",
            vpc_id=args.vpc_id,
            description="gpuinfra workstation: outbound only (packages, S3); no ingress",
            egress=[
                {
                    "protocol": "-1",
                    "from_port": 0,
                    "to_port": 0,
                    "cidr_blocks": ["0.0.0.0/0"],
                    "description": "outbound to package mirrors and S3",
                }
            ],
            tags={**args.tags, "Name": f"{name}-workstation-egress-sg"},
            opts=child,
        )
        role = aws.iam.Role(
            f"{name}-workstation-role",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            description="GPU workstation: read and write the stack's bucket, nothing else",
            tags=dict(args.tags),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-workstation-bucket",
            role=role.id,
            policy=pulumi.Output.from_input(args.bucket_arn).apply(bucket_access_policy),
            opts=child,
        )
        profile = aws.iam.InstanceProfile(
            f"{name}-workstation-profile", role=role.name, tags=dict(args.tags), opts=child
        )
        key = aws.ec2.KeyPair(
            f"{name}-workstation-key",
            public_key=s.ssh_public_key,
            tags=dict(args.tags),
            opts=child,
        )

        layout = Layout()

        def cloud_init(bucket: str) -> str:
            return render(
                CloudInitArgs(
                    login_user=LOGIN_USER,
                    ssh_public_key=s.ssh_public_key,
                    # boto3 as the instance profile (IMDSv2); the region named, since boto3
                    # reads AWS_DEFAULT_REGION, not AWS_REGION (botocore configprovider.py).
                    sync=["s3", "--region", args.region, f"s3://{bucket}/"],
                    image_pytorch=DLAMI_PYTORCH_PYTHON,
                    layout=layout,
                    server_packages=S3_SYNC_PACKAGES,
                )
            )

        # No secret in it: the Jupyter token is generated on the instance.
        user_data = pulumi.Output.from_input(args.bucket_name).apply(cloud_init)
        public = s.subnet == "public"
        instance = aws.ec2.Instance(
            f"{name}-workstation",
            ami=ami.value,
            instance_type=s.instance.instance_type,
            subnet_id=args.subnet_id,
            associate_public_ip_address=public,
            vpc_security_group_ids=[args.admin_security_group_id, egress.id],
            iam_instance_profile=profile.name,
            key_name=key.key_name,
            # IMDSv2 only, one hop: a container on the box cannot read the role's credentials.
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",
                "http_put_response_hop_limit": 1,
            },
            root_block_device={
                "volume_size": s.root_disk_gb,
                "volume_type": "gp3",
                "encrypted": True,
                "delete_on_termination": True,
                "tags": tags,
            },
            instance_market_options=(
                {"market_type": "spot", "spot_options": SPOT_OPTIONS}
                if s.capacity_type == "spot"
                else None
            ),
            user_data=user_data,
            tags=tags,
            opts=self.instance_options(image="ami", user_data="userData"),
        )
        address = instance.private_ip
        if public:
            # A fixed address: a stop and start by the user would otherwise give the instance
            # a new public IP and stale SSH outputs.
            # Same price as the auto-assigned one while running ($0.005/h per public IPv4).
            eip = aws.ec2.Eip(
                f"{name}-workstation-eip",
                domain="vpc",
                instance=instance.id,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            address = eip.public_dns
        self.publish(
            instance_id=instance.id,
            address=address,
            login_user=LOGIN_USER,
            layout=layout,
        )
