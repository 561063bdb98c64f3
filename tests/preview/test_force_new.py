"""The ForceNew table names real inputs of the Pulumi SDKs here, and the diff reads it."""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import pytest

from gpuinfra.provider_rules.force_new import FORCE_NEW, for_type, replacement

_PACKAGES = {
    "aws": "pulumi_aws",
    "alicloud": "pulumi_alicloud",
    "tencentcloud": "tencentcloud_iac_pulumi",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _inputs(cls: Any) -> dict[str, Any]:
    """camelCase input name -> annotation, from the SDK class's constructor."""
    init = getattr(cls, "_internal_init", None) or cls.__init__
    skip = {"self", "resource_name", "opts", "__props__"}
    return {
        _camel(name): p.annotation
        for name, p in inspect.signature(init).parameters.items()
        if name not in skip
    }


def _args_class(module: Any, annotation: Any) -> Any:
    for name in re.findall(r"(\w+Args)\b", str(annotation)):
        inputs = importlib.import_module(module.__name__.rsplit(".", 1)[0] + "._inputs")
        for mod in (importlib.import_module(module.__name__ + "._inputs"), inputs):
            if hasattr(mod, name):
                return getattr(mod, name)
    return None


def _resource(token: str) -> tuple[Any, Any]:
    package, module, cls = token.split(":")
    mod = importlib.import_module(f"{_PACKAGES[package]}.{module.split('/')[0].lower()}")
    return getattr(mod, cls), mod


def _resolves(token: str, path: str) -> bool:
    cls, mod = _resource(token)
    params = _inputs(cls)
    for part in path.replace("[*]", "").split("."):
        if part not in params:
            return False
        nested = _args_class(mod, params[part])
        params = _inputs(nested) if nested is not None else {}
    return True


@pytest.mark.parametrize("token", sorted(FORCE_NEW))
def test_every_listed_field_is_an_sdk_input(token: str) -> None:
    missing = [p for p in FORCE_NEW[token].fields if not _resolves(token, p)]
    assert missing == [], f"{token}: not inputs of the SDK: {missing}"


def test_node_group_instance_types_and_capacity_replace() -> None:
    old = {"instanceTypes": ["g5.xlarge"], "capacityType": "SPOT", "scalingConfig": {"maxSize": 2}}
    new = {
        "instanceTypes": ["g6.xlarge"],
        "capacityType": "ON_DEMAND",
        "scalingConfig": {"maxSize": 4},
    }
    r = replacement("aws:eks/nodeGroup:NodeGroup", old, new,
                    ["capacityType", "instanceTypes[0]", "scalingConfig.maxSize"])  # fmt: skip
    assert r is not None and r.fields == ("capacityType", "instanceTypes")
    assert replacement("aws:eks/nodeGroup:NodeGroup", old, old, ["scalingConfig.maxSize"]) is None


def test_nested_list_paths_and_conditional_rules() -> None:
    tke = for_type("tencentcloud:Kubernetes/nodePool:NodePool")
    assert tke is not None
    assert tke.forced_by("nodeConfig.dataDisks[1].diskSize") == "nodeConfig.dataDisks"
    assert tke.forced_by("autoScalingConfig.instanceType") == "autoScalingConfig.instanceType"
    assert tke.forced_by("maxSize") is None
    instance = "aws:ec2/instance:Instance"
    assert replacement(instance, {"userData": "a"}, {"userData": "b"}, ["userData"]) is None
    replaced = {"userData": "b", "userDataReplaceOnChange": True}
    assert replacement(instance, {"userData": "a"}, replaced, ["userData"]) is not None


def test_kubernetes_kinds_from_the_provider_table() -> None:
    job = for_type("kubernetes:batch/v1:Job")
    assert job is not None and job.forced_by("spec.template.spec.containers[0].image")
    deployment = for_type("kubernetes:apps/v1:Deployment")
    assert deployment is not None
    assert deployment.forced_by("spec.template.spec.containers[0].image") is None
    assert deployment.forced_by("metadata.name") == "metadata.name"
    assert for_type("gpuinfra:aws:DataBucket") is None
