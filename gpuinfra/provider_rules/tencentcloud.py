"""Provider rules for the tencentcloud resources the stacks create (see model.py)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .model import Problem, RuleContext, provider_rule

if TYPE_CHECKING:
    from ..engine import RecordedResource


# Workstation

CVM_INSTANCE = "tencentcloud:Instance/instance:Instance"
USER_DATA_LIMIT = 16 * 1024


@provider_rule(
    CVM_INSTANCE,
    source=(
        "tencentcloudstack/terraform-provider-tencentcloud@v1.82.42 "
        'tencentcloud/services/cvm/resource_tc_instance.go:453 ("user_data_raw" ... "Up to '
        '16 KB after base64 encoded")'
    ),
)
def user_data_raw_over_16kb(resource: RecordedResource, ctx: RuleContext) -> Iterator[Problem]:
    """CVM takes at most 16 KB of user data after base64 encoding."""
    raw = resource.inputs.get("userDataRaw")
    if isinstance(raw, str):
        size = len(base64.b64encode(raw.encode()))
        if size > USER_DATA_LIMIT:
            yield (
                "userDataRaw",
                f"{size} bytes after base64; CVM takes at most {USER_DATA_LIMIT} (16 KB)",
            )
