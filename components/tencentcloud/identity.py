"""TKE pod identity: the cluster's OIDC provider in CAM, and a role one ServiceAccount assumes.

TKE's "OIDC resource access control" creates a CAM OIDC identity provider named after
the cluster and installs the pod-identity-webhook add-on; a ServiceAccount annotated
`tke.cloud.tencent.com/role-arn` then gets a projected token and the role's temporary
credentials (https://www.tencentcloud.com/document/product/457/57285; provider name
`qcs::cam::uin/<uin>:oidc-provider/<cluster id>` as used by Tencent's own Terraform
module terraform-tencentcloud-tke, examples/pod-identity). CAM role trust takes
`oidc:iss`, `oidc:aud` and, optionally, `oidc:sub`
(https://intl.cloud.tencent.com/document/product/598/47191).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import tencentcloud_iac_pulumi as tencentcloud

POD_IDENTITY_ANNOTATION = "tke.cloud.tencent.com/role-arn"
STS_AUDIENCE = "sts.cloud.tencent.com"
"""The client ID TKE registers on the OIDC provider and the webhook's default audience."""


@dataclass(frozen=True)
class PodIdentityArgs:
    cluster_id: pulumi.Input[str]


class PodIdentity(pulumi.ComponentResource):
    issuer: pulumi.Output[str]

    def __init__(
        self, name: str, args: PodIdentityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:PodIdentity", name, None, opts)
        auth = tencentcloud.kubernetes.AuthAttachment(
            f"{name}-oidc",
            cluster_id=args.cluster_id,
            use_tke_default=True,
            auto_create_oidc_config=True,
            auto_create_client_ids=[STS_AUDIENCE],
            auto_install_pod_identity_webhook_addon=True,
            # Only an RBAC rule letting anonymous users read the API server's
            # /.well-known/openid-configuration and /openid/v1/jwks
            # (resource_tc_kubernetes_auth_attachment.go:54-59). CAM does not fetch them: the
            # OIDC provider TKE creates holds the signing key itself (`identity_key`, "Public
            # key for signature": services/cam/data_source_tc_cam_oidc_config.go:37-41), and
            # STS checks tokens against it. So no anonymous access (provider v1.82.42).
            auto_create_discovery_anonymous_auth=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.issuer = auth.tke_default_issuer
        self.register_outputs({"issuer": self.issuer})


@dataclass(frozen=True)
class ServiceAccountRoleArgs:
    account_uin: pulumi.Input[str]
    cluster_id: pulumi.Input[str]
    issuer: pulumi.Input[str]
    namespace: str
    service_account: str
    policy: pulumi.Input[str]
    """CAM policy document (JSON) the role gets."""
    tags: Mapping[str, str]


class ServiceAccountRole(pulumi.ComponentResource):
    role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: ServiceAccountRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:tencentcloud:ServiceAccountRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        trust = pulumi.Output.all(args.account_uin, args.cluster_id, args.issuer).apply(
            lambda parts: pod_identity_trust_policy(
                parts[0], parts[1], parts[2], args.namespace, args.service_account
            )
        )
        subject = f"system:serviceaccount:{args.namespace}:{args.service_account}"
        role = tencentcloud.cam.Role(
            f"{name}-role",
            name=name,
            document=trust,
            description=f"TKE pod identity for {subject}",
            console_login=False,
            session_duration=7200,
            tags=dict(args.tags),
            opts=child,
        )
        policy = tencentcloud.cam.Policy(
            f"{name}-policy",
            name=f"{name}-bucket",
            document=args.policy,
            description=f"What {subject} may do",
            opts=child,
        )
        tencentcloud.cam.RolePolicyAttachment(
            f"{name}-policy-attachment", role_id=role.id, policy_id=policy.id, opts=child
        )
        self.role_arn = role.role_arn
        self.register_outputs({"role_arn": self.role_arn})


def pod_identity_trust_policy(
    account_uin: str, cluster_id: str, issuer: str, namespace: str, service_account: str
) -> str:
    """Only tokens of one ServiceAccount, issued by this cluster for STS, may assume the role."""
    return json.dumps(
        {
            "version": "2.0",
            "statement": [
                {
                    # Arrays where CAM allows a string or an array: CAM hands documents back
                    # with arrays, and the provider compares what it reads with what was sent
                    # (services/cam/service_tencentcloud_cam.go:1179-1215).
                    "action": ["name/sts:AssumeRoleWithWebIdentity"],
                    "effect": "allow",
                    "principal": {
                        "federated": [f"qcs::cam::uin/{account_uin}:oidc-provider/{cluster_id}"]
                    },
                    "condition": {
                        "string_equal": {
                            "oidc:iss": [issuer],
                            "oidc:aud": [STS_AUDIENCE],
                            "oidc:sub": [f"system:serviceaccount:{namespace}:{service_account}"],
                        }
                    },
                }
            ],
        }
    )


def bucket_access_policy(region: str, app_id: str, bucket: str) -> str:
    """List, read and write one bucket's objects; no bucket settings, no other bucket."""
    bucket_resource = f"qcs::cos:{region}:uid/{app_id}:{bucket}/"
    return json.dumps(
        {
            "version": "2.0",
            "statement": [
                {
                    "effect": "allow",
                    "action": [
                        "name/cos:GetBucket",
                        "name/cos:HeadBucket",
                        "name/cos:ListMultipartUploads",
                    ],
                    "resource": [bucket_resource],
                },
                {
                    "effect": "allow",
                    "action": [
                        "name/cos:GetObject",
                        "name/cos:HeadObject",
                        "name/cos:PutObject",
                        "name/cos:DeleteObject",
                        "name/cos:InitiateMultipartUpload",
                        "name/cos:UploadPart",
                        "name/cos:CompleteMultipartUpload",
                        "name/cos:AbortMultipartUpload",
                        "name/cos:ListParts",
                    ],
                    "resource": [f"{bucket_resource}*"],
                },
            ],
        }
    )
