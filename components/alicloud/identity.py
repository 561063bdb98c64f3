"""RRSA: a RAM role that only one Kubernetes ServiceAccount of one cluster can assume."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

RRSA_ROLE_ANNOTATION = "pod-identity.alibabacloud.com/role-name"
"""ServiceAccount annotation ack-pod-identity-webhook reads to inject the role's credentials
(it injects into pods of namespaces labelled `pod-identity.alibabacloud.com/injection: on`)."""
RRSA_AUDIENCE = "sts.aliyuncs.com"


@dataclass(frozen=True)
class RrsaRoleArgs:
    role_name: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    namespace: str
    service_account: str
    policy: pulumi.Input[str]
    """Permissions policy document (JSON), attached as a custom policy."""
    tags: Mapping[str, str]


class RrsaRole(pulumi.ComponentResource):
    role_name: pulumi.Output[str]
    role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: RrsaRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:RrsaRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        trust = pulumi.Output.all(args.oidc_provider_arn, args.oidc_issuer_url).apply(
            lambda parts: rrsa_trust_policy(
                parts[0], parts[1], args.namespace, args.service_account
            )
        )
        role = alicloud.ram.Role(
            f"{name}-role",
            role_name=args.role_name,
            assume_role_policy_document=trust,
            description=f"RRSA for system:serviceaccount:{args.namespace}:{args.service_account}",
            max_session_duration=3600,
            tags=dict(args.tags),
            opts=child,
        )
        policy = alicloud.ram.Policy(
            f"{name}-policy",
            policy_name=f"{args.role_name}-oss",
            policy_document=args.policy,
            description=f"What {args.role_name} may do: one bucket's objects",
            tags=dict(args.tags),
            opts=child,
        )
        alicloud.ram.RolePolicyAttachment(
            f"{name}-policy-attachment",
            role_name=role.role_name,
            policy_name=policy.policy_name,
            policy_type="Custom",
            opts=child,
        )
        self.role_name = role.role_name
        self.role_arn = role.arn
        self.register_outputs({"role_name": self.role_name, "role_arn": self.role_arn})


def rrsa_trust_policy(
    provider_arn: str, issuer_url: str, namespace: str, service_account: str
) -> str:
    """Only tokens the cluster's RRSA issuer minted for this one ServiceAccount.

    Shape from ACK's RRSA guide: `Federated` principal is the cluster's OIDC provider
    (`acs:ram::<uid>:oidc-provider/ack-rrsa-<cluster id>`), conditions on `oidc:iss`,
    `oidc:aud` and `oidc:sub`.
    """
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRole",
                    "Principal": {"Federated": [provider_arn]},
                    "Condition": {
                        "StringEquals": {
                            "oidc:iss": issuer_url,
                            "oidc:aud": RRSA_AUDIENCE,
                            "oidc:sub": f"system:serviceaccount:{namespace}:{service_account}",
                        }
                    },
                }
            ],
        }
    )


def bucket_access_policy(bucket: str) -> str:
    """Read, write and list one bucket's objects; no bucket settings, no other bucket."""
    # Bucket actions match the bucket's ARN, object actions `<bucket>/*` (RAM policy example
    # "List and read resources in a bucket": acs:oss:*:*:<bucket>[/*]).
    return json.dumps(
        {
            "Version": "1",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["oss:ListObjects", "oss:ListObjectVersions", "oss:GetBucketInfo"],
                    "Resource": [f"acs:oss:*:*:{bucket}"],
                },
                {
                    "Effect": "Allow",
                    "Action": [
                        "oss:GetObject",
                        "oss:PutObject",
                        "oss:DeleteObject",
                        "oss:AbortMultipartUpload",
                        "oss:ListParts",
                    ],
                    "Resource": [f"acs:oss:*:*:{bucket}/*"],
                },
            ],
        }
    )
