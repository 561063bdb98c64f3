"""The Tencent stack as a whole: what the GPU layer installs on TKE, what the README promises,
and what the mocks answer in the provider's place."""

from __future__ import annotations

import re

from gpuinfra.engine import Plan
from gpuinfra.mocks import call_result, resource_outputs
from tests.conftest import ROOT
from tests.tencentcloud.conftest import T, build_tc

DEVICE_PLUGIN = "gpuinfra:kubernetes:NvidiaDevicePlugin"


def test_no_second_device_plugin_on_tke(tc_plan: Plan) -> None:
    """Finding 8: TKE advertises nvidia.com/gpu on its GPU nodes itself; ours would register
    the same resource again."""
    assert tc_plan.of_type(DEVICE_PLUGIN) == []
    always = build_tc({"devicePlugin": "always"})
    assert len(always.of_type(DEVICE_PLUGIN)) == 1


def _tencent_section() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"^## Tencent Cloud \(TKE\)\n(.*?)^## ", text, re.S | re.M)
    assert match, "README has no Tencent Cloud (TKE) section"
    return match.group(1)


def test_readme_lists_the_account_prerequisites() -> None:
    """Findings 10 and 12, and the issue's README ask: service roles, APPID, quotas, and from
    where `pulumi up` runs."""
    section = _tencent_section()
    for needed in (
        "QcloudKMSAccessForCVMRole",  # encrypted data disks on scale-out
        "TKE_QCSRole",
        "APPID",
        "10 digits",
        "quota",
        "adminCidrs",
        "gpuPoolSpotMaxPrice",
        "tkeZones",
    ):
        assert needed in section, needed
    assert "from a network in `adminCidrs`" in section
    # Finding 9: no claim that pod scratch space is encrypted.
    assert "emptyDir" in section and "system disk" in section


def test_mocks_answer_as_the_provider_does() -> None:
    region = "ap-guangzhou"
    _, key = resource_outputs(T + "Kms/key:Key", "k", {"alias": "a"}, custom=True, region=region)
    assert key["keyState"] == "Disabled"  # created disabled without is_enabled
    _, pair = resource_outputs(
        T + "Key/pair:Pair", "p", {"keyName": "n"}, custom=True, region=region
    )
    assert pair["id"].startswith("skey-") and pair["privateKey"]
    _, imported = resource_outputs(
        T + "Key/pair:Pair", "p", {"keyName": "n", "publicKey": "ssh-ed25519 AAAA"},
        custom=True, region=region,
    )  # fmt: skip
    assert "privateKey" not in imported
    rule_set_id, _ = resource_outputs(
        T + "Security/groupRuleSet:GroupRuleSet", "r", {"securityGroupId": "sg-12345678"},
        custom=True, region=region,
    )  # fmt: skip
    assert rule_set_id == "sg-12345678"
    filters = [
        {"name": "instance-family", "values": ["GN7"]},
        {"name": "instance-charge-type", "values": ["SPOTPAID"]},
    ]
    token = T + "Instance/getTypes:getTypes"
    every = call_result(token, {"filters": filters}, region=region)["instanceTypes"]
    selling = call_result(token, {"filters": filters, "excludeSoldOut": True}, region=region)
    zones = {t["availabilityZone"] for t in every}
    assert {t["availabilityZone"] for t in selling["instanceTypes"]} < zones
    assert {t["status"] for t in every} == {"SELL", "SOLD_OUT"}
