"""What the Cluster Autoscaler needs from AWS: an IRSA policy limited to this cluster's node
groups, and the Auto Scaling group tags that let it discover them and scale them from zero.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.autoscaler_spec import (
    AutoscalerSpec,
    cluster_autoscaler_flags,
    cluster_autoscaler_image,
)
from components.cluster_handle import Taint

from .identity import IRSA_ANNOTATION, ServiceAccountRole, ServiceAccountRoleArgs

TAG_PREFIX = "k8s.io/cluster-autoscaler"
NODE_TEMPLATE = f"{TAG_PREFIX}/node-template"
SERVICE_ACCOUNT = "cluster-autoscaler"
NAMESPACE = "kube-system"
GPU_RESOURCE = "nvidia.com/gpu"
AWS_GPU_LABEL = "k8s.amazonaws.com/accelerator"
"""The label the autoscaler's AWS provider reads to treat a node as a GPU node: until the
device plugin advertises its GPUs, such a node counts as not ready yet instead of triggering
another scale-up (Cluster Autoscaler FAQ, "How can I scale a node group to 0?" and the GPU
notes of cloudprovider/aws/README.md)."""


def owner_tag(cluster_name: str) -> str:
    return f"{TAG_PREFIX}/{cluster_name}"


def discovery_tags(cluster_name: str) -> dict[str, str]:
    """Tags `--node-group-auto-discovery=asg:tag=...` looks for (EKS also sets them on the
    Auto Scaling groups of managed node groups; they are set here so the IAM condition never
    depends on that)."""
    return {f"{TAG_PREFIX}/enabled": "true", owner_tag(cluster_name): "owned"}


def node_group_discovery(cluster_name: str) -> str:
    return f"asg:tag={TAG_PREFIX}/enabled,{owner_tag(cluster_name)}"


def scale_from_zero_tags(
    gpus_per_node: int, labels: Mapping[str, str], taints: Sequence[Taint]
) -> dict[str, str]:
    """Node-template tags: what a node of an empty group would offer, so the autoscaler can
    decide to start the first one for a pod asking for `nvidia.com/gpu` and tolerating the
    taint (cloudprovider/aws/README.md, "Scaling a node group to 0")."""
    tags = {f"{NODE_TEMPLATE}/resources/{GPU_RESOURCE}": str(gpus_per_node)}
    tags.update({f"{NODE_TEMPLATE}/label/{key}": value for key, value in labels.items()})
    tags.update({f"{NODE_TEMPLATE}/taint/{t.key}": f"{t.value}:{t.effect}" for t in taints})
    return tags


def autoscaler_policy(cluster_name: str, partition: str, region: str, account_id: str) -> str:
    """Read what it must to plan; resize and terminate only groups tagged as this cluster's.

    Actions from cloudprovider/aws/README.md ("IAM Policy", "Minimal IAM Permissions Policy").
    The Describe actions support no resource-level scoping, so they take `*`.
    """
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ResizeThisClustersGroupsOnly",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:SetDesiredCapacity",
                        "autoscaling:TerminateInstanceInAutoScalingGroup",
                    ],
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{owner_tag(cluster_name)}": "owned"}
                    },
                },
                {
                    "Sid": "DescribeGroupsAndInstanceTypes",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingGroups",
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeLaunchConfigurations",
                        "autoscaling:DescribeScalingActivities",
                        "autoscaling:DescribeTags",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplateVersions",
                        "ec2:GetInstanceTypesFromInstanceRequirements",
                    ],
                    "Resource": "*",
                },
                {
                    "Sid": "ReadThisClustersNodeGroups",
                    "Effect": "Allow",
                    "Action": ["eks:DescribeNodegroup"],
                    "Resource": (
                        f"arn:{partition}:eks:{region}:{account_id}:nodegroup/{cluster_name}/*"
                    ),
                },
            ],
        }
    )


@dataclass(frozen=True)
class ClusterAutoscalerRoleArgs:
    cluster_name: str
    kubernetes_version: str
    region: str
    partition: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    scale_down_delay_minutes: int
    tags: Mapping[str, str]


class ClusterAutoscalerRole(pulumi.ComponentResource):
    """The autoscaler's IRSA role, and the spec the Kubernetes layer runs it from."""

    spec: AutoscalerSpec

    def __init__(
        self, name: str, args: ClusterAutoscalerRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:ClusterAutoscalerRole", name, None, opts)
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        role = ServiceAccountRole(
            f"{name}-cluster-autoscaler",
            ServiceAccountRoleArgs(
                oidc_provider_arn=args.oidc_provider_arn,
                oidc_issuer_url=args.oidc_issuer_url,
                namespace=NAMESPACE,
                service_account=SERVICE_ACCOUNT,
                policy=account.account_id.apply(
                    lambda account_id: autoscaler_policy(
                        args.cluster_name, args.partition, args.region, account_id
                    )
                ),
                tags=args.tags,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.role_arn = role.role_arn
        self.spec = AutoscalerSpec(
            image=cluster_autoscaler_image(args.kubernetes_version),
            args=cluster_autoscaler_flags(
                cloud_provider="aws",
                node_group_discovery=node_group_discovery(args.cluster_name),
                scale_down_delay_minutes=args.scale_down_delay_minutes,
            ),
            service_account_annotations={IRSA_ANNOTATION: role.role_arn},
            env={"AWS_REGION": args.region},
        )
        self.register_outputs({"role_arn": self.role_arn})
