"""Provider rules for the alicloud resources the stacks create (see model.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .model import Problem, RuleContext, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource


# Workstation

ECS_INSTANCE = "alicloud:ecs/instance:Instance"


@provider_rule(
    ECS_INSTANCE,
    source=(
        "aliyun/terraform-provider-alicloud@v1.289.0 website/docs/r/instance.html.markdown:241 "
        '("http_put_response_hop_limit ... **NOTE:**: This parameter is not available for use '
        'yet"); sent as RunInstances HttpPutResponseHopLimit, '
        "alicloud/resource_alicloud_instance.go:1208"
    ),
)
def metadata_hop_limit_not_available(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """ECS does not offer the metadata PUT hop limit yet; the provider still sends it."""
    if resource.inputs.get("httpPutResponseHopLimit") is not None:
        yield (
            "httpPutResponseHopLimit",
            "documented by the provider as not available for use yet; leave it unset (the "
            "API's default is 1)",
        )


@provider_rule(
    ECS_INSTANCE,
    source=(
        "aliyun/terraform-provider-alicloud@v1.289.0 "
        "alicloud/resource_alicloud_instance.go:765-769 "
        '("role_name" Deprecated: "Field `role_name` has been deprecated from provider version '
        '1.275.0. New resource `alicloud_ecs_ram_role_attachment` instead.")'
    ),
)
def instance_role_name_deprecated(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """The instance's `role_name` is deprecated; the provider points to a separate resource."""
    if resource.inputs.get("roleName"):
        yield (
            "roleName",
            "deprecated since provider 1.275.0: attach the RAM role with "
            "alicloud.ecs.RamRoleAttachment(instance_id=..., ram_role_name=...)",
        )
