# ruff: noqa: E501  (literal plans and expected strings read best on one line)
"""Plan diff: no change against itself; updates, replacements and blocked replacements from
the provider's ForceNew fields; secrets by digest; cost deltas that never price unknown as $0."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

from gpuinfra.diff import BLOCKED, REPLACE, UPDATE, diff_plans, flatten, has_changes
from gpuinfra.render import plan_json
from gpuinfra.report import code, focus, markdown, text_diff
from tests.conftest import build, flat_pool

TODAY = dt.date(2026, 11, 30)


def _changed(d: dict[str, Any], name_part: str) -> dict[str, Any]:
    [found] = [c for c in d["changed"] if name_part in c["name"]]
    return found


def test_flatten_paths() -> None:
    assert dict(flatten({"a": {"b": [1, {"c": 2}]}})) == {"a.b[0]": 1, "a.b[1].c": 2}


def test_plan_against_itself_has_no_change() -> None:
    plan = plan_json(build("dev"), "aws")
    d = diff_plans(plan, copy.deepcopy(plan), TODAY)
    assert not has_changes(d)
    assert set(d["cost"]["delta"].values()) == {0}


def test_larger_gpu_pool_is_an_update() -> None:
    base = plan_json(build("dev", flat_pool("dev")), "aws")
    head = plan_json(build("dev", flat_pool("dev", {"gpuPoolMaxNodes": 4})), "aws")
    d = diff_plans(base, head, TODAY)
    assert not d["added"] and not d["removed"]
    group = _changed(d, "-gpu-nodes")
    assert {"path": "scalingConfig.maxSize", "old": 2, "new": 4} in group["changes"]
    assert group["action"] == UPDATE
    assert d["cost"]["delta"]["hourly_max"] > 0 and d["cost"]["delta"]["hourly_idle"] == 0


def test_node_group_instance_type_and_capacity_replace() -> None:
    """Issue #25: ForceNew fields showed as a plain change."""
    base = plan_json(build("dev", flat_pool("dev")), "aws")
    head = plan_json(build("dev", flat_pool("dev", {"gpuPoolInstanceType": "g6.xlarge", "gpuPoolGpuModel": "L4", "gpuPoolCapacityType": "onDemand"})), "aws")  # fmt: skip
    group = _changed(diff_plans(base, head, TODAY), "-gpu-nodes")
    assert group["action"] == REPLACE
    assert {"capacityType", "instanceTypes"} <= set(group["replaceBecause"])
    assert "node_group.go" in group["replaceSource"]


def test_renaming_the_protected_bucket_is_blocked() -> None:
    """Issue #25: a new bucket name replaces the bucket, which Pulumi refuses while protected."""
    base = plan_json(build("dev", {"bucketName": "gpuinfra-dev-data-one"}), "aws")
    head = plan_json(build("dev", {"bucketName": "gpuinfra-dev-data-two"}), "aws")
    d = diff_plans(base, head, TODAY)
    bucket = next(c for c in d["changed"] if c["type"] == "aws:s3/bucket:Bucket")
    assert bucket["action"] == BLOCKED and bucket["replaceBecause"] == ["bucket"]
    assert d["blocked"] == 1
    assert "BLOCKED" in text_diff(d)


def test_removing_a_protected_resource_is_blocked() -> None:
    base = plan_json(build("dev"), "aws")
    head = copy.deepcopy(base)
    head["resources"] = [r for r in head["resources"] if r["type"] != "aws:s3/bucket:Bucket"]
    d = diff_plans(base, head, TODAY)
    [removed] = d["removed"]
    assert removed["blocked"] is True and d["blocked"] == 1


def test_changed_secret_shows_without_its_value() -> None:
    """Issue #25: secrets were compared after masking, so a change never showed."""
    resource = {"urn": "u", "type": "aws:ec2/instance:Instance", "name": "ws", "protect": False}
    old = {"resources": [{**resource, "inputs": {"userData": "[secret]"}, "secretDigests": {"userData": "hmac-sha256:aa"}}]}  # fmt: skip
    new = {"resources": [{**resource, "inputs": {"userData": "[secret]"}, "secretDigests": {"userData": "hmac-sha256:bb"}}]}  # fmt: skip
    d = diff_plans(old, new, TODAY)
    [change] = d["changed"][0]["changes"]
    assert change == {"path": "userData", "old": "[secret]", "new": "[secret]", "secret": True}
    text = text_diff(d)
    assert "userData: [secret] changed" in text and "hmac" not in text
    assert not has_changes(diff_plans(old, copy.deepcopy(old), TODAY))


def test_plan_json_digests_secret_inputs_with_a_key() -> None:
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG1ypl1Xx3ZBKmM6qkvHoe1YBmQ8mHfDsvDmOiSx6pjK a@b"
    config = {"workstationEnabled": True, "workstationSshPublicKey": key}
    one = plan_json(build("dev", config), "aws")
    two = plan_json(build("dev", {**config, "workstationRootDiskGb": 400}), "aws")
    secret = [r for r in one["resources"] if r.get("secretDigests")]
    assert secret, "the workstation's user data is a secret input"
    for r in secret:
        for k, v in r["secretDigests"].items():
            assert r["inputs"][k] == "[secret]" and v.startswith("hmac-sha256:")
    same = diff_plans(one, copy.deepcopy(one), TODAY)
    assert not has_changes(same)
    assert two  # a second plan built on this machine digests with the same key


def test_long_policy_change_shows_the_changed_part() -> None:
    """Issue #25: values were cut at 77 characters, so two policies looked identical."""
    doc = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "arn:aws:s3:::bucket/*"}]}'  # fmt: skip
    resource = {"urn": "u", "type": "aws:iam/rolePolicy:RolePolicy", "name": "p", "protect": False}
    old = {"resources": [{**resource, "inputs": {"policy": doc}}]}
    new = {"resources": [{**resource, "inputs": {"policy": doc.replace("PutObject", "DeleteObject")}}]}  # fmt: skip
    [change] = diff_plans(old, new, TODAY)["changed"][0]["changes"]
    assert change == {"path": "policy{Statement[0].Action[1]}", "old": "s3:PutObject", "new": "s3:DeleteObject"}  # fmt: skip


def test_focus_shows_the_difference_in_long_and_multiline_values() -> None:
    a = "x" * 200 + "OLD" + "y" * 200
    b = "x" * 200 + "NEW" + "y" * 200
    fa, fb = focus(a, b)
    assert "OLD" in fa and "NEW" in fb and len(fa) < 90 and fa.startswith("…")
    fa, fb = focus("line one\nline two\nkeep", "line one\nline 2\nkeep")
    assert fa == "line 2: line two" and fb == "line 2: line 2"


def test_code_spans_survive_backticks_and_pipes() -> None:
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert code("a|b") == "`a|b`"  # in a list item a pipe needs no escape


def test_markdown_diff_escapes_and_marks_actions() -> None:
    resource = {"urn": "u", "type": "aws:iam/role:Role", "name": "r", "protect": False}
    old = {"stack": "dev", "cloud": "aws", "resources": [{**resource, "inputs": {"description": "a|b"}}]}  # fmt: skip
    new = {"stack": "dev", "cloud": "aws", "resources": [{**resource, "inputs": {"description": "a`c"}}]}  # fmt: skip
    from gpuinfra.cost import estimate
    from gpuinfra.planview import from_json

    d = diff_plans(old, new, TODAY)
    md = markdown(new, estimate(from_json(new), TODAY), [], d)
    assert "``a`c``" in md and "`a|b`" in md and "\\|" not in md.split("#### Cost")[0]


def test_added_nat_gateways_cost_at_least_their_hourly_fee() -> None:
    base = plan_json(build("dev"), "aws")
    head = plan_json(build("dev", {"natGateways": "perAz"}), "aws")
    d = diff_plans(base, head, TODAY)
    assert any(r["type"] == "aws:ec2/natGateway:NatGateway" for r in d["added"])
    # Their data processing is usage-based: the monthly delta is not a plain number.
    assert d["cost"]["delta"]["monthly"] is None
    assert d["cost"]["deltaPriced"]["monthly"] > 0
    assert any("NAT data processing" in u for u in d["cost"]["deltaUnknown"]["monthly"])


def test_cpu_type_without_a_price_makes_the_delta_unknown() -> None:
    """Issue #25: m6i.large -> m7i.large showed -$74.08/month (the unknown side as $0)."""
    base = plan_json(build("dev"), "aws")
    head = plan_json(build("dev", {"systemPoolInstanceType": "m7i.large"}), "aws")
    d = diff_plans(base, head, TODAY)
    assert d["cost"]["delta"]["monthly"] is None
    [unknown] = d["cost"]["deltaUnknown"]["monthly"]
    assert "m7i.large" in unknown and "no price" in unknown
    assert d["cost"]["deltaPriced"]["monthly"] == 0  # the old price is not counted as saved
    assert "cost delta (estimate): unknown: 1 changed item(s) without a price" in text_diff(d)


def test_growing_an_unpriced_ack_pool_is_unknown_not_zero() -> None:
    """Issue #25: an ACK GPU pool from 2 x 1 A10 to 4 x 8 A10 showed $0.00."""
    base = plan_json(build("alicloud-dev", flat_pool("alicloud-dev")), "alicloud")
    head_config = {
        "gpuPoolInstanceType": "ecs.gn7i-8x.32xlarge",
        "gpuPoolGpuCount": 8,
        "gpuPoolExtraInstanceTypes": None,
        "gpuPoolMaxNodes": 4,
    }
    head = plan_json(build("alicloud-dev", flat_pool("alicloud-dev", head_config)), "alicloud")
    d = diff_plans(base, head, TODAY)
    for figure in ("monthly", "hourly_max"):
        assert d["cost"]["delta"][figure] is None
        assert any("ecs.gn7i-8x.32xlarge" in u for u in d["cost"]["deltaUnknown"][figure])
    assert "$0.00" not in text_diff(d).splitlines()[-1]


def test_a_blocked_change_fails_the_preview(tmp_path: Path) -> None:
    """`pulumi up` would refuse it after the PR merged: the PR check fails now (exit 1)."""
    from gpuinfra.cli import main

    base = plan_json(build("dev"), "aws")
    base["resources"].append(
        {"urn": "urn:pulumi:dev::gpuinfra::aws:s3/bucket:Bucket::gone", "type":
         "aws:s3/bucket:Bucket", "name": "gone", "protect": True, "inputs": {}}
    )  # fmt: skip
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    assert main(["preview", "--stack", "dev", "--diff", str(path), "--json"]) == 1
    base["resources"].pop()
    path.write_text(json.dumps(base))
    assert main(["preview", "--stack", "dev", "--diff", str(path), "--json"]) == 0
