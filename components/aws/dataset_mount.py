"""Mountpoint for Amazon S3 CSI driver: the EKS add-on and the IRSA role it reads the bucket with.

Facts from awslabs/mountpoint-s3-csi-driver@v2.7.0 (2026-06-11):
- driver-level IRSA: the role is assumed by the ServiceAccount `s3-csi-driver-sa` in
  `kube-system` for every volume without `authenticationSource: pod`
  (docs/CONFIGURATION.md "Driver-Level Credentials with IRSA");
- the node DaemonSet must run on the tainted GPU nodes: `node.tolerateAllTaints` (chart values
  charts/aws-mountpoint-s3-csi-driver/values.yaml:41-42; one of the few keys the EKS add-on's
  configuration schema takes: awslabs/mountpoint-s3-csi-driver issue 784);
- permissions for reading: `s3:ListBucket` on the bucket, `s3:GetObject` on its objects
  (awslabs/mountpoint-s3 doc/CONFIGURATION.md "IAM permissions"; the volumes are read-only).

The add-on's version is left to EKS: CreateAddon without `addonVersion` installs the default
version for the cluster's Kubernetes minor, and the provider keeps what it reads back
(`addon_version` Optional+Computed: hashicorp/terraform-provider-aws
internal/service/eks/addon.go), so later `pulumi up`s change nothing. An `eksbuild` suffix
could not be confirmed here; pinning a guessed one would fail CreateAddon.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.cluster_handle import MOUNTPOINT_S3_DRIVER, DatasetMount

from .identity import ServiceAccountRole, ServiceAccountRoleArgs

ADDON_NAME = "aws-mountpoint-s3-csi-driver"
DRIVER_NAMESPACE = "kube-system"
DRIVER_SERVICE_ACCOUNT = "s3-csi-driver-sa"
ADDON_CONFIGURATION = {"node": {"tolerateAllTaints": True}}


@dataclass(frozen=True)
class MountpointS3DriverArgs:
    cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    bucket_arn: pulumi.Input[str]
    tags: Mapping[str, str]
    depends_on: Sequence[pulumi.Resource] = ()
    """The node groups: CreateAddon is awaited until ACTIVE, which needs nodes to run on."""


def read_only_bucket_policy(bucket_arn: str) -> str:
    """List and read one bucket's objects; nothing else."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ListTheBucket",
                    "Effect": "Allow",
                    "Action": ["s3:ListBucket"],
                    "Resource": bucket_arn,
                },
                {
                    "Sid": "ReadObjects",
                    "Effect": "Allow",
                    "Action": ["s3:GetObject"],
                    "Resource": f"{bucket_arn}/*",
                },
            ],
        }
    )


class MountpointS3Driver(pulumi.ComponentResource):
    mount: DatasetMount
    role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: MountpointS3DriverArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:MountpointS3Driver", name, None, opts)
        role = ServiceAccountRole(
            f"{name}-s3-csi",
            ServiceAccountRoleArgs(
                oidc_provider_arn=args.oidc_provider_arn,
                oidc_issuer_url=args.oidc_issuer_url,
                namespace=DRIVER_NAMESPACE,
                service_account=DRIVER_SERVICE_ACCOUNT,
                policy=pulumi.Output.from_input(args.bucket_arn).apply(read_only_bucket_policy),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        addon = aws.eks.Addon(
            f"{name}-s3-csi-addon",
            cluster_name=args.cluster_name,
            addon_name=ADDON_NAME,
            service_account_role_arn=role.role_arn,
            configuration_values=json.dumps(ADDON_CONFIGURATION),
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on)),
        )
        self.role_arn = role.role_arn
        self.mount = DatasetMount(driver=MOUNTPOINT_S3_DRIVER, ready=(addon,))
        self.register_outputs({"role_arn": self.role_arn})
