"""RRSA: the training role trusts only the cluster's OIDC provider for one ServiceAccount."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.alicloud.conftest import PREFIX

CLUSTER = "alicloud:cs/managedKubernetes:ManagedKubernetes"


def test_trust_is_scoped_to_the_training_service_account(ali_plan: Plan) -> None:
    rrsa = ali_plan.one(CLUSTER).outputs["rrsaMetadata"]
    role = ali_plan.one("alicloud:ram/role:Role", f"{PREFIX}-training-role")  # not ossfs's
    assert role.inputs["roleName"] == f"{PREFIX}-training"
    [statement] = json.loads(role.inputs["assumeRolePolicyDocument"])["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "sts:AssumeRole"
    assert statement["Principal"] == {"Federated": [rrsa["ramOidcProviderArn"]]}
    assert statement["Condition"] == {
        "StringEquals": {
            "oidc:iss": rrsa["rrsaOidcIssuerUrl"],
            "oidc:aud": "sts.aliyuncs.com",
            "oidc:sub": "system:serviceaccount:training:trainer",
        }
    }


def test_policy_is_limited_to_the_bucket(ali_plan: Plan) -> None:
    bucket = ali_plan.one("alicloud:oss/bucket:Bucket").outputs["bucket"]
    policy = ali_plan.one("alicloud:ram/policy:Policy", f"{PREFIX}-training-policy")
    resources = {
        resource
        for statement in json.loads(policy.inputs["policyDocument"])["Statement"]
        for resource in statement["Resource"]
    }
    assert resources == {f"acs:oss:*:*:{bucket}", f"acs:oss:*:*:{bucket}/*"}
    actions = {
        action
        for statement in json.loads(policy.inputs["policyDocument"])["Statement"]
        for action in statement["Action"]
    }
    assert "oss:*" not in actions and "oss:PutBucketAcl" not in actions
    attachment = ali_plan.one(
        "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment",
        f"{PREFIX}-training-policy-attachment",
    )
    assert attachment.inputs == {
        "roleName": f"{PREFIX}-training",
        "policyName": policy.inputs["policyName"],
        "policyType": "Custom",
    }
