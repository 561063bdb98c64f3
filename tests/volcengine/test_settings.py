"""Volcano Engine settings: refused like the others (exit 2, every problem named, before any
resource), and the VKE-only keys checked."""

from __future__ import annotations

import pytest

from components.settings import SettingsError
from tests.volcengine.conftest import build_ve


def _problems(overrides: dict[str, object]) -> dict[str, str]:
    with pytest.raises(SettingsError) as error:
        build_ve(overrides)
    return {p.key: p.allowed for p in error.value.problems}


def test_public_endpoint_is_refused_because_it_cannot_be_limited() -> None:
    problems = _problems({"apiEndpointPublic": True})
    assert list(problems) == ["gpuinfra:apiEndpointPublic"]
    assert "AccessSourceIpsv4" in problems["gpuinfra:apiEndpointPublic"]
    assert "whole internet" in problems["gpuinfra:apiEndpointPublic"]


def test_zones_are_required_and_checked() -> None:
    assert "required on Volcano Engine" in _problems({"vkeZones": None})["gpuinfra:vkeZones"]
    assert (
        "must be a zone of cn-beijing"
        in _problems({"vkeZones": ["cn-shanghai-a", "cn-beijing-b"]})["gpuinfra:vkeZones"]
    )
    assert (
        "must not repeat"
        in _problems({"vkeZones": ["cn-beijing-a", "cn-beijing-a"]})["gpuinfra:vkeZones"]
    )
    assert (
        "one zone per private subnet: 2"
        in _problems({"vkeZones": ["cn-beijing-a"]})["gpuinfra:vkeZones"]
    )


def test_workstation_is_refused_with_a_way_out() -> None:
    problems = _problems({"workstationEnabled": True})
    assert "not built for Volcano Engine" in problems["gpuinfra:workstationEnabled"]


def test_keys_vke_does_not_use_are_refused() -> None:
    problems = _problems(
        {"gpuPoolSpotMaxPrice": "3.0", "publicSubnetCidrs": ["10.0.224.0/22", "10.0.228.0/22"]}
    )
    assert "SpotAsPriceGo" in problems["gpuinfra:gpuPoolSpotMaxPrice"]
    assert "not used on Volcano Engine" in problems["gpuinfra:publicSubnetCidrs"]


def test_pod_and_service_networks_must_not_overlap() -> None:
    problems = _problems({"vkePodCidr": "10.0.0.0/16", "vkeServiceCidr": "172.20.0.0/20"})
    assert "must not overlap vpcCidr" in problems["gpuinfra:vkePodCidr"]
    assert "must not overlap vkePodCidr" not in problems.get("gpuinfra:vkeServiceCidr", "")
    problems = _problems({"vkeServiceCidr": "172.20.0.0/20"})
    assert "must not overlap vkePodCidr" in problems["gpuinfra:vkeServiceCidr"]


def test_region_and_gpu_type_come_from_the_volcengine_catalog() -> None:
    problems = _problems({"volcenginecc:region": "beijing", "gpuPoolInstanceType": "g5.xlarge"})
    assert "Volcano Engine region" in problems["volcenginecc:region"]
    assert "it is a aws type" in problems["gpuinfra:gpuPoolInstanceType"]


def test_bucket_names_follow_tos() -> None:
    assert "3 to 63" in _problems({"bucketName": "ab"})["gpuinfra:bucketName"]
    assert "lowercase" in _problems({"bucketName": "My_Bucket"})["gpuinfra:bucketName"]
