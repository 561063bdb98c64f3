"""ACK Pro: version from config, RRSA, KMS-encrypted Secrets, private endpoint by default."""

from __future__ import annotations

import json

import pytest

from components.alicloud.cluster import newest_patch
from gpuinfra.engine import Plan
from tests.alicloud.conftest import PREFIX, STACK
from tests.conftest import build

CLUSTER = "alicloud:cs/managedKubernetes:ManagedKubernetes"


def test_ack_pro_with_rrsa_and_the_stacks_own_kms_key(ali_plan: Plan) -> None:
    cluster = ali_plan.one(CLUSTER).inputs
    key = ali_plan.one("alicloud:kms/key:Key")
    assert cluster["clusterSpec"] == "ack.pro.small"
    assert cluster["enableRrsa"] is True
    assert cluster["encryptionProviderKey"] == key.id
    assert cluster["disableEncryption"] is False
    assert key.inputs["automaticRotation"] == "Enabled"
    assert cluster["name"] == PREFIX
    assert "ack-pod-identity-webhook" in [a["name"] for a in cluster["addons"]]


def test_version_is_the_newest_patch_of_the_configured_minor(ali_plan: Plan) -> None:
    assert ali_plan.one(CLUSTER).inputs["version"] == "1.33.3-aliyun.1"
    assert newest_patch(["1.33.1-aliyun.1", "1.33.10-aliyun.1", "1.32.9-aliyun.1"], "1.33") == (
        "1.33.10-aliyun.1"
    )
    with pytest.raises(ValueError, match=r"no Kubernetes 1\.34"):
        newest_patch(["1.33.1-aliyun.1"], "1.34")


def test_private_endpoint_unless_asked(ali_plan: Plan) -> None:
    assert ali_plan.one(CLUSTER).inputs["slbInternetEnabled"] is False
    public = build(STACK, {"apiEndpointPublic": True, "allowPublicAdminAccess": True})
    assert public.one(CLUSTER).inputs["slbInternetEnabled"] is True


def test_deletion_protection_and_logs_from_config() -> None:
    plan = build(
        STACK,
        {
            "deletionProtection": True,
            "clusterLogTypes": ["api", "scheduler", "authenticator"],
            "clusterLogRetentionDays": 45,
        },
    )
    cluster = plan.one(CLUSTER).inputs
    assert cluster["deletionProtection"] is True
    assert cluster["controlPlaneLogComponents"] == ["apiserver", "scheduler"]
    assert cluster["controlPlaneLogTtl"] == "45"
    assert cluster["auditLogConfig"] == {"enabled": False}


def test_kubeconfig_is_a_secret_from_the_cluster_credential(ali_plan: Plan) -> None:
    assert "kubeconfig" in ali_plan.secret_outputs
    kubeconfig = json.loads(ali_plan.outputs["kubeconfig"])
    assert kubeconfig["kind"] == "Config"
    cluster = ali_plan.one(CLUSTER)
    assert cluster.id in kubeconfig["current-context"]
