"""Pod identity: OIDC on the cluster, a CAM role only the training ServiceAccount assumes."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import BUCKET, CLUSTER, POLICY, ROLE, T, build_tc

AUTH = T + "Kubernetes/authAttachment:AuthAttachment"


def test_cluster_gets_oidc_and_the_webhook(tc_plan: Plan) -> None:
    auth = tc_plan.one(AUTH).inputs
    assert auth["clusterId"] == tc_plan.one(CLUSTER).id
    assert auth["autoCreateOidcConfig"] is True
    assert auth["autoInstallPodIdentityWebhookAddon"] is True
    assert auth["autoCreateClientIds"] == ["sts.cloud.tencent.com"]
    # Finding 11 (refuted): CAM's OIDC provider holds the signing key, so the API server's
    # discovery documents stay closed to anonymous users.
    assert auth["autoCreateDiscoveryAnonymousAuth"] is False


def test_trust_scoped_to_the_service_account(tc_plan: Plan) -> None:
    trust = json.loads(tc_plan.one(ROLE).inputs["document"])
    [statement] = trust["statement"]
    assert statement["action"] == ["name/sts:AssumeRoleWithWebIdentity"]
    cluster_id = tc_plan.one(CLUSTER).id
    assert statement["principal"]["federated"] == [
        f"qcs::cam::uin/100000000001:oidc-provider/{cluster_id}"
    ]
    condition = statement["condition"]["string_equal"]
    assert condition["oidc:sub"] == ["system:serviceaccount:training:trainer"]
    assert condition["oidc:aud"] == ["sts.cloud.tencent.com"]
    assert condition["oidc:iss"] == [tc_plan.one(AUTH).outputs["tkeDefaultIssuer"]]


def test_trust_follows_the_configured_service_account() -> None:
    plan = build_tc({"trainingNamespace": "ml", "trainingServiceAccount": "runner"})
    trust = json.loads(plan.one(ROLE).inputs["document"])
    condition = trust["statement"][0]["condition"]["string_equal"]
    assert condition["oidc:sub"] == ["system:serviceaccount:ml:runner"]


def test_policy_limited_to_the_bucket(tc_plan: Plan) -> None:
    bucket = tc_plan.one(BUCKET).inputs["bucket"]
    policy = json.loads(tc_plan.one(POLICY).inputs["document"])
    resources = {res for s in policy["statement"] for res in s["resource"]}
    prefix = f"qcs::cos:ap-guangzhou:uid/1250000000:{bucket}/"
    assert resources == {prefix, prefix + "*"}
    actions = {a for s in policy["statement"] for a in s["action"]}
    assert all(a.startswith("name/cos:") for a in actions)
    assert not any(a.endswith("*") or "PutBucket" in a or "DeleteBucket" in a for a in actions)
    attachment = tc_plan.one(T + "Cam/rolePolicyAttachment:RolePolicyAttachment").inputs
    assert attachment == {"roleId": tc_plan.one(ROLE).id, "policyId": tc_plan.one(POLICY).id}


def test_role_arn_is_the_output(tc_plan: Plan) -> None:
    assert tc_plan.outputs["trainingRoleArn"] == tc_plan.one(ROLE).outputs["roleArn"]
