"""COS bucket for datasets and checkpoints: private, versioned, encrypted, protected."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import tencentcloud_iac_pulumi as tencentcloud


def cos_endpoint(region: str) -> str:
    """COS's S3-compatible endpoint for a region (what boto3 or s3fs talk to)."""
    return f"https://cos.{region}.myqcloud.com"


@dataclass(frozen=True)
class CosBucketArgs:
    bucket_name: str
    """Full name, `<name>-<appid>` (validated in settings)."""
    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int
    tags: Mapping[str, str]


class CosBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: CosBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:CosBucket", name, None, opts)
        bucket = tencentcloud.cos.Bucket(
            f"{name}-data",
            bucket=args.bucket_name,
            acl="private",
            versioning_enable=True,
            encryption_algorithm="AES256",  # SSE-COS
            force_clean=False,
            lifecycle_rules=[
                {
                    "id": "abort-incomplete-multipart-uploads",
                    "filter_prefix": "",
                    "abort_incomplete_multipart_upload": {
                        "days_after_initiation": args.abort_incomplete_upload_days
                    },
                },
                {
                    "id": "expire-noncurrent-versions",
                    "filter_prefix": "",
                    "non_current_expiration": {
                        "non_current_days": args.noncurrent_version_expiration_days
                    },
                },
            ],
            tags=dict(args.tags),
            # Checkpoints are the work the GPUs paid for: `pulumi destroy` must not take them.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        self.bucket_name = bucket.bucket
        self.register_outputs({"bucket_name": self.bucket_name})
