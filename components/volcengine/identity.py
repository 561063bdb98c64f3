"""VKE IRSA: an IAM role that only one ServiceAccount's tokens may assume, and its TOS policy.

With IRSA on, VKE's cluster has an OIDC provider in IAM (`IrsaConfig.OidcTrn`) whose issuer is
`IrsaConfig.Issuer`; a role trusting that provider for `sts:AssumeRoleWithOIDC`, limited by
`oidc:iss`, `oidc:aud` (`sts.volcengine.com`) and `oidc:sub` (`system:serviceaccount:<ns>:<sa>`),
can be assumed only by that ServiceAccount's projected tokens (trust policy format and
condition keys: STS AssumeRoleWithOIDC, https://www.volcengine.com/docs/6257/1494877, 2025-03-17;
audience and `sub` format: VKE "集群中使用 IRSA 能力", https://www.volcengine.com/docs/6460/1324613).

Sources for the resources: volcengine/terraform-provider-volcenginecc@v0.0.53
internal/volcengine/iam/{role,policy}_resource_gen.go.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_volcenginecc as volcenginecc

from .tags import tag_list

ROLE_TRN_ANNOTATION = "vke.volcengine.com/role-trn"
"""The ServiceAccount annotation VKE's pod-identity-webhook reads (as public VKE deployments
use it; not in a Volcano Engine page found here: see the README's unconfirmed list)."""
INJECTION_LABEL = "vke.volcengine.com/pod-identity-injection-enabled"
"""Namespace label that turns the webhook's injection on (same caveat as above)."""
STS_AUDIENCE = "sts.volcengine.com"
SESSION_SECONDS = 3600
"""The shortest `MaxSessionDuration` the role takes (3600 to 43200: iam/role_resource_gen.go:
118-120); the SDK refreshes before expiry."""


@dataclass(frozen=True)
class ServiceAccountRoleArgs:
    oidc_trn: pulumi.Input[str]
    issuer: pulumi.Input[str]
    namespace: str
    service_account: str
    policy_document: pulumi.Input[str]
    tags: Mapping[str, str]


class ServiceAccountRole(pulumi.ComponentResource):
    role_trn: pulumi.Output[str]
    role_name: str

    def __init__(
        self, name: str, args: ServiceAccountRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:volcengine:ServiceAccountRole", name, None, opts)
        subject = f"system:serviceaccount:{args.namespace}:{args.service_account}"
        policy = volcenginecc.iam.Policy(
            f"{name}-policy",
            policy_name=f"{name}-bucket"[:64],
            policy_type="Custom",
            policy_document=args.policy_document,
            description=f"What {subject} may do"[:128],
            opts=pulumi.ResourceOptions(parent=self),
        )
        trust = pulumi.Output.all(args.oidc_trn, args.issuer).apply(
            lambda parts: irsa_trust_policy(parts[0], parts[1], subject)
        )
        self.role_name = name[:64]
        role = volcenginecc.iam.Role(
            f"{name}-role",
            role_name=self.role_name,
            display_name=f"IRSA {args.service_account}"[:64],
            description=f"VKE IRSA for {subject}"[:128],
            trust_policy_document=trust,
            max_session_duration=SESSION_SECONDS,
            policies=[{"policy_name": policy.policy_name, "policy_type": "Custom"}],
            tags=tag_list(args.tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        self.role_trn = role.trn
        self.register_outputs({"role_trn": self.role_trn})


def irsa_trust_policy(oidc_trn: str, issuer: str, subject: str) -> str:
    """Only tokens of one ServiceAccount, issued by this cluster for STS, may assume the role."""
    return json.dumps(
        {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["sts:AssumeRoleWithOIDC"],
                    "Principal": {"Federated": [oidc_trn]},
                    "Condition": {
                        "StringEquals": {
                            "oidc:iss": [issuer],
                            "oidc:aud": [STS_AUDIENCE],
                            "oidc:sub": [subject],
                        }
                    },
                }
            ]
        }
    )


def bucket_access_policy(bucket: str) -> str:
    """List, read and write one bucket's objects; no bucket settings, no other bucket.

    TOS resources are `trn:tos:::<bucket>` and `trn:tos:::<bucket>/<key>`.
    """
    return json.dumps(
        {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": [
                        "tos:ListBucket",
                        "tos:HeadBucket",
                        "tos:ListBucketMultipartUploads",
                    ],
                    "Resource": [f"trn:tos:::{bucket}"],
                },
                {
                    "Effect": "Allow",
                    "Action": [
                        "tos:GetObject",
                        "tos:HeadObject",
                        "tos:PutObject",
                        "tos:DeleteObject",
                        "tos:AbortMultipartUpload",
                        "tos:ListMultipartUploadParts",
                    ],
                    "Resource": [f"trn:tos:::{bucket}/*"],
                },
            ]
        }
    )
