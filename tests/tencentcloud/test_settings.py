"""Tencent-specific settings: each bad value is refused before any resource, naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.settings import Settings, SettingsError, parse_settings
from components.settings.clouds.tencentcloud import cos_bucket_name_problem
from tests.conftest import ROOT, flat_if_pool_keys, stack_config
from tests.tencentcloud.conftest import STACK

REGION_KEY = "tencentcloud:region"


def _parse(overrides: dict[str, object]) -> Settings:
    """The dev stack; with a flat per-pool key overridden, its single-pool form."""
    config = stack_config(STACK, flat_if_pool_keys(STACK, overrides))
    raw = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpuinfra:")}
    provider = {k: v for k, v in config.items() if k == REGION_KEY}
    return parse_settings(raw, stack=STACK, provider_config=provider)


def _problem_keys(overrides: dict[str, object]) -> list[str]:
    with pytest.raises(SettingsError) as error:
        _parse(overrides)
    return [p.key for p in error.value.problems]


def test_shipped_stack_is_valid() -> None:
    settings = _parse({})
    assert settings.tencentcloud is not None
    assert settings.tencentcloud.bucket_name == "gpuinfra-tencentcloud-dev-data-1250000000"
    assert settings.system_pool.instance_type == "S5.LARGE8"


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"bucketName": "My_Bucket"}, "gpuinfra:bucketName"),
        ({"bucketName": "ml-data"}, "gpuinfra:bucketName"),
        ({"bucketName": "ml-data-1300000000"}, "gpuinfra:bucketName"),
        ({"cosAppId": None}, "gpuinfra:cosAppId"),
        ({"cosAppId": "abc"}, "gpuinfra:cosAppId"),
        # Finding 12: the provider's bucket validator wants exactly 10 digits.
        ({"cosAppId": "125000000"}, "gpuinfra:cosAppId"),
        ({"cosAppId": "12500000001"}, "gpuinfra:cosAppId"),
        ({"gpuPoolSpotMaxPrice": None}, "gpuinfra:gpuPoolSpotMaxPrice"),
        ({"tkeZones": ["ap-shanghai-2", "ap-guangzhou-3"]}, "gpuinfra:tkeZones"),
        ({"tkeZones": ["ap-guangzhou-3"]}, "gpuinfra:tkeZones"),
        ({"tkeZones": ["ap-guangzhou-3", "ap-guangzhou-3"]}, "gpuinfra:tkeZones"),
        ({"tkeZones": ["guangzhou-3", "ap-guangzhou-4"]}, "gpuinfra:tkeZones"),
        (
            {"apiEndpointPublic": True, "adminCidrs": ["2001:db8::/48"]},
            "gpuinfra:apiEndpointPublic",
        ),
        ({"gpuCudaVersion": "11.4.3"}, "gpuinfra:gpuCudaVersion"),
        ({"gpuDriverVersion": "999.1.1"}, "gpuinfra:gpuDriverVersion"),
        ({"gpuCudnnVersion": "8.2.4"}, "gpuinfra:gpuCudnnVersion"),
        (
            {"gpuDriverVersion": None, "gpuCudnnVersion": None},
            "gpuinfra:gpuCudaVersion",
        ),
        ({"gpuPoolInstanceType": "GN99.HUGE"}, "gpuinfra:gpuPoolInstanceType"),
        ({"gpuPoolInstanceType": "g5.xlarge"}, "gpuinfra:gpuPoolInstanceType"),
        ({"gpuPoolSpotMaxPrice": "cheap"}, "gpuinfra:gpuPoolSpotMaxPrice"),
        (
            {"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": "2"},
            "gpuinfra:gpuPoolSpotMaxPrice",
        ),
        ({"kubernetesVersion": "1.33"}, "gpuinfra:kubernetesVersion"),
        ({"kubernetesVersion": None}, "gpuinfra:kubernetesVersion"),
        ({"tkePodCidr": "10.0.0.0/16"}, "gpuinfra:tkePodCidr"),
        ({"tkePodCidr": "8.8.0.0/16"}, "gpuinfra:tkePodCidr"),
        ({"tkeServiceCidr": "172.20.1.0/24"}, "gpuinfra:tkeServiceCidr"),
        ({"publicSubnetCidrs": ["10.0.224.0/21", "10.0.232.0/21"]}, "gpuinfra:publicSubnetCidrs"),
        ({"clusterLogRetentionDays": 90}, "gpuinfra:clusterLogRetentionDays"),
        ({REGION_KEY: "guangzhou"}, REGION_KEY),
    ],
)
def test_bad_tencent_setting_names_its_key(overrides: dict[str, object], key: str) -> None:
    assert key in _problem_keys(overrides)


def test_zones_and_spot_price_when_valid() -> None:
    settings = _parse({"tkeZones": ["ap-guangzhou-3", "ap-guangzhou-6"]})
    assert settings.tencentcloud is not None
    assert settings.tencentcloud.zones == ("ap-guangzhou-3", "ap-guangzhou-6")
    small, large = settings.gpu_pools
    assert (small.spot_max_price, large.spot_max_price) == ("3.00", None)  # large: on-demand
    on_demand = _parse({"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": None})
    assert on_demand.gpu_pools[0].spot_max_price is None


def test_cos_name_rule() -> None:
    assert cos_bucket_name_problem("ml-data-1250000000") is None
    for bad in ("ml-data", "-ml-1250000000", "ml--1250000000x", "ML-1250000000", "ml_1-125"):
        assert cos_bucket_name_problem(bad), bad


def test_every_problem_reported_at_once() -> None:
    keys = _problem_keys(
        {"bucketName": "bad", "gpuDriverVersion": "1.0", "gpuPoolInstanceType": "GN99.HUGE"}
    )
    assert {
        "gpuinfra:bucketName",
        "gpuinfra:gpuDriverVersion",
        "gpuinfra:gpuPoolInstanceType",
    } <= set(keys)


def test_preview_exits_2_naming_the_key(tmp_path: Path) -> None:
    """As a user runs it: `gpuinfra preview` on a stack with a bad COS name."""
    import shutil
    import subprocess
    import sys

    import yaml

    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    config = yaml.safe_load((ROOT / f"Pulumi.{STACK}.yaml").read_text())["config"]
    config["gpuinfra:bucketName"] = "Not_A_Cos_Name"
    config["gpuinfra:gpuCudaVersion"] = "11.4.3"
    config["gpuinfra:cosAppId"] = "125000000"  # 9 digits
    del config["gpuinfra:gpuPools"][0]["spotMaxPrice"]
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": config}))
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", "bad", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "gpuinfra:bucketName" in result.stderr and "gpuinfra:gpuCudaVersion" in result.stderr
    assert 'gpuinfra:cosAppId = "125000000"' in result.stderr and "10 digits" in result.stderr
    assert "gpuinfra:gpuPools[0].spotMaxPrice = (not set): required for a spot" in result.stderr
    assert "Traceback" not in result.stderr
