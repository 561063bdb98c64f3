"""OSS bucket: private, versioned, encrypted, lifecycle-managed, protected by default."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.alicloud.conftest import STACK
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
