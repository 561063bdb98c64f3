"""COS bucket: <name>-<appid>, private, versioned, encrypted, lifecycle, protected."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import BUCKET, build_tc


def test_bucket_private_versioned_encrypted_protected(tc_plan: Plan) -> None:
    bucket = tc_plan.one(BUCKET)
    assert bucket.inputs["acl"] == "private"
    assert bucket.inputs["versioningEnable"] is True
    assert bucket.inputs["encryptionAlgorithm"] in ("AES256", "KMS", "SM4")
    assert bucket.inputs["forceClean"] is False
    assert bucket.protect is True


def test_default_name_carries_the_appid(tc_plan: Plan) -> None:
    assert tc_plan.one(BUCKET).inputs["bucket"] == "gpuinfra-tencentcloud-dev-data-1250000000"
    assert tc_plan.outputs["bucketUri"] == "cosn://gpuinfra-tencentcloud-dev-data-1250000000"
    assert tc_plan.outputs["bucketEndpoint"] == "https://cos.ap-guangzhou.myqcloud.com"


def test_name_and_protection_from_config() -> None:
    plan = build_tc({"bucketName": "acme-ckpt-1250000000", "protectBucket": False})
    bucket = plan.one(BUCKET)
    assert bucket.inputs["bucket"] == "acme-ckpt-1250000000"
    assert bucket.protect is False


def test_lifecycle_rules() -> None:
    plan = build_tc({"noncurrentVersionExpirationDays": 45, "abortIncompleteUploadDays": 3})
    rules = {r["id"]: r for r in plan.one(BUCKET).inputs["lifecycleRules"]}
    abort = rules["abort-incomplete-multipart-uploads"]["abortIncompleteMultipartUpload"]
    assert abort == {"daysAfterInitiation": 3}
    expire = rules["expire-noncurrent-versions"]["nonCurrentExpiration"]
    assert expire == {"nonCurrentDays": 45}
