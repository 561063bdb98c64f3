"""ACK's OSS CSI driver (ossfs) with RRSA: the RAM role its fuse pods read the bucket with.

The driver is ACK's `csi-plugin` add-on, which the cluster installs already
(components/alicloud/cluster.py ADDONS). A PV with `authType: rrsa` and `roleName` makes the
driver run the ossfs pod for the volume in namespace `ack-csi-fuse` under the ServiceAccount
`csi-fuse-ossfs`, exchanging that account's token for the role through the cluster's RRSA
OIDC provider (kubernetes-sigs/alibaba-cloud-csi-driver@v1.37.1:
pkg/mounter/fuse_pod_manager/fuse_pod_manager.go:29 FuseServiceAccountName,
pkg/oss/controllerserver.go:44 fusePodNamespace, pkg/mounter/fuse_pod_manager/oss/utils.go:57-97
CheckRRSAParams/GetRRSAConfig: `roleName` alone, the ARNs from the account and cluster ids).
So the role trusts exactly that ServiceAccount, and may only list and read the bucket
(read-only policy of the driver's docs/oss.md, scoped to one bucket).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi

from components.cluster_handle import OSSFS_DRIVER, DatasetMount

from .identity import RrsaRole, RrsaRoleArgs

FUSE_NAMESPACE = "ack-csi-fuse"
FUSE_SERVICE_ACCOUNT = "csi-fuse-ossfs"


@dataclass(frozen=True)
class OssfsRrsaArgs:
    role_name: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    bucket_name: pulumi.Input[str]
    tags: Mapping[str, str]


def read_only_bucket_policy(bucket: str) -> str:
    """List and read one bucket's objects (oss:Get* and oss:List*, as the driver's docs/oss.md
    read-only policy, on this bucket alone)."""
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["oss:Get*", "oss:List*"],
                    "Resource": [f"acs:oss:*:*:{bucket}", f"acs:oss:*:*:{bucket}/*"],
                }
            ],
        }
    )


class OssfsRrsa(pulumi.ComponentResource):
    mount: DatasetMount
    role_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: OssfsRrsaArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:OssfsRrsa", name, None, opts)
        role = RrsaRole(
            f"{name}-ossfs",
            RrsaRoleArgs(
                role_name=args.role_name,
                oidc_provider_arn=args.oidc_provider_arn,
                oidc_issuer_url=args.oidc_issuer_url,
                namespace=FUSE_NAMESPACE,
                service_account=FUSE_SERVICE_ACCOUNT,
                policy=pulumi.Output.from_input(args.bucket_name).apply(read_only_bucket_policy),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.role_name = role.role_name
        self.mount = DatasetMount(
            driver=OSSFS_DRIVER,
            attributes={"authType": pulumi.Output.from_input("rrsa"), "roleName": role.role_name},
        )
        self.register_outputs({"role_name": self.role_name})
