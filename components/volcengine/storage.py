"""TOS bucket for datasets and checkpoints: private, versioned, encrypted, protected.

Sources: volcengine/terraform-provider-volcenginecc@v0.0.53
internal/volcengine/tos/{bucket,bucket_encryption}_resource_gen.go and
Volcengine_TOS_Bucket.json / Volcengine_TOS_BucketEncryption.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_volcenginecc as volcenginecc

from .tags import tag_list


def tos_s3_endpoint(region: str) -> str:
    """TOS's S3-compatible endpoint from inside the region's VPCs (the `ivolces.com` internal
    name; `volces.com` is the internet one). What boto3 or s3fs talk to."""
    return f"https://tos-s3-{region}.ivolces.com"


@dataclass(frozen=True)
class TosBucketArgs:
    bucket_name: str
    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int
    tags: Mapping[str, str]


class TosBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: TosBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:TosBucket", name, None, opts)
        bucket = volcenginecc.tos.Bucket(
            f"{name}-data",
            name=args.bucket_name,
            acl_grant={"acl": "private"},
            enable_version_status="Enabled",
            storage_class="STANDARD",
            lifecycle_configs=[
                {
                    "lifecycle_rule_id": "abort-incomplete-multipart-uploads",
                    "prefix": "",
                    "status": "Enabled",
                    "abort_in_complete_multipart_upload": {
                        "days_after_initiation": args.abort_incomplete_upload_days
                    },
                },
                {
                    "lifecycle_rule_id": "expire-noncurrent-versions",
                    "prefix": "",
                    "status": "Enabled",
                    "no_current_version_expiration": {
                        "non_current_days": args.noncurrent_version_expiration_days
                    },
                },
            ],
            tags=tag_list(args.tags),
            # Checkpoints are the work the GPUs paid for: `pulumi destroy` must not take them.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        volcenginecc.tos.BucketEncryption(
            f"{name}-encryption",
            name=bucket.name,
            sse_algorithm="AES256",  # SSE-TOS: TOS-managed keys
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.bucket_name = bucket.name
        self.register_outputs({"bucket_name": self.bucket_name})
