"""Bucket rules: encrypted, versioned, private and `protect`ed, on every cloud.

AWS splits a bucket's settings into separate resources that name the bucket
(`BucketVersioning`, `BucketServerSideEncryptionConfiguration`, ...); Alibaba Cloud keeps
them on the bucket or in optional separate resources; Tencent Cloud keeps them on the bucket;
Volcano Engine keeps versioning and the ACL on the bucket and encryption in a separate
`BucketEncryption` that names the bucket by its `name`.

Each rule has two parts. The resource check refuses a resource whose own inputs are wrong (a
public ACL, versioning `Suspended`, an encryption configuration without an algorithm, a
public access block that leaves a flag off, a Tencent bucket without encryption): the engine
runs it before creating the resource. The stack check finds a bucket that nothing
configures, which only the whole plan shows; the engine runs it after all steps. It links
a configuration to its bucket by the `bucket` value or, when that value is unknown during a
preview, by the property dependency the engine records (`Resource.links`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..planview import UNKNOWN, Resource, StackView
from .model import Rule, rule

AWS_BUCKET = "aws:s3/bucket:Bucket"
ALI_BUCKET = "alicloud:oss/bucket:Bucket"
TENCENT_BUCKET = "tencentcloud:Cos/bucket:Bucket"
VOLC_BUCKET = "volcenginecc:tos/bucket:Bucket"
BUCKET_TYPES = (AWS_BUCKET, ALI_BUCKET, TENCENT_BUCKET, VOLC_BUCKET)

AWS_SSE = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
)
AWS_VERSIONING = (
    "aws:s3/bucketVersioning:BucketVersioning",
    "aws:s3/bucketVersioningV2:BucketVersioningV2",
)
AWS_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
ALI_SSE = "alicloud:oss/bucketServerSideEncryption:BucketServerSideEncryption"
ALI_VERSIONING = "alicloud:oss/bucketVersioning:BucketVersioning"
ALI_ACL = "alicloud:oss/bucketAcl:BucketAcl"
VOLC_SSE = "volcenginecc:tos/bucketEncryption:BucketEncryption"

_AWS_SSE = ("AES256", "aws:kms", "aws:kms:dsse")
_ALI_SSE = ("AES256", "KMS", "SM4")
_TENCENT_SSE = ("AES256", "KMS", "SM4", "cos/kms")
_VOLC_SSE = ("AES256", "SM4", "kms")
_PUBLIC_ACLS = ("public-read", "public-read-write", "authenticated-read")
_PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


# --- one resource's own inputs ------------------------------------------------------------


def _aws_sse_ok(inputs: Any) -> bool:
    rules = inputs.get("rules") or ([inputs["rule"]] if inputs.get("rule") else [])
    return any(
        (r.get("applyServerSideEncryptionByDefault") or {}).get("sseAlgorithm") in _AWS_SSE
        for r in rules
    )


def _aws_versioning_ok(inputs: Any) -> bool:
    return (inputs.get("versioningConfiguration") or {}).get("status") == "Enabled"


def _pab_ok(inputs: Any) -> bool:
    return all(inputs.get(flag) is True for flag in _PAB_FLAGS)


def _inline(bucket: Resource, aspect: str) -> Any:
    """The bucket's own setting for `aspect`, or None when it leaves it to other resources."""
    i = bucket.inputs
    if bucket.type == AWS_BUCKET:
        key = {"encrypted": "serverSideEncryptionConfiguration", "versioned": "versioning"}
        return i.get(key[aspect]) if aspect in key else None
    if bucket.type == ALI_BUCKET:
        if aspect == "encrypted":
            return (i.get("serverSideEncryptionRule") or {}).get("sseAlgorithm")
        if aspect == "versioned":
            return (i.get("versioning") or {}).get("status")
    return None


def _inline_ok(bucket: Resource, aspect: str, value: Any) -> bool:
    if bucket.type == AWS_BUCKET:
        return _aws_sse_ok(value) if aspect == "encrypted" else value.get("enabled") is True
    if aspect == "encrypted":
        return value in _ALI_SSE
    return value == "Enabled"


_WRONG: dict[str, dict[str, tuple[Callable[[Any], bool], str]]] = {
    "encrypted": {
        **{t: (_aws_sse_ok, "sets no server-side encryption algorithm") for t in AWS_SSE},
        ALI_SSE: (lambda i: i.get("sseAlgorithm") in _ALI_SSE, "sets no allowed algorithm"),
        VOLC_SSE: (lambda i: i.get("sseAlgorithm") in _VOLC_SSE, "sets no allowed algorithm"),
    },
    "versioned": {
        **{t: (_aws_versioning_ok, "versioning status is not Enabled") for t in AWS_VERSIONING},
        ALI_VERSIONING: (lambda i: i.get("status") == "Enabled", "status is not Enabled"),
    },
    "private": {
        AWS_PUBLIC_ACCESS_BLOCK: (_pab_ok, f"not all of {', '.join(_PAB_FLAGS)} are true"),
        ALI_ACL: (lambda i: str(i.get("acl")) not in _PUBLIC_ACLS, "grants a public ACL"),
    },
}
"""Per aspect, the configuring resource types and what makes one wrong by itself."""

_BUCKET_MESSAGE = {
    "encrypted": "bucket has no server-side encryption",
    "versioned": "bucket versioning is not enabled",
    "private": "bucket may be public (ACL or no public access block)",
}


def _own_problem(resource: Resource, aspect: str) -> Iterator[str]:
    """What is wrong with `resource` for `aspect`, from its own inputs alone."""
    wrong = _WRONG[aspect].get(resource.type)
    if wrong is not None:
        check, message = wrong
        if not check(resource.inputs):
            yield message
        return
    if resource.type not in BUCKET_TYPES:
        return
    i = resource.inputs
    if resource.type == VOLC_BUCKET:  # versioning and ACL on the bucket, encryption apart
        acl = str((i.get("aclGrant") or {}).get("acl") or "private")
        if aspect == "private" and acl in (*_PUBLIC_ACLS, "default"):
            yield f"bucket ACL {acl} is public or inherited"
        if aspect == "versioned" and i.get("enableVersionStatus") != "Enabled":
            yield _BUCKET_MESSAGE[aspect]
        return
    if aspect == "private":
        if str(i.get("acl") or "private") in _PUBLIC_ACLS:
            yield f"bucket ACL {i.get('acl')} is public"
        return
    if resource.type == TENCENT_BUCKET:  # everything is on the bucket: decide here
        ok = (
            i.get("encryptionAlgorithm") in _TENCENT_SSE
            if aspect == "encrypted"
            else i.get("versioningEnable") is True
        )
        if not ok:
            yield _BUCKET_MESSAGE[aspect]
        return
    value = _inline(resource, aspect)
    if value is not None and not _inline_ok(resource, aspect, value):
        yield _BUCKET_MESSAGE[aspect]


# --- the whole plan: a bucket nothing configures ------------------------------------------


_BUCKET_INPUT = {VOLC_BUCKET: "name"}
"""The input a bucket's configuring resources name it by (default `bucket`)."""


def _attached(view: StackView, bucket: Resource, types: tuple[str, ...]) -> list[Resource]:
    """Resources of `types` whose bucket input names this bucket: by its id or given name,
    or (when the value is unknown during a preview) by a property dependency on it."""
    field = _BUCKET_INPUT.get(bucket.type, "bucket")
    keys = {k for k in (bucket.id, bucket.inputs.get(field)) if k and k is not UNKNOWN}
    return [
        r
        for r in view.of_type(*types)
        if (r.inputs.get(field) in keys and r.inputs.get(field) is not UNKNOWN)
        or bucket.urn in r.links.get(field, ())
    ]


_CONFIGURING: dict[str, dict[str, tuple[str, ...]]] = {
    "encrypted": {AWS_BUCKET: AWS_SSE, ALI_BUCKET: (ALI_SSE,), VOLC_BUCKET: (VOLC_SSE,)},
    "versioned": {AWS_BUCKET: AWS_VERSIONING, ALI_BUCKET: (ALI_VERSIONING,)},
    "private": {AWS_BUCKET: (AWS_PUBLIC_ACCESS_BLOCK,)},
}


def _unconfigured(view: StackView, aspect: str) -> Iterator[tuple[Resource, str]]:
    """Buckets with no setting of their own for `aspect` and no configuring resource (a
    configuring resource that is wrong is the resource check's finding, not a second one)."""
    for bucket_type, types in _CONFIGURING[aspect].items():
        for bucket in view.of_type(bucket_type):
            if aspect != "private" and _inline(bucket, aspect) is not None:
                continue  # the bucket's own setting decides (resource check)
            if not _attached(view, bucket, types):
                yield bucket, _BUCKET_MESSAGE[aspect]


def _bucket_rule(aspect: str, id: str, description: str) -> Rule:
    return Rule(
        id,
        "mandatory",
        description,
        check_resource=lambda resource, view: _own_problem(resource, aspect),
        check_stack=lambda view: _unconfigured(view, aspect),
    )


bucket_encrypted = _bucket_rule(
    "encrypted", "bucket-encrypted", "Buckets encrypt data at rest (server-side encryption)."
)
bucket_versioned = _bucket_rule(
    "versioned", "bucket-versioned", "Buckets keep old versions of overwritten checkpoints."
)
bucket_private = _bucket_rule(
    "private",
    "bucket-private",
    "Buckets are private: no public ACL; on AWS a public access block with all four settings.",
)


@rule(
    "bucket-protected",
    "mandatory",
    "Buckets holding checkpoints are `protect`ed so `pulumi destroy` cannot delete them.",
    opt_in="protectBucket",
    opt_in_value="false",
)
def bucket_protected(resource: Resource, view: StackView) -> Iterator[str]:
    if resource.type in BUCKET_TYPES and not resource.protect:
        yield "bucket is not protected: `pulumi destroy` would delete it"
