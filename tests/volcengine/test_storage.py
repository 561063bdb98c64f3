"""TOS bucket: private, versioned, encrypted (SSE-TOS), protected, with lifecycle cleanup."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.volcengine.conftest import BUCKET, BUCKET_ENCRYPTION, build_ve


def test_bucket_is_private_versioned_encrypted_and_protected(ve_plan: Plan) -> None:
    bucket = ve_plan.one(BUCKET)
    assert bucket.inputs["name"] == "gpuinfra-volcengine-dev-data"
    assert bucket.inputs["aclGrant"] == {"acl": "private"}
    assert bucket.inputs["enableVersionStatus"] == "Enabled"
    assert bucket.protect is True
    encryption = ve_plan.one(BUCKET_ENCRYPTION)
    assert encryption.inputs == {"name": "gpuinfra-volcengine-dev-data", "sseAlgorithm": "AES256"}
    rules = {r["lifecycleRuleId"]: r for r in bucket.inputs["lifecycleConfigs"]}
    assert rules["abort-incomplete-multipart-uploads"]["abortInCompleteMultipartUpload"] == {
        "daysAfterInitiation": 7
    }
    assert rules["expire-noncurrent-versions"]["noCurrentVersionExpiration"] == {
        "nonCurrentDays": 30
    }


def test_bucket_name_and_protection_follow_settings() -> None:
    plan = build_ve({"bucketName": "my-checkpoints", "protectBucket": False})
    bucket = plan.one(BUCKET)
    assert bucket.inputs["name"] == "my-checkpoints"
    assert bucket.protect is False
    assert plan.outputs["bucketUri"] == "tos://my-checkpoints"
