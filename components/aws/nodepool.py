"""EKS managed node groups: the IAM role nodes share, and one group per pool."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_aws as aws

from components.cluster_handle import Taint
from components.settings.model import PoolSize

from .iam import managed_policy_arn, service_trust_policy

_NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)
_EKS_TAINT_EFFECT = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


@dataclass(frozen=True)
class NodeRoleArgs:
    partition: str
    tags: Mapping[str, str]


class NodeRole(pulumi.ComponentResource):
    """Only what a node needs to join and pull images; pods get bucket access via IRSA."""

    role_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeRoleArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:NodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-node-role",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            description="EKS worker nodes",
            tags=dict(args.tags),
            opts=child,
        )
        self._attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=role.name,
                policy_arn=managed_policy_arn(args.partition, policy),
                opts=child,
            )
            for policy in _NODE_POLICIES
        ]
        self.role_arn = role.arn
        self.register_outputs({"role_arn": self.role_arn})

    @property
    def attachments(self) -> list[aws.iam.RolePolicyAttachment]:
        return self._attachments


@dataclass(frozen=True)
class ManagedNodeGroupArgs:
    cluster_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    subnet_ids: Sequence[pulumi.Input[str]]
    instance_types: Sequence[str]
    ami_type: Literal["AL2023_x86_64_STANDARD", "AL2023_x86_64_NVIDIA"]
    capacity_type: Literal["SPOT", "ON_DEMAND"]
    size: PoolSize
    disk_size_gb: int
    labels: Mapping[str, str]
    taints: Sequence[Taint]
    kubernetes_version: str
    """The cluster's minor: nodes follow the control plane. Left unset, EKS keeps a group on
    the minor it was created with and only the control plane moves (the provider sends
    `version` only when set and updates it only on a change: terraform-provider-aws
    internal/service/eks/node_group.go, resourceNodeGroupCreate/Update)."""
    tags: Mapping[str, str]
    depends_on: Sequence[pulumi.Resource] = ()
    autoscaled: bool = False
    """True: the Cluster Autoscaler owns the desired size, which Pulumi then leaves alone."""
    autoscaler_tags: Mapping[str, str] = field(default_factory=dict)
    """Cluster Autoscaler tags (discovery, scale-from-zero node template), set on the node
    group and on its Auto Scaling group, where the autoscaler reads them."""


class ManagedNodeGroup(pulumi.ComponentResource):
    node_group_name: pulumi.Output[str]
    autoscaling_group_name: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: ManagedNodeGroupArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:aws:ManagedNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        instance_tags = {**args.tags, "Name": name}
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            description=f"Nodes of {name}: IMDSv2 only, encrypted gp3 root volume",
            # IMDSv2 with one hop: pods cannot reach node credentials and must use IRSA.
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",
                "http_put_response_hop_limit": 1,
            },
            block_device_mappings=[
                {
                    "device_name": "/dev/xvda",  # root device of the AL2023 EKS AMIs
                    "ebs": {
                        "volume_size": args.disk_size_gb,
                        "volume_type": "gp3",
                        "encrypted": "true",
                        "delete_on_termination": "true",
                    },
                }
            ],
            # No security groups here: EKS then gives the nodes the cluster security group
            # itself (EKS user guide, launch-templates.adoc:105). Nodes serve none of the
            # admin ports (SSH, Jupyter, TensorBoard); only the workstation carries that group.
            tag_specifications=[
                {"resource_type": "instance", "tags": instance_tags},
                {"resource_type": "volume", "tags": instance_tags},
            ],
            update_default_version=True,
            tags=dict(args.tags),
            opts=child,
        )
        group = aws.eks.NodeGroup(
            f"{name}-nodes",
            cluster_name=args.cluster_name,
            node_role_arn=args.node_role_arn,
            subnet_ids=list(args.subnet_ids),
            ami_type=args.ami_type,
            version=args.kubernetes_version,
            capacity_type=args.capacity_type,
            instance_types=list(args.instance_types),
            scaling_config={
                "min_size": args.size.min_nodes,
                "desired_size": args.size.desired_nodes,
                "max_size": args.size.max_nodes,
            },
            update_config={"max_unavailable": 1},
            labels=dict(args.labels),
            taints=[
                {"key": t.key, "value": t.value, "effect": _EKS_TAINT_EFFECT[t.effect]}
                for t in args.taints
            ],
            launch_template={"id": template.id, "version": template.latest_version.apply(str)},
            tags={**args.tags, **args.autoscaler_tags},
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(args.depends_on),
                # The autoscaler moves the desired size between min and max; without this, every
                # `pulumi up` would reset it and stop nodes in the middle of training.
                ignore_changes=["scalingConfig.desiredSize"] if args.autoscaled else None,
            ),
        )
        # EKS does not copy node group tags to the group's Auto Scaling group, where the
        # autoscaler looks for them (and where the autoscaler role's IAM condition reads them).
        self.autoscaling_group_name = group.resources.apply(_autoscaling_group_name)
        for key, value in sorted(args.autoscaler_tags.items()):
            aws.autoscaling.Tag(
                f"{name}-asg-{_slug(key.removeprefix('k8s.io/cluster-autoscaler/'))}",
                autoscaling_group_name=self.autoscaling_group_name,
                tag={"key": key, "value": value, "propagate_at_launch": False},
                opts=child,
            )
        self.node_group_name = group.node_group_name
        self.launch_template_id = template.id
        self.register_outputs({"node_group_name": self.node_group_name})


def _autoscaling_group_name(resources: Sequence[Any]) -> str:
    """`resources[0].autoscaling_groups[0].name`: the one Auto Scaling group EKS made."""
    for resource in resources or []:
        for group in resource.autoscaling_groups or []:
            if group.name:
                return str(group.name)
    raise ValueError("EKS reported no Auto Scaling group for the node group")


def _slug(tag_key: str) -> str:
    """A resource-name-safe form of a tag key, so each tag keeps its name as others come."""
    return re.sub(r"[^a-z0-9]+", "-", tag_key.lower()).strip("-")
