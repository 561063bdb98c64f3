"""Alibaba-specific settings: each mistake names its key, before any resource exists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.settings import SettingsError, parse_settings
from tests.alicloud.conftest import STACK
from tests.conftest import ROOT

BASE = {
    "cloud": "alicloud",
    "gpuPoolInstanceType": "ecs.gn7i-c8g1.2xlarge",
    "kubernetesVersion": "1.33",
    "gpuLayer": "separate",  # a private endpoint: the GPU layer is another stack's
}
REGION = {"alicloud:region": "cn-hangzhou"}


def _parse(changes: dict[str, str], region: dict[str, str] = REGION):  # type: ignore[no-untyped-def]
    raw = {**BASE, **changes}
    raw = {k: v for k, v in raw.items() if v is not None}
    return parse_settings(raw, stack=STACK, provider_config=region)


def test_defaults_parse() -> None:
    settings = _parse({})
    assert settings.alicloud is not None
    [pool] = settings.gpu_pools
    assert (pool.name, pool.flat) == ("gpu", True)  # the one pool of the flat keys
    assert pool.spot_strategy == "SpotAsPriceGo"
    assert pool.on_demand_fallback is True
    assert settings.system_pool.instance_type == "ecs.g7.xlarge"
    assert settings.alicloud.driver_version is None
    assert settings.alicloud.ack_version == "1.33.3-aliyun.1"  # pinned for 1.33


def test_ack_version_is_pinned_per_minor_or_given() -> None:
    """Finding 4: the full ACK version comes from config or a pinned table, never a lookup."""
    assert _parse({"kubernetesVersion": "1.32"}).alicloud.ack_version == "1.32.7-aliyun.1"  # type: ignore[union-attr]
    given = _parse({"kubernetesVersion": "1.34", "ackVersion": "1.34.1-aliyun.1"})
    assert given.alicloud is not None and given.alicloud.ack_version == "1.34.1-aliyun.1"
    with pytest.raises(SettingsError, match=r"no ACK version is pinned for Kubernetes 1\.35"):
        _parse({"kubernetesVersion": None})  # the generic default, 1.35, has no ACK pin


@pytest.mark.parametrize(
    ("changes", "key", "fragment"),
    [
        ({"bucketName": "my.bucket"}, "gpuinfra:bucketName", "Alibaba Cloud bucket naming"),
        ({"bucketName": "ab"}, "gpuinfra:bucketName", "3 to 63"),
        ({"bucketName": "Team_Data"}, "gpuinfra:bucketName", "no dots or underscores"),
        ({"gpuPoolInstanceType": "g5.xlarge"}, "gpuinfra:gpuPoolInstanceType", "it is a aws type"),
        ({"gpuPoolInstanceType": "ecs.gn99.huge"}, "gpuinfra:gpuPoolInstanceType", "alicloud"),
        ({"gpuPoolSpotMaxPrice": "2.5"}, "gpuinfra:gpuPoolSpotMaxPrice", "SpotWithPriceLimit"),
        (
            {"gpuPoolSpotStrategy": "SpotWithPriceLimit"},
            "gpuinfra:gpuPoolSpotMaxPrice",
            "required",
        ),
        (
            {"gpuPoolSpotStrategy": "SpotWithPriceLimit", "gpuPoolSpotMaxPrice": "cheap"},
            "gpuinfra:gpuPoolSpotMaxPrice",
            "positive decimal",
        ),
        (
            {"gpuPoolCapacityType": "onDemand", "gpuPoolSpotMaxPrice": "2"},
            "gpuinfra:gpuPoolSpotMaxPrice",
            "onDemand",
        ),
        ({"gpuPoolSpotStrategy": "Cheapest"}, "gpuinfra:gpuPoolSpotStrategy", "SpotAsPriceGo"),
        (
            {"gpuPoolExtraInstanceTypes": '["ecs.gn7i-c32g1.16xlarge"]'},
            "gpuinfra:gpuPoolExtraInstanceTypes",
            "2x A10",
        ),
        (
            {"gpuPoolExtraInstanceTypes": '["ecs.gn6i-c4g1.xlarge"]'},
            "gpuinfra:gpuPoolExtraInstanceTypes",
            "1x T4",
        ),
        (
            {"gpuPoolExtraInstanceTypes": '["g5.xlarge"]'},
            "gpuinfra:gpuPoolExtraInstanceTypes",
            "it is a aws type",
        ),
        ({"gpuDriverVersion": "latest"}, "gpuinfra:gpuDriverVersion", "550.144.03"),
        ({"natGateways": "perAz"}, "gpuinfra:natGateways", "only single"),
        ({"apiEndpointPublic": "true"}, "gpuinfra:apiEndpointPublic", "cannot limit"),
        ({"apiEndpointPublic": "true"}, "gpuinfra:apiEndpointPublic", "access control list"),
        ({"ackVersion": "1.33"}, "gpuinfra:ackVersion", "full ACK version"),
        ({"ackVersion": "1.32.7-aliyun.1"}, "gpuinfra:ackVersion", "kubernetesVersion 1.33"),
        ({"kubernetesVersion": "1.34"}, "gpuinfra:kubernetesVersion", "set gpuinfra:ackVersion"),
        (
            {"gpuPoolScaleDownDelayMinutes": "61"},
            "gpuinfra:gpuPoolScaleDownDelayMinutes",
            "between 1 and 60 on alicloud",
        ),
        ({"vpcCidr": "172.20.0.0/16"}, "gpuinfra:vpcCidr", "172.20.0.0/16"),
        ({"gpuPoolDiskSizeGb": "4096"}, "gpuinfra:gpuPoolDiskSizeGb", "2048"),
        ({"clusterLogRetentionDays": "4000"}, "gpuinfra:clusterLogRetentionDays", "Log Service"),
        (
            {"systemPoolInstanceType": "ecs.gn7i-c8g1.2xlarge"},
            "gpuinfra:systemPoolInstanceType",
            "GPU",
        ),
    ],
)
def test_bad_alibaba_setting_names_the_key(changes: dict, key: str, fragment: str) -> None:
    with pytest.raises(SettingsError) as error:
        _parse(changes)
    named = [p for p in error.value.problems if p.key == key]
    assert named, str(error.value)
    assert any(fragment in str(p) for p in named), str(error.value)


def test_bad_region_names_the_alicloud_key() -> None:
    with pytest.raises(SettingsError, match='alicloud:region = "us-east-1a"'):
        _parse({}, region={"alicloud:region": "us-east-1a"})
    with pytest.raises(SettingsError, match="alicloud:region = \\(not set\\)"):
        _parse({}, region={})


def test_aws_only_rules_do_not_apply_on_alibaba() -> None:
    # 45 is no CloudWatch retention value, and ACK never needs an adminCidr for the endpoint.
    settings = _parse(
        {
            "clusterLogRetentionDays": "45",
            "apiEndpointPublic": "true",
            "allowPublicAdminAccess": "true",
            "adminCidrs": "[]",
        }
    )
    assert settings.cluster.log_retention_days == 45
    assert settings.access.api_endpoint_public is True


def test_valid_price_limit_and_extra_types() -> None:
    settings = _parse(
        {
            "gpuPoolSpotStrategy": "SpotWithPriceLimit",
            "gpuPoolSpotMaxPrice": "3.25",
            "gpuPoolExtraInstanceTypes": '["ecs.gn7i-c16g1.4xlarge"]',
        }
    )
    [pool] = settings.gpu_pools
    assert pool.spot_max_price == "3.25"
    assert pool.extra_instance_types == ("ecs.gn7i-c16g1.4xlarge",)


def test_cli_exits_2_naming_every_alibaba_key(tmp_path: Path) -> None:
    """One run with every Alibaba mistake: exit 2, each key on stderr, no traceback."""
    import shutil

    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("components", "stacks"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    config = yaml.safe_load((ROOT / f"Pulumi.{STACK}.yaml").read_text())["config"]
    # A stack file of the flat keys, one pool (the flat pool keys below are its own).
    del config["gpuinfra:gpuPools"]
    config["gpuinfra:gpuPoolInstanceType"] = "ecs.gn7i-c8g1.2xlarge"
    bad = {
        "gpuinfra:bucketName": "my.bucket",
        "gpuinfra:gpuPoolSpotMaxPrice": "2.5",
        "gpuinfra:gpuPoolExtraInstanceTypes": ["ecs.gn6i-c4g1.xlarge"],
        "gpuinfra:gpuDriverVersion": "latest",
        "gpuinfra:natGateways": "perAz",
        "gpuinfra:gpuPoolScaleDownDelayMinutes": 61,
        "gpuinfra:ackVersion": "1.33",
    }
    config.update(bad)
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": config}))
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", "bad", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout.strip() == ""
    assert "Traceback" not in result.stderr
    for key in bad:
        assert key in result.stderr, key
    assert "a setting of one GPU pool" not in result.stderr
