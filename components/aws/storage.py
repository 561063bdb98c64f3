"""S3 bucket for datasets and checkpoints: private, encrypted, versioned, protected."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class DataBucketArgs:
    bucket_name: str | None
    """None: the provider names it from the resource name plus a random suffix."""
    protect: bool
    noncurrent_version_expiration_days: int
    abort_incomplete_upload_days: int
    tags: Mapping[str, str]


class DataBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]
    bucket_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: DataBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:DataBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = aws.s3.Bucket(
            f"{name}-data",
            bucket=args.bucket_name,
            force_destroy=False,
            tags={**args.tags, "Name": f"{name}-data"},
            # Checkpoints are the work the GPUs paid for: `pulumi destroy` must not take them.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        aws.s3.BucketOwnershipControls(
            f"{name}-data-ownership",
            bucket=bucket.id,
            rule={"object_ownership": "BucketOwnerEnforced"},  # ACLs off
            opts=child,
        )
        aws.s3.BucketPublicAccessBlock(
            f"{name}-data-public-access",
            bucket=bucket.id,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child,
        )
        aws.s3.BucketVersioning(
            f"{name}-data-versioning",
            bucket=bucket.id,
            versioning_configuration={"status": "Enabled"},
            opts=child,
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-data-encryption",
            bucket=bucket.id,
            # SSE-S3. No bucket key: S3 Bucket Keys only cut KMS calls under SSE-KMS and do
            # nothing here (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-key.html).
            rules=[{"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}],
            opts=child,
        )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-data-lifecycle",
            bucket=bucket.id,
            rules=[
                {
                    "id": "abort-incomplete-multipart-uploads",
                    "status": "Enabled",
                    "filter": {},
                    "abort_incomplete_multipart_upload": {
                        "days_after_initiation": args.abort_incomplete_upload_days
                    },
                },
                {
                    "id": "expire-noncurrent-versions",
                    "status": "Enabled",
                    "filter": {},
                    "noncurrent_version_expiration": {
                        "noncurrent_days": args.noncurrent_version_expiration_days
                    },
                },
            ],
            opts=child,
        )
        aws.s3.BucketPolicy(
            f"{name}-data-tls-only",
            bucket=bucket.id,
            policy=bucket.arn.apply(_deny_insecure_transport),
            opts=child,
        )
        self.bucket_name = bucket.bucket
        self.bucket_arn = bucket.arn
        self.register_outputs({"bucket_name": self.bucket_name, "bucket_arn": self.bucket_arn})


def _deny_insecure_transport(bucket_arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "DenyInsecureTransport",
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [bucket_arn, f"{bucket_arn}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )
