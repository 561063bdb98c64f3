"""OSS bucket for datasets and checkpoints: private, encrypted, versioned, protected."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud


def oss_endpoint(region: str, *, internal: bool) -> str:
    """OSS endpoint of a region; the internal one is free of traffic charges inside it."""
    return f"https://oss-{region}{'-internal' if internal else ''}.aliyuncs.com"


def default_bucket_name(name_prefix: str, account_id: str) -> str:
    """`<namePrefix>-data-<account id>`: OSS names are global, account ids are unique, and
    the stack's prefix (at most 32 characters) keeps it within OSS's 63."""
    return f"{name_prefix}-data-{account_id}"


@dataclass(frozen=True)
class OssBucketArgs:
    bucket_name: str | None
    """None: `default_bucket_name(name_prefix, <the caller's account id>)`. The bucket is
    always named here: left out, the provider would call it `tf-oss-bucket-<timestamp>`
    (aliyun/terraform-provider-alicloud@ace5bcf8 alicloud/resource_alicloud_oss_bucket.go:502;
    pulumi-alicloud auto-names only fields called `name`, and this one is `bucket`:
    pulumi/pulumi-alicloud@9d2b1e47 provider/resources.go:1186-1193 and :2636)."""
    name_prefix: str
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
        bucket_name: pulumi.Input[str] = args.bucket_name or alicloud.get_caller_identity_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        ).account_id.apply(lambda uid: default_bucket_name(args.name_prefix, uid))
        bucket = alicloud.oss.Bucket(
            f"{name}-data",
            bucket=bucket_name,
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
