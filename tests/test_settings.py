"""Every validation rule: one bad value each, and several at once, all reported together."""

from __future__ import annotations

import pytest

from components.settings import SettingsError, parse_settings

REGION = {"aws:region": "us-east-1"}
GOOD = {"gpuPoolInstanceType": "g5.xlarge", "gpuLayer": "separate"}
"""A valid AWS config: a private endpoint (the default), so the GPU layer is separate."""


def problems(raw: dict[str, str], provider: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(
            {**GOOD, **raw}, stack="dev", provider_config=REGION if provider is None else provider
        )
    return [str(p) for p in caught.value.problems]


def only_problem(raw: dict[str, str]) -> str:
    found = problems(raw)
    assert len(found) == 1, found
    return found[0]


def test_defaults_with_a_gpu_type_are_valid() -> None:
    settings = parse_settings(GOOD, stack="dev", provider_config=REGION)
    assert settings.cloud == "aws"
    assert settings.name_prefix == "gpuinfra-dev"
    assert settings.gpu_pools[0].instance.gpu_model == "A10G"
    assert settings.gpu_pools[0].size.min_nodes == 0
    assert len(settings.network.private_subnet_cidrs) == 2
    assert settings.storage.protect is True


def test_unknown_cloud() -> None:
    message = only_problem({"cloud": "gcp"})
    assert message.startswith('gpuinfra:cloud = "gcp"') and "allowed: aws" in message


def test_unknown_gpu_instance_type_lists_known_ones() -> None:
    message = only_problem({"gpuPoolInstanceType": "g9.mega"})
    assert message.startswith('gpuinfra:gpuPoolInstanceType = "g9.mega"')
    assert "g5.xlarge" in message and "p5.48xlarge" in message


def test_gpu_type_of_another_cloud_says_which() -> None:
    from components import catalog

    alibaba_type = catalog.instance_types("alicloud")[0].instance_type
    message = only_problem({"gpuPoolInstanceType": alibaba_type})
    assert "not a GPU instance type the catalog knows on aws" in message
    assert "alicloud" in message


def test_gpu_model_and_count_pick_the_instance_type() -> None:
    raw = {"gpuPoolGpuModel": "A100-80GB", "gpuPoolGpuCount": "8", "gpuLayer": "separate"}
    settings = parse_settings(raw, stack="dev", provider_config=REGION)
    assert settings.gpu_pools[0].instance.instance_type == "p4de.24xlarge"


def test_gpu_model_with_impossible_count_names_possible_counts() -> None:
    message = problems(
        {"gpuPoolInstanceType": "", "gpuPoolGpuModel": "H100", "gpuPoolGpuCount": "3"}
    )
    assert len(message) == 1 and "gpuinfra:gpuPoolGpuModel" in message[0] and "8 GPUs" in message[0]


def test_gpu_model_that_contradicts_the_instance_type() -> None:
    message = only_problem({"gpuPoolGpuModel": "H100"})
    assert "g5.xlarge has A10G GPUs" in message


def test_no_gpu_type_at_all() -> None:
    found = problems({"gpuPoolInstanceType": ""})
    assert len(found) == 1 and found[0].startswith("gpuinfra:gpuPoolInstanceType = (not set)")


@pytest.mark.parametrize(
    ("raw", "key", "fragment"),
    [
        (
            {"gpuPoolMinNodes": "2", "gpuPoolDesiredNodes": "1"},
            "gpuPoolMinNodes",
            "must not exceed",
        ),
        (
            {"gpuPoolDesiredNodes": "3", "gpuPoolMaxNodes": "2"},
            "gpuPoolDesiredNodes",
            "must not exceed",
        ),
        ({"gpuPoolMinNodes": "-1"}, "gpuPoolMinNodes", "0 or more"),
        (
            {"systemPoolMinNodes": "0", "systemPoolDesiredNodes": "0"},
            "systemPoolMinNodes",
            "1 or more",
        ),
        ({"gpuPoolMaxNodes": "0"}, "gpuPoolMaxNodes", "1 or more"),
        ({"gpuPoolMaxNodes": "two"}, "gpuPoolMaxNodes", "whole number"),
    ],
)
def test_pool_sizes(raw: dict[str, str], key: str, fragment: str) -> None:
    message = only_problem(raw)
    assert message.startswith(f"gpuinfra:{key} =") and fragment in message


@pytest.mark.parametrize(
    ("raw", "key", "fragment"),
    [
        ({"vpcCidr": "10.0.0.0/33"}, "vpcCidr", "IPv4 CIDR"),
        ({"vpcCidr": "10.0.0.1/16"}, "vpcCidr", "did you mean 10.0.0.0/16"),
        ({"vpcCidr": "10.0.0.0/8"}, "vpcCidr", "/16 and /20"),
        (
            {"privateSubnetCidrs": '["10.0.0.0/19", "10.9.0.0/19"]'},
            "privateSubnetCidrs",
            "inside vpcCidr",
        ),
        (
            {"privateSubnetCidrs": '["10.0.0.0/19", "10.0.16.0/20"]'},
            "privateSubnetCidrs",
            "overlaps 10.0.0.0/19",
        ),
        ({"publicSubnetCidrs": '["10.0.224.0/21"]'}, "publicSubnetCidrs", "one subnet per zone"),
        ({"publicSubnetCidrs": '["bogus", "10.0.232.0/21"]'}, "publicSubnetCidrs", "IPv4 CIDR"),
        ({"availabilityZoneCount": "1"}, "availabilityZoneCount", "2, 3 or 4"),
        ({"natGateways": "none"}, "natGateways", "allowed: single, perAz"),
    ],
)
def test_network(raw: dict[str, str], key: str, fragment: str) -> None:
    message = only_problem(raw)
    assert message.startswith(f"gpuinfra:{key} =") and fragment in message


def test_subnets_overlapping_across_public_and_private() -> None:
    message = only_problem(
        {
            "publicSubnetCidrs": '["10.0.0.0/24", "10.0.1.0/24"]',
            "privateSubnetCidrs": '["10.0.1.0/24", "10.0.32.0/19"]',
        }
    )
    assert (
        "privateSubnetCidrs" in message and "overlaps 10.0.1.0/24 in publicSubnetCidrs" in message
    )


@pytest.mark.parametrize("world", ["0.0.0.0/0", "::/0"])
def test_world_open_admin_cidr_is_refused(world: str) -> None:
    message = only_problem({"adminCidrs": f'["{world}"]'})
    assert message.startswith(f'gpuinfra:adminCidrs = "{world}"')
    assert "allowPublicAdminAccess" in message


def test_world_open_admin_cidr_with_explicit_opt_in() -> None:
    raw = {**GOOD, "adminCidrs": '["0.0.0.0/0"]', "allowPublicAdminAccess": "true"}
    settings = parse_settings(raw, stack="dev", provider_config=REGION)
    assert settings.access.admin_cidrs == ("0.0.0.0/0",)


def test_public_endpoint_needs_admin_cidrs() -> None:
    message = only_problem({"apiEndpointPublic": "true"})
    assert message.startswith("gpuinfra:apiEndpointPublic = true") and "adminCidrs" in message


def test_public_endpoint_needs_an_ipv4_admin_cidr() -> None:
    message = only_problem({"apiEndpointPublic": "true", "adminCidrs": '["2001:db8::/48"]'})
    assert "apiEndpointPublic" in message and "IPv4" in message


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("My_Bucket", "lowercase"),
        ("ab", "3 to 63"),
        ("a" * 64, "3 to 63"),
        ("bad..dots", "adjacent dots"),
        ("192.168.5.4", "IP address"),
        ("xn--bucket", "reserved"),
        ("bucket-s3alias", "reserved"),
        ("-leading", "lowercase"),
    ],
)
def test_s3_bucket_names(name: str, fragment: str) -> None:
    message = only_problem({"bucketName": name})
    assert message.startswith(f'gpuinfra:bucketName = "{name}"') and fragment in message


@pytest.mark.parametrize("version", ["1.30", "1.29"])
def test_kubernetes_version_below_1_31(version: str) -> None:
    message = only_problem({"kubernetesVersion": version})
    assert "1.31 or newer" in message and "podFailurePolicy" in message


def test_kubernetes_version_format() -> None:
    assert "minor version" in only_problem({"kubernetesVersion": "v1.33.2"})


def test_unknown_key_suggests_the_right_one() -> None:
    message = only_problem({"gpuPoolMaxNode": "3"})
    assert "unknown setting" in message and "gpuinfra:gpuPoolMaxNodes" in message


def test_missing_region() -> None:
    found = problems({}, provider={})
    assert found == [
        "aws:region = (not set): required: set it with `pulumi config set aws:region us-east-1`"
    ]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"protectBucket": "yes"}, "true or false"),
        ({"adminCidrs": "10.0.0.0/8"}, "list of strings"),
        ({"clusterLogTypes": '["api", "kubelet"]'}, "allowed: api"),
        ({"clusterLogRetentionDays": "31"}, "CloudWatch retention"),
        ({"gpuPoolDiskSizeGb": "10"}, "between 50 and 16384"),
        ({"noncurrentVersionExpirationDays": "0"}, "between 1 and 3650"),
        ({"trainingNamespace": "Training"}, "DNS label"),
        ({"namePrefix": "9lives"}, "starting with a letter"),
        ({"gpuPoolCapacityType": "preemptible"}, "allowed: spot, onDemand"),
        ({"systemPoolInstanceType": "g5.xlarge"}, "GPU instance type"),
    ],
)
def test_other_values(raw: dict[str, str], fragment: str) -> None:
    assert fragment in only_problem(raw)


def test_every_mistake_is_reported_at_once() -> None:
    raw = {
        "cloud": "gcp",
        "gpuPoolInstanceType": "g9.mega",
        "gpuPoolMinNodes": "3",
        "gpuPoolDesiredNodes": "2",
        "adminCidrs": '["0.0.0.0/0"]',
        "vpcCidr": "10.0.0.0/12",
        "bucketName": "Bad_Name",
        "kubernetesVersion": "1.28",
        "gpuPoolMaxNode": "4",
    }
    with pytest.raises(SettingsError) as caught:
        parse_settings(raw, stack="dev", provider_config=REGION)
    keys = [p.key for p in caught.value.problems]
    for key in (
        "gpuinfra:cloud",
        "gpuinfra:gpuPoolInstanceType",
        "gpuinfra:gpuPoolMinNodes",
        "gpuinfra:adminCidrs",
        "gpuinfra:vpcCidr",
        "gpuinfra:bucketName",
        "gpuinfra:kubernetesVersion",
        "gpuinfra:gpuPoolMaxNode",
    ):
        assert key in keys
    text = str(caught.value)
    assert text.startswith(f"invalid settings for stack 'dev' ({len(keys)} problems):")
    assert text.count("\n  - ") == len(keys)


def test_settings_error_is_a_clean_pulumi_error() -> None:
    import pulumi

    with pytest.raises(pulumi.RunError):
        parse_settings({"cloud": "gcp"}, stack="dev", provider_config=REGION)
