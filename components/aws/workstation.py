"""GPU workstation on EC2: the Deep Learning AMI with PyTorch, Jupyter and TensorBoard.

One instance behind the admin security group (22, 8888, 6006 from `adminCidrs` only), IMDSv2
required, an encrypted gp3 root volume and an instance profile that reaches one bucket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.settings.workstation import WorkstationSettings
from components.workstation_access import WorkstationBase
from components.workstation_cloud_init import (
    TENSORBOARD_PREFIX,
    CloudInitArgs,
    render,
)

from .iam import service_trust_policy
from .identity import bucket_access_policy

DLAMI_PARAMETER = (
    "/aws/service/deeplearning/ami/x86_64/oss-nvidia-driver-gpu-pytorch-2.9-ubuntu-24.04/"
    "latest/ami-id"
)
"""Public SSM parameter AWS keeps pointing at the newest "Deep Learning OSS Nvidia Driver AMI
GPU PyTorch 2.9 (Ubuntu 24.04)" (DLAMI developer guide, release notes 2026-01 and 2026-03:
NVIDIA driver 580, PyTorch in /opt/pytorch; supports G4dn, G5, G6, G6e, P4, P5). The AMI id
changes when AWS publishes a new build: `pulumi preview` then shows a replacement."""
LOGIN_USER = "ubuntu"
"""Default user of the Ubuntu DLAMI."""


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
        jupyter_token = self.new_jupyter_token(name)

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

        def cloud_init(parts: list[str]) -> str:
            bucket, secret = parts
            return render(
                CloudInitArgs(
                    user=LOGIN_USER,
                    ssh_public_key=s.ssh_public_key,
                    # TensorBoard reads s3:// itself (boto3, credentials from the instance
                    # profile through IMDSv2).
                    tensorboard_logdir=f"s3://{bucket}/{TENSORBOARD_PREFIX}",
                    notebook_dir=f"/home/{LOGIN_USER}/notebooks",
                    packages=["boto3"],
                    environment={"AWS_REGION": args.region},
                ),
                secret,
            )

        user_data: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(args.bucket_name, jupyter_token).apply(cloud_init)
        )
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
                {
                    "market_type": "spot",
                    # Persistent + stop: a reclaimed workstation keeps its disk and restarts
                    # when capacity returns.
                    "spot_options": {
                        "spot_instance_type": "persistent",
                        "instance_interruption_behavior": "stop",
                    },
                }
                if s.capacity_type == "spot"
                else None
            ),
            user_data=user_data,
            tags=tags,
            opts=self.instance_options(image="ami", user_data="userData"),
        )
        address = instance.private_ip
        if public:
            # A fixed address: a stop and start (a spot reclaim with `stop`, or the user)
            # would otherwise give the instance a new public IP and stale SSH/Jupyter outputs.
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
            jupyter_token=jupyter_token,
        )
