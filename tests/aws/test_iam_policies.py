"""The IAM roles the README tells a new account to create (iam/*.json): the PR preview's only
reads, the deploy role's trust admits only the protected environments, and its permissions
cover every resource the stacks create under the names they give them."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuinfra.engine import Plan
from tests.aws.test_security_group import SSH_KEY
from tests.conftest import ROOT, BuildStack

IAM = ROOT / "iam"
ACCOUNT = "123456789012"

CREATE_ACTION = {
    "aws:ec2/vpc:Vpc": "ec2:CreateVpc",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "ec2:RevokeSecurityGroupIngress",
    "aws:ec2/internetGateway:InternetGateway": "ec2:AttachInternetGateway",
    "aws:ec2/routeTable:RouteTable": "ec2:CreateRoute",
    "aws:ec2/subnet:Subnet": "ec2:CreateSubnet",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "ec2:AssociateRouteTable",
    "aws:ec2/eip:Eip": "ec2:AllocateAddress",
    "aws:ec2/natGateway:NatGateway": "ec2:CreateNatGateway",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "ec2:CreateVpcEndpoint",
    "aws:ec2/securityGroup:SecurityGroup": "ec2:CreateSecurityGroup",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (
        "ec2:AuthorizeSecurityGroupIngress"
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": "ec2:CreateLaunchTemplate",
    "aws:ec2/instance:Instance": "ec2:RunInstances",
    "aws:ec2/keyPair:KeyPair": "ec2:ImportKeyPair",
    "aws:iam/role:Role": "iam:CreateRole",
    "aws:iam/rolePolicy:RolePolicy": "iam:PutRolePolicy",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "iam:AttachRolePolicy",
    "aws:iam/instanceProfile:InstanceProfile": "iam:CreateInstanceProfile",
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": "iam:CreateOpenIDConnectProvider",
    "aws:kms/key:Key": "kms:CreateKey",
    "aws:kms/alias:Alias": "kms:CreateAlias",
    "aws:cloudwatch/logGroup:LogGroup": "logs:CreateLogGroup",
    "aws:eks/cluster:Cluster": "eks:CreateCluster",
    "aws:eks/nodeGroup:NodeGroup": "eks:CreateNodegroup",
    "aws:eks/accessEntry:AccessEntry": "eks:CreateAccessEntry",
    "aws:eks/addon:Addon": "eks:CreateAddon",
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": "eks:AssociateAccessPolicy",
    "aws:autoscaling/tag:Tag": "autoscaling:CreateOrUpdateTags",
    "aws:s3/bucket:Bucket": "s3:CreateBucket",
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": "s3:PutBucketOwnershipControls",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
    "aws:s3/bucketVersioning:BucketVersioning": "s3:PutBucketVersioning",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "s3:PutEncryptionConfiguration"
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": (
        "s3:PutLifecycleConfiguration"
    ),
    "aws:s3/bucketPolicy:BucketPolicy": "s3:PutBucketPolicy",
}
"""The API call that creates (or first configures) each resource type the stacks make."""


def load(name: str) -> dict[str, Any]:
    return json.loads((IAM / name).read_text().replace("<ACCOUNT_ID>", ACCOUNT))


def allowed(policy: dict[str, Any], action: str, resource: str = "*") -> bool:
    for statement in policy["Statement"]:
        actions = statement["Action"]
        resources = statement["Resource"]
        actions = [actions] if isinstance(actions, str) else actions
        resources = [resources] if isinstance(resources, str) else resources
        if (
            statement["Effect"] == "Allow"
            and any(fnmatch.fnmatchcase(action, a) for a in actions)
            and any(fnmatch.fnmatchcase(resource, r) for r in resources)
        ):
            return True
    return False


@pytest.fixture(scope="module")
def all_plans(dev_plan: Plan, prod_plan: Plan) -> list[Plan]:
    from tests.conftest import build

    workstation = build("dev", {"workstationEnabled": True, "workstationSshPublicKey": SSH_KEY})
    return [dev_plan, prod_plan, workstation]


def test_documents_are_json_with_only_the_documented_placeholders() -> None:
    for path in IAM.glob("*.json"):
        text = path.read_text()
        json.loads(text)
        assert set(re.findall(r"<[A-Z_/]+>", text)) <= {"<ACCOUNT_ID>", "<OWNER>", "<REPO>"}, path


def test_preview_role_only_reads() -> None:
    policy = load("preview-policy.json")
    for statement in policy["Statement"]:
        for action in statement["Action"]:
            verb = action.split(":", 1)[1]
            assert re.match(r"(Describe|Get|List)", verb), action


def test_trust_policies_admit_one_repository_and_the_right_jobs() -> None:
    preview = load("github-oidc-trust-preview.json")["Statement"][0]["Condition"]["StringEquals"]
    assert preview["token.actions.githubusercontent.com:sub"] == "repo:<OWNER>/<REPO>:pull_request"
    deploy = load("github-oidc-trust-deploy.json")["Statement"][0]["Condition"]["StringEquals"]
    assert deploy["token.actions.githubusercontent.com:sub"] == [
        "repo:<OWNER>/<REPO>:environment:dev",
        "repo:<OWNER>/<REPO>:environment:prod",
    ]
    for condition in (preview, deploy):
        assert condition["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"


def test_the_preview_role_can_answer_every_lookup_of_the_program() -> None:
    policy = load("preview-policy.json")
    for action in ("ec2:DescribeAvailabilityZones", "sts:GetCallerIdentity", "iam:GetRole",
                   "eks:ListClusters", "eks:DescribeCluster", "eks:ListNodegroups",
                   "eks:DescribeNodegroup", "ssm:GetParameter"):  # fmt: skip
        assert allowed(policy, action), action


def test_deploy_role_creates_every_resource_type(all_plans: list[Plan]) -> None:
    policy = load("deploy-policy.json")
    types = {r.type for plan in all_plans for r in plan.resources if r.type.startswith("aws:")}
    unknown = sorted(types - set(CREATE_ACTION))
    assert not unknown, f"add their create actions to CREATE_ACTION and the policy: {unknown}"
    for type_ in sorted(types):
        assert allowed_somewhere(policy, CREATE_ACTION[type_]), type_


def allowed_somewhere(policy: dict[str, Any], action: str) -> bool:
    """Allowed on some resource (the statements scoped by name are checked below)."""
    for statement in policy["Statement"]:
        actions = statement["Action"]
        actions = [actions] if isinstance(actions, str) else actions
        if any(fnmatch.fnmatchcase(action, a) for a in actions):
            return True
    return False


def test_scoped_statements_match_the_names_the_stacks_give(all_plans: list[Plan]) -> None:
    policy = load("deploy-policy.json")
    for plan in all_plans:
        for role in plan.of_type("aws:iam/role:Role"):
            arn = role.outputs["arn"]
            assert allowed(policy, "iam:CreateRole", arn) and allowed(policy, "iam:PassRole", arn)
        for cluster in plan.of_type("aws:eks/cluster:Cluster"):
            assert allowed(policy, "eks:CreateCluster", cluster.outputs["arn"])
            for addon in plan.of_type("aws:eks/addon:Addon"):  # the Mountpoint S3 CSI add-on
                # CreateAddon is on the cluster; Describe/Update/Delete on the add-on's ARN,
                # addon/<cluster>/<add-on>/<uuid> (AWS Service Authorization Reference, EKS)
                assert allowed(policy, "eks:CreateAddon", cluster.outputs["arn"])
                assert allowed(
                    policy, "eks:DescribeAddon",
                    f"arn:aws:eks:us-east-1:{ACCOUNT}:addon/{cluster.outputs['name']}/"
                    f"{addon.inputs['addonName']}/0ac7a1e2-1111-2222-3333-444455556666",
                )  # fmt: skip
            name = cluster.outputs["name"]
            assert allowed(
                policy, "logs:CreateLogGroup",
                f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/aws/eks/{name}/cluster",
            )  # fmt: skip
            assert allowed(
                policy, "eks:CreateNodegroup",
                f"arn:aws:eks:us-east-1:{ACCOUNT}:nodegroup/{name}/gpu/uuid",
            )  # fmt: skip
        for bucket in plan.of_type("aws:s3/bucket:Bucket"):
            assert allowed(policy, "s3:CreateBucket", bucket.outputs["arn"])
        for alias in plan.of_type("aws:kms/alias:Alias"):
            arn = f"arn:aws:kms:us-east-1:{ACCOUNT}:{alias.inputs['name']}"
            assert allowed(policy, "kms:CreateAlias", arn)


def test_a_renamed_stack_is_outside_the_deploy_roles_scope(build_stack_plan: BuildStack) -> None:
    """The README says: a namePrefix not starting with gpuinfra- needs the policy's names
    changed. The check above would catch such a stack."""
    plan = build_stack_plan("dev", {"namePrefix": "ml-dev"})
    policy = load("deploy-policy.json")
    role = plan.of_type("aws:iam/role:Role")[0]
    assert not allowed(policy, "iam:CreateRole", role.outputs["arn"])


def test_readme_names_the_files_and_roles() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("iam/github-oidc-trust-preview.json", "iam/preview-policy.json",
                 "iam/github-oidc-trust-deploy.json", "iam/deploy-policy.json",
                 "AWS_PREVIEW_ROLE_ARN", "AWS_DEPLOY_ROLE_ARN", "GPUINFRA_DEV_RUNNER"):  # fmt: skip
        assert name in readme, name


def test_policy_files_exist() -> None:
    assert {p.name for p in IAM.glob("*.json")} == {
        "github-oidc-trust-preview.json", "preview-policy.json",
        "github-oidc-trust-deploy.json", "deploy-policy.json",
    }  # fmt: skip
    assert Path(IAM / "deploy-policy.json").stat().st_size > 0


def test_the_readme_fill_step_makes_valid_documents() -> None:
    """Run the README's own `fill` function as written: JSON out, no placeholder left."""
    import subprocess

    readme = (ROOT / "README.md").read_text()
    [fill] = [line.strip() for line in readme.splitlines() if line.strip().startswith("fill()")]
    for name in ("github-oidc-trust-preview.json", "preview-policy.json",
                 "github-oidc-trust-deploy.json", "deploy-policy.json"):  # fmt: skip
        script = f'ACCOUNT=111122223333; REPO=acme/gpuinfra; {fill}\nfill "iam/{name}"'
        result = subprocess.run(
            ["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
        )
        document = json.loads(result.stdout)
        text = json.dumps(document)
        assert "<" not in text and ("111122223333" in text or name == "preview-policy.json")
        if "trust" in name:
            assert "repo:acme/gpuinfra:" in text
