"""Bucket rules: encrypted, versioned, private and `protect`ed, on every cloud.

AWS splits a bucket's settings into separate resources that name the bucket
(`BucketVersioning`, `BucketServerSideEncryptionConfiguration`, ...); Alibaba Cloud and
Tencent Cloud mostly keep them on the bucket, with optional separate resources on Alibaba.
"""

from __future__ import annotations

from collections.abc import Callable

from ..planview import Resource, StackView
from .model import Finding, Rule, rule

AWS_BUCKET = "aws:s3/bucket:Bucket"
ALI_BUCKET = "alicloud:oss/bucket:Bucket"
TENCENT_BUCKET = "tencentcloud:Cos/bucket:Bucket"
VOLC_BUCKET = "volcenginecc:tos/bucket:Bucket"
BUCKET_TYPES = (AWS_BUCKET, ALI_BUCKET, TENCENT_BUCKET, VOLC_BUCKET)

_AWS_SSE = ("AES256", "aws:kms", "aws:kms:dsse")
_ALI_SSE = ("AES256", "KMS", "SM4")
_TENCENT_SSE = ("AES256", "KMS", "SM4", "cos/kms")
_PUBLIC_ACLS = ("public-read", "public-read-write", "authenticated-read")


def _attached(view: StackView, bucket: Resource, type_: str) -> list[Resource]:
    """Resources of `type_` whose `bucket` input names this bucket (by id or given name)."""
    keys = {k for k in (bucket.id, bucket.inputs.get("bucket")) if k}
    return [r for r in view.of_type(type_) if r.inputs.get("bucket") in keys]


def _aws_encrypted(view: StackView, b: Resource) -> bool:
    configs = [
        *_attached(
            view,
            b,
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        ),
        *_attached(
            view,
            b,
            "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
        ),
    ]
    inline = b.inputs.get("serverSideEncryptionConfiguration")
    blocks = [c.inputs for c in configs] + ([inline] if inline else [])
    for block in blocks:
        rules = block.get("rules") or ([block["rule"]] if block.get("rule") else [])
        for r in rules:
            default = r.get("applyServerSideEncryptionByDefault") or {}
            if default.get("sseAlgorithm") in _AWS_SSE:
                return True
    return False


def _aws_versioned(view: StackView, b: Resource) -> bool:
    for v in [
        *_attached(view, b, "aws:s3/bucketVersioning:BucketVersioning"),
        *_attached(view, b, "aws:s3/bucketVersioningV2:BucketVersioningV2"),
    ]:
        if (v.inputs.get("versioningConfiguration") or {}).get("status") == "Enabled":
            return True
    return (b.inputs.get("versioning") or {}).get("enabled") is True


def _aws_private(view: StackView, b: Resource) -> bool:
    if str(b.inputs.get("acl") or "private") in _PUBLIC_ACLS:
        return False
    flags = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    blocks = _attached(view, b, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    return any(all(block.inputs.get(f) is True for f in flags) for block in blocks)


def _ali_encrypted(view: StackView, b: Resource) -> bool:
    inline = (b.inputs.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
    separate = _attached(
        view, b, "alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption"
    )
    return inline in _ALI_SSE or any(r.inputs.get("sseAlgorithm") in _ALI_SSE for r in separate)


def _ali_versioned(view: StackView, b: Resource) -> bool:
    inline = (b.inputs.get("versioning") or {}).get("status")
    separate = _attached(view, b, "alicloud:oss/bucketVersioning:BucketVersioning")
    return inline == "Enabled" or any(r.inputs.get("status") == "Enabled" for r in separate)


def _ali_private(view: StackView, b: Resource) -> bool:
    acls = [b.inputs.get("acl")] + [
        r.inputs.get("acl") for r in _attached(view, b, "alicloud:oss/bucketAcl:BucketAcl")
    ]
    return not any(str(a) in _PUBLIC_ACLS for a in acls if a)


def _tencent_encrypted(view: StackView, b: Resource) -> bool:
    return b.inputs.get("encryptionAlgorithm") in _TENCENT_SSE


def _tencent_versioned(view: StackView, b: Resource) -> bool:
    return b.inputs.get("versioningEnable") is True


def _tencent_private(view: StackView, b: Resource) -> bool:
    return str(b.inputs.get("acl") or "private") not in _PUBLIC_ACLS


# --- Volcano Engine (issue 27): encryption is a separate resource naming the bucket ---
_VOLC_SSE = ("AES256", "SM4", "kms")


def _volc_encrypted(view: StackView, b: Resource) -> bool:
    name = b.inputs.get("name")
    return any(
        r.inputs.get("name") == name and r.inputs.get("sseAlgorithm") in _VOLC_SSE
        for r in view.of_type("volcenginecc:tos/bucketEncryption:BucketEncryption")
    )


def _volc_versioned(view: StackView, b: Resource) -> bool:
    return b.inputs.get("enableVersionStatus") == "Enabled"


def _volc_private(view: StackView, b: Resource) -> bool:
    acl = (b.inputs.get("aclGrant") or {}).get("acl") or "private"
    return str(acl) not in (*_PUBLIC_ACLS, "default")


Check = Callable[[StackView, Resource], bool]
_CHECKS: dict[str, dict[str, Check]] = {
    "encrypted": {
        AWS_BUCKET: _aws_encrypted,
        ALI_BUCKET: _ali_encrypted,
        TENCENT_BUCKET: _tencent_encrypted,
        VOLC_BUCKET: _volc_encrypted,
    },
    "versioned": {
        AWS_BUCKET: _aws_versioned,
        ALI_BUCKET: _ali_versioned,
        TENCENT_BUCKET: _tencent_versioned,
        VOLC_BUCKET: _volc_versioned,
    },
    "private": {
        AWS_BUCKET: _aws_private,
        ALI_BUCKET: _ali_private,
        TENCENT_BUCKET: _tencent_private,
        VOLC_BUCKET: _volc_private,
    },
}


def _each_bucket(self: Rule, view: StackView, aspect: str, message: str) -> list[Finding]:
    checks = _CHECKS[aspect]
    return [
        self.finding(b, message, view)
        for b in view.of_type(*BUCKET_TYPES)
        if not checks[b.type](view, b)
    ]


@rule("bucket-encrypted", "mandatory", "Buckets encrypt data at rest (server-side encryption).")
def bucket_encrypted(self: Rule, view: StackView) -> list[Finding]:
    return _each_bucket(self, view, "encrypted", "bucket has no server-side encryption")


@rule("bucket-versioned", "mandatory", "Buckets keep old versions of overwritten checkpoints.")
def bucket_versioned(self: Rule, view: StackView) -> list[Finding]:
    return _each_bucket(self, view, "versioned", "bucket versioning is not enabled")


@rule(
    "bucket-private",
    "mandatory",
    "Buckets are private: no public ACL; on AWS a public access block with all four settings.",
)
def bucket_private(self: Rule, view: StackView) -> list[Finding]:
    return _each_bucket(
        self, view, "private", "bucket may be public (ACL or no public access block)"
    )


@rule(
    "bucket-protected",
    "mandatory",
    "Buckets holding checkpoints are `protect`ed so `pulumi destroy` cannot delete them.",
    opt_in="protectBucket",
    opt_in_value="false",
)
def bucket_protected(self: Rule, view: StackView) -> list[Finding]:
    return [
        self.finding(b, "bucket is not protected: `pulumi destroy` would delete it", view)
        for b in view.of_type(*BUCKET_TYPES)
        if not b.protect
    ]
