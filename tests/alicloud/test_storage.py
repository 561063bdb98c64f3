"""OSS bucket: private, versioned, encrypted, lifecycle-managed, protected by default."""

from __future__ import annotations

import re

import pulumi_alicloud as alicloud

from gpuinfra.engine import Plan, run_program
from gpuinfra.mocks.alicloud import ACCOUNT_UID
from tests.alicloud.conftest import PREFIX, STACK
from tests.conftest import build

BUCKET = "alicloud:oss/bucket:Bucket"


def test_bucket_is_private_versioned_encrypted_and_protected(ali_plan: Plan) -> None:
    bucket = ali_plan.one(BUCKET)
    assert bucket.protect is True
    assert bucket.inputs["versioning"] == {"status": "Enabled"}
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "AES256"}
    assert bucket.inputs["forceDestroy"] is False
    assert "acl" not in bucket.inputs  # set by BucketAcl (the inline field is deprecated)
    acl = ali_plan.one("alicloud:oss/bucketAcl:BucketAcl")
    assert acl.inputs == {"bucket": bucket.id, "acl": "private"}
    block = ali_plan.one("alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert block.inputs == {"bucket": bucket.id, "blockPublicAccess": True}


def test_lifecycle_rules_from_config() -> None:
    plan = build(STACK, {"noncurrentVersionExpirationDays": 90, "abortIncompleteUploadDays": 3})
    rules = {r["id"]: r for r in plan.one(BUCKET).inputs["lifecycleRules"]}
    assert rules["abort-incomplete-multipart-uploads"]["abortMultipartUploads"] == [{"days": 3}]
    assert rules["expire-noncurrent-versions"]["noncurrentVersionExpirations"] == [{"days": 90}]
    assert all(rule["enabled"] is True for rule in rules.values())


def test_protection_can_be_turned_off_and_name_set() -> None:
    plan = build(STACK, {"protectBucket": False, "bucketName": "my-team-checkpoints"})
    bucket = plan.one(BUCKET)
    assert bucket.protect is False
    assert bucket.inputs["bucket"] == "my-team-checkpoints"
    assert plan.outputs["bucketUri"] == "oss://my-team-checkpoints"


def test_bucket_is_named_for_the_stack_and_account(ali_plan: Plan) -> None:
    """Finding 9: never left to the provider, which would call it tf-oss-bucket-<time>."""
    bucket = ali_plan.one(BUCKET)
    assert bucket.inputs["bucket"] == f"{PREFIX}-data-{ACCOUNT_UID}"
    assert ali_plan.outputs["bucketName"] == f"{PREFIX}-data-{ACCOUNT_UID}"
    assert len(bucket.inputs["bucket"]) <= 63


def test_mock_names_an_unnamed_bucket_as_the_provider_does() -> None:
    """resource_alicloud_oss_bucket.go:502: PrefixedUniqueId("tf-oss-bucket-")."""
    plan = run_program(
        lambda: alicloud.oss.Bucket("checkpoints"),
        project="p",
        stack="s",
        config={"alicloud:region": "cn-hangzhou"},
    )
    name = plan.one(BUCKET).outputs["bucket"]
    assert re.fullmatch(r"tf-oss-bucket-\d{18}[0-9a-f]{8}", name), name
    assert "checkpoints" not in name
