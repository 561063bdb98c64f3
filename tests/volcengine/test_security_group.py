"""Security groups: admin ports only from adminCidrs, node traffic only from the cluster's
networks, every rule complete as the provider demands."""

from __future__ import annotations

from gpuinfra.engine import Plan
from tests.volcengine.conftest import PREFIX, SECURITY_GROUP, build_ve


def test_admin_group_opens_the_three_ports_to_admin_cidrs_only(ve_plan: Plan) -> None:
    group = ve_plan.one(SECURITY_GROUP, f"{PREFIX}-admin-sg")
    rules = group.inputs["ingressPermissions"]
    assert {(r["cidrIp"], r["portStart"], r["portEnd"]) for r in rules} == {
        ("203.0.113.0/24", 22, 22),
        ("203.0.113.0/24", 8888, 8888),
        ("203.0.113.0/24", 6006, 6006),
    }
    assert all(r["protocol"] == "tcp" and r["policy"] == "accept" for r in rules)
    assert group.inputs.get("egressPermissions", []) == []


def test_no_admin_cidrs_means_no_admin_rule() -> None:
    plan = build_ve({"adminCidrs": []})
    group = plan.one(SECURITY_GROUP, f"{PREFIX}-admin-sg")
    assert group.inputs.get("ingressPermissions", []) == []


def test_nodes_accept_only_the_cluster_networks(ve_plan: Plan) -> None:
    group = ve_plan.one(SECURITY_GROUP, f"{PREFIX}-nodes-sg")
    assert {r["cidrIp"] for r in group.inputs["ingressPermissions"]} == {
        "10.0.0.0/16",
        "172.20.0.0/16",
        "172.21.0.0/20",
    }
    for rule in group.inputs["ingressPermissions"] + group.inputs["egressPermissions"]:
        assert (rule["protocol"], rule["portStart"], rule["portEnd"]) == ("all", -1, -1)
        assert rule["priority"] == 1 and rule["description"]
