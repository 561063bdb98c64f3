"""IRSA: a role only the training ServiceAccount's tokens may assume, allowed one bucket."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.volcengine.conftest import CLUSTER, POLICY, PREFIX, ROLE


def test_role_trusts_only_the_training_service_account(ve_plan: Plan) -> None:
    role = ve_plan.one(ROLE)
    irsa = ve_plan.one(CLUSTER).outputs["irsaConfig"]
    (statement,) = json.loads(role.inputs["trustPolicyDocument"])["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == ["sts:AssumeRoleWithOIDC"]
    assert statement["Principal"] == {"Federated": [irsa["oidcTrn"]]}
    assert statement["Condition"] == {
        "StringEquals": {
            "oidc:iss": [irsa["issuer"]],
            "oidc:aud": ["sts.volcengine.com"],
            "oidc:sub": ["system:serviceaccount:training:trainer"],
        }
    }
    assert role.inputs["maxSessionDuration"] == 3600


def test_role_gets_a_policy_for_one_bucket_only(ve_plan: Plan) -> None:
    policy = ve_plan.one(POLICY)
    role = ve_plan.one(ROLE)
    assert role.inputs["policies"] == [
        {"policyName": policy.inputs["policyName"], "policyType": "Custom"}
    ]
    assert policy.urn in role.dependencies
    document = json.loads(policy.inputs["policyDocument"])
    resources = {r for s in document["Statement"] for r in s["Resource"]}
    bucket = "gpuinfra-volcengine-dev-data"
    assert resources == {f"trn:tos:::{bucket}", f"trn:tos:::{bucket}/*"}
    actions = {a for s in document["Statement"] for a in s["Action"]}
    assert not any(a.endswith("*") or ("Bucket" in a and "Put" in a) for a in actions)
    assert ve_plan.outputs["trainingRoleTrn"].endswith(f":role/{PREFIX}-training")
