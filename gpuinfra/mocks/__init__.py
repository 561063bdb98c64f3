"""Realistic outputs for every resource and lookup the program makes, with no cloud.

One module per cloud (`aws.py`, ...) lists its answers; this module dispatches on the
type token's package. Ids and generated names hash the resource's type and name, so the
same program always gives the same plan (the plan diff relies on that).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import alicloud, aws, tencentcloud, volcengine
from .common import ACCOUNT_ID, CloudMocks, UnmockedCallError, autoname, digest

__all__ = [
    "ACCOUNT_ID",
    "DEFAULT_REGION",
    "UnmockedCallError",
    "autoname",
    "call_result",
    "resource_outputs",
]

_BY_PACKAGE: dict[str, CloudMocks] = {
    "aws": aws.MOCKS,
    "alicloud": alicloud.MOCKS,
    "tencentcloud": tencentcloud.MOCKS,
    "volcenginecc": volcengine.MOCKS,
}
DEFAULT_REGION: dict[str, str] = {
    "aws": "us-east-1",
    "alicloud": "cn-hangzhou",
    "tencentcloud": "ap-guangzhou",
    "volcenginecc": "cn-beijing",
}
"""Region a provider package's mocks use when its `<package>:region` key is not set."""


def resource_outputs(
    type_: str, name: str, inputs: Mapping[str, Any], *, custom: bool, region: str
) -> tuple[str | None, dict[str, Any]]:
    """The (id, state) a real provider would return after creating the resource."""
    state = dict(inputs)
    if not custom:
        return None, state
    mocks = _BY_PACKAGE.get(type_.split(":")[0], CloudMocks())
    handler = mocks.resources.get(type_)
    if handler is not None:
        handler(name, inputs, state, region)
    prefix = mocks.id_prefixes.get(type_)
    resource_id = str(
        state.get("id") or f"{prefix or name}-{digest(type_, name, length=17 if prefix else 8)}"
    )
    if mocks.finish is not None:
        mocks.finish(type_, name, state, resource_id, region)
    state.setdefault("id", resource_id)
    return resource_id, state


def call_result(token: str, args: Mapping[str, Any], *, region: str) -> dict[str, Any]:
    mocks = _BY_PACKAGE.get(token.split(":")[0], CloudMocks())
    handler = mocks.calls.get(token)
    if handler is None:
        raise UnmockedCallError(
            f"the offline engine has no answer for the lookup {token}; add one in gpuinfra/mocks/"
        )
    return handler(args, region)
