"""OSS bucket for datasets and checkpoints: private, encrypted, versioned, protected."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud


def oss_endpoint(region: str, *, internal: bool) -> str:
    """OSS endpoint of a region; the internal one is free of traffic charges inside it."""
    return f"https://oss-{region}{'-internal' if internal else ''}.aliyuncs.com"


@dataclass(frozen=True)
class OssBucketArgs:
    bucket_name: str | None
    """None: the provider names it from the resource name plus a random suffix."""
    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int
    tags: Mapping[str, str]


class OssBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: OssBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:OssBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = alicloud.oss.Bucket(
            f"{name}-data",
            bucket=args.bucket_name,
            storage_class="Standard",
            force_destroy=False,
            versioning={"status": "Enabled"},
            # OSS-managed keys (SSE-OSS, AES-256): no KMS cost per request.
            server_side_encryption_rule={"sse_algorithm": "AES256"},
            lifecycle_rules=[
                {
                    "id": "abort-incomplete-multipart-uploads",
                    "enabled": True,
                    "abort_multipart_uploads": [{"days": args.abort_incomplete_upload_days}],
                },
                {
                    "id": "expire-noncurrent-versions",
                    "enabled": True,
                    "noncurrent_version_expirations": [
                        {"days": args.noncurrent_version_expiration_days}
                    ],
                },
            ],
            tags={**args.tags, "Name": f"{name}-data"},
            # Checkpoints are the work the GPUs paid for: `pulumi destroy` must not take them.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        alicloud.oss.BucketAcl(f"{name}-data-acl", bucket=bucket.id, acl="private", opts=child)
        alicloud.oss.BucketPublicAccessBlock(
            f"{name}-data-public-access",
            bucket=bucket.id,
            block_public_access=True,
            opts=child,
        )
        self.bucket_name = bucket.bucket
        self.register_outputs({"bucket_name": self.bucket_name})
