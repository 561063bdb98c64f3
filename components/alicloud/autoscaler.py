"""ACK's own cluster autoscaler: switched on and tuned for the cluster, no Deployment of ours.

ACK runs the autoscaler for node pools whose `scaling_config` is enabled (the GPU pool is
one, typed `gpu`); `cs.AutoscalingConfig` is the cluster's autoscaler settings (the
"Configure auto scaling" API, alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/
developer-reference/api-configure-auto-scaling). The ACK guide "Enable node autoscaling"
(2026-03-30) says a pool's auto scaling takes effect only once it is enabled for the cluster,
which is what this resource does; the provider's own acceptance test applies it to a plain
ACK Pro cluster with no autoscaler add-on listed, as here.

Line numbers below are aliyun/terraform-provider-alicloud@ace5bcf8
alicloud/resource_alicloud_cs_autoscaling_config.go. Create is Update (:119-121), which sends
most fields only when truthy (`d.GetOk`); Read sets them from the add-on's config.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

SCALER_TYPE = "cluster-autoscaler"
"""ACK's Cluster Autoscaler (the other choice, goatscaler, is ACK's instant elasticity)."""
EXPANDER = "least-waste"
"""Of the pools that fit the pending pods, the one left with the least idle capacity."""


@dataclass(frozen=True)
class AckAutoscalerArgs:
    cluster_id: pulumi.Input[str]
    scale_down_delay_minutes: int
    depends_on: tuple[pulumi.Resource, ...] = ()


class AckAutoscaler(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: AckAutoscalerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpuinfra:alicloud:AckAutoscaler", name, None, opts)
        delay = f"{args.scale_down_delay_minutes}m"
        config = alicloud.cs.AutoscalingConfig(
            f"{name}-autoscaling",
            cluster_id=args.cluster_id,
            scaler_type=SCALER_TYPE,
            expander=EXPANDER,
            scale_up_from_zero=True,
            scale_down_enabled=True,
            # An idle GPU node goes after `delay`, and not sooner than `delay` after a scale-up.
            # Both get the same value on purpose: Alibaba's docs disagree on which of the two
            # is ScaleDownUnneededTime and which ScaleDownDelayAfterAdd (the provider reads
            # cool_down_duration back from ScaleDownUnneededTime; an API page of 2026-07 says
            # the reverse).
            unneeded_duration=delay,
            cool_down_duration=delay,
            # Sent as true, the API's default, and read back as such (Read :173-174). A false
            # here would never be sent (Update reads it with GetOk, :234) and would read back
            # as true: a diff on every `pulumi up`. GPU nodes lose nothing by it: kube-system
            # Deployments do not tolerate the GPU taint, and DaemonSet and mirror pods do not
            # count (CreateAutoscalingConfig `skip_nodes_with_system_pods`).
            skip_nodes_with_system_pods=True,
            # skip_nodes_with_local_storage is left at its default, false (provider docs,
            # website/docs/r/cs_autoscaling_config.html.markdown): a false would not be sent.
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on)),
        )
        self.config_id = config.id
        self.register_outputs({"config_id": self.config_id})
