"""IRSA: an IAM role that only one Kubernetes ServiceAccount can assume."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"


@dataclass(frozen=True)
class ServiceAccountRoleArgs:
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    namespace: str
    service_account: str
    policy: pulumi.Input[str]
    """Inline permissions policy (JSON)."""
    tags: Mapping[str, str]


class ServiceAccountRole(pulumi.ComponentResource):
    role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: ServiceAccountRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:ServiceAccountRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        trust = pulumi.Output.all(args.oidc_provider_arn, args.oidc_issuer_url).apply(
            lambda parts: irsa_trust_policy(
                parts[0], parts[1], args.namespace, args.service_account
            )
        )
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=trust,
            description=f"IRSA for system:serviceaccount:{args.namespace}:{args.service_account}",
            tags=dict(args.tags),
            opts=child,
        )
        aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=args.policy, opts=child)
        self.role_arn = role.arn
        self.register_outputs({"role_arn": self.role_arn})


def irsa_trust_policy(
    provider_arn: str, issuer_url: str, namespace: str, service_account: str
) -> str:
    issuer = issuer_url.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{issuer}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ],
        }
    )


def bucket_access_policy(bucket_arn: str) -> str:
    """Read, write and list one bucket; nothing else (no bucket settings, no other buckets)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ListTheBucket",
                    "Effect": "Allow",
                    "Action": [
                        "s3:ListBucket",
                        "s3:GetBucketLocation",
                        "s3:ListBucketMultipartUploads",
                    ],
                    "Resource": bucket_arn,
                },
                {
                    "Sid": "ReadWriteObjects",
                    "Effect": "Allow",
                    "Action": [
                        "s3:GetObject",
                        "s3:PutObject",
                        "s3:DeleteObject",
                        "s3:AbortMultipartUpload",
                        "s3:ListMultipartUploadParts",
                    ],
                    "Resource": f"{bucket_arn}/*",
                },
            ],
        }
    )
