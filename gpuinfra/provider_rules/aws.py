"""Provider rules for the aws resources the stacks create (see model.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .model import Problem, RuleContext, get, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource


# Workstation

EC2_INSTANCE = "aws:ec2/instance:Instance"


@provider_rule(
    EC2_INSTANCE,
    source=(
        "hashicorp/terraform-provider-aws issue #38142 (aws_instance instance_market_options: "
        "persistent type creates untracked resource); fix PR #41206 unmerged, it names the "
        "unmatched cleanup condition at internal/service/ec2/ec2_instance.go:2224 (658a6457)"
    ),
)
def persistent_spot_request_outlives_instance(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """Deleting an instance leaves its persistent spot request open, which relaunches it."""
    path = "instanceMarketOptions.spotOptions.spotInstanceType"
    if get(resource.inputs, path) == "persistent":
        yield (
            path,
            "a persistent spot request is not cancelled when the instance is destroyed and "
            "launches an untracked instance: use `one-time` (with `terminate` on interruption)",
        )


@provider_rule(
    EC2_INSTANCE,
    source=(
        "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/interruption-behavior.html "
        '("Stop interrupted Spot Instances ... The Spot Instance request type must be '
        'persistent"); API_SpotMarketOptions SpotInstanceType'
    ),
)
def spot_stop_needs_persistent_request(
    resource: RecordedResource, ctx: RuleContext
) -> Iterator[Problem]:
    """EC2 stops or hibernates an interrupted spot instance only for a persistent request."""
    options = get(resource.inputs, "instanceMarketOptions.spotOptions") or {}
    behavior = options.get("instanceInterruptionBehavior")
    if behavior in ("stop", "hibernate") and options.get("spotInstanceType") != "persistent":
        yield (
            "instanceMarketOptions.spotOptions.instanceInterruptionBehavior",
            f"`{behavior}` needs a persistent spot request (the default is one-time), and a "
            "persistent request outlives the instance: use `terminate`",
        )


@provider_rule(
    EC2_INSTANCE,
    source=(
        "hashicorp/terraform-provider-aws internal/service/ec2/ec2_instance.go, aws_instance "
        'schema: "user_data" ValidateFunc validation.StringLenBetween(0, 16384)'
    ),
)
def user_data_over_16kb(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """The provider refuses `user_data` longer than 16384 characters (EC2's 16 KB)."""
    user_data = resource.inputs.get("userData")
    if isinstance(user_data, str) and len(user_data) > 16384:
        yield "userData", f"{len(user_data)} characters; EC2 takes at most 16384 (16 KB)"
