"""DataBucket: versioned, encrypted, private, TLS-only, lifecycle rules, protected."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.conftest import BuildStack


def test_bucket_is_protected_by_default(dev_plan: Plan) -> None:
    bucket = dev_plan.one("aws:s3/bucket:Bucket")
    assert bucket.protect is True
    assert bucket.inputs["forceDestroy"] is False


def test_protection_can_be_turned_off(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("dev", {"protectBucket": False})
    assert plan.one("aws:s3/bucket:Bucket").protect is False


def test_bucket_name_from_config(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("dev", {"bucketName": "acme-ml-checkpoints"})
    assert plan.one("aws:s3/bucket:Bucket").inputs["bucket"] == "acme-ml-checkpoints"
    assert plan.outputs["bucketUri"] == "s3://acme-ml-checkpoints"


def test_versioned(dev_plan: Plan) -> None:
    versioning = dev_plan.one("aws:s3/bucketVersioning:BucketVersioning").inputs
    assert versioning["versioningConfiguration"]["status"] == "Enabled"


def test_encrypted(dev_plan: Plan) -> None:
    config = dev_plan.one(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
    ).inputs
    [rule] = config["rules"]
    assert rule["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256"
    assert not rule.get("bucketKeyEnabled")  # a bucket key does nothing without SSE-KMS


def test_private(dev_plan: Plan) -> None:
    block = dev_plan.one("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock").inputs
    for flag in (
        "blockPublicAcls",
        "blockPublicPolicy",
        "ignorePublicAcls",
        "restrictPublicBuckets",
    ):
        assert block[flag] is True
    ownership = dev_plan.one("aws:s3/bucketOwnershipControls:BucketOwnershipControls").inputs
    assert ownership["rule"]["objectOwnership"] == "BucketOwnerEnforced"


def test_tls_only_policy(dev_plan: Plan) -> None:
    policy = json.loads(dev_plan.one("aws:s3/bucketPolicy:BucketPolicy").inputs["policy"])
    [statement] = policy["Statement"]
    assert statement["Effect"] == "Deny"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_lifecycle_rules(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan(
        "dev", {"noncurrentVersionExpirationDays": 45, "abortIncompleteUploadDays": 3}
    )
    rules = {
        r["id"]: r
        for r in plan.one(
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
        ).inputs["rules"]
    }
    abort = rules["abort-incomplete-multipart-uploads"]["abortIncompleteMultipartUpload"]
    assert abort["daysAfterInitiation"] == 3
    expire = rules["expire-noncurrent-versions"]["noncurrentVersionExpiration"]
    assert expire["noncurrentDays"] == 45
    assert all(r["status"] == "Enabled" for r in rules.values())


def test_every_bucket_setting_targets_the_bucket(dev_plan: Plan) -> None:
    bucket = dev_plan.one("aws:s3/bucket:Bucket")
    settings = [
        r for r in dev_plan.resources if r.type.startswith("aws:s3/bucket") and r is not bucket
    ]
    assert len(settings) == 6
    assert all(r.inputs["bucket"] == bucket.id for r in settings)
