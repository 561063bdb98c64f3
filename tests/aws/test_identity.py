"""IRSA: the training role trusts one ServiceAccount and reaches one bucket."""

from __future__ import annotations

import json

from gpuinfra.engine import Plan
from tests.conftest import BuildStack

ROLE = "aws:iam/role:Role"


def _trust(plan: Plan, role_name: str) -> dict:
    return json.loads(plan.one(ROLE, role_name).inputs["assumeRolePolicy"])


def test_trust_is_scoped_to_the_service_account(dev_plan: Plan) -> None:
    [statement] = _trust(dev_plan, "gpuinfra-dev-training-role")["Statement"]
    oidc = dev_plan.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    issuer = oidc.inputs["url"].removeprefix("https://")
    assert statement["Principal"] == {"Federated": oidc.outputs["arn"]}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            f"{issuer}:sub": "system:serviceaccount:training:trainer",
            f"{issuer}:aud": "sts.amazonaws.com",
        }
    }


def test_trust_follows_namespace_and_service_account(build_stack_plan: BuildStack) -> None:
    plan = build_stack_plan("dev", {"trainingNamespace": "ml", "trainingServiceAccount": "runner"})
    [statement] = _trust(plan, "gpuinfra-dev-training-role")["Statement"]
    [sub] = [v for k, v in statement["Condition"]["StringEquals"].items() if k.endswith(":sub")]
    assert sub == "system:serviceaccount:ml:runner"


def test_permissions_limited_to_the_bucket(dev_plan: Plan) -> None:
    bucket_arn = dev_plan.one("aws:s3/bucket:Bucket").outputs["arn"]
    training = dev_plan.one("aws:iam/rolePolicy:RolePolicy", "gpuinfra-dev-training-policy")
    policy = json.loads(training.inputs["policy"])
    resources = set()
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        assert all(action.startswith("s3:") and "*" not in action for action in statement["Action"])
        resources.add(statement["Resource"])
    assert resources == {bucket_arn, f"{bucket_arn}/*"}


def test_role_arn_exported(dev_plan: Plan) -> None:
    role = dev_plan.one(ROLE, "gpuinfra-dev-training-role")
    assert dev_plan.outputs["trainingRoleArn"] == role.outputs["arn"]
