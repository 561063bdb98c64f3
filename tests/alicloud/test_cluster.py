"""ACK Pro: a pinned version, RRSA, KMS-encrypted Secrets, a kubeconfig for the endpoint chosen."""

from __future__ import annotations

import json

import pytest
import yaml

from components.alicloud.cluster import api_endpoint, kubeconfig_for
from gpuinfra.engine import Plan
from gpuinfra.mocks import alicloud as ali_mocks
from tests.alicloud.conftest import PREFIX, STACK
from tests.conftest import build

CLUSTER = "alicloud:cs/managedKubernetes:ManagedKubernetes"


def test_ack_pro_with_rrsa_and_the_stacks_own_kms_key(ali_plan: Plan) -> None:
    cluster = ali_plan.one(CLUSTER).inputs
    key = ali_plan.one("alicloud:kms/key:Key")
    assert cluster["clusterSpec"] == "ack.pro.small"
    assert cluster["enableRrsa"] is True
    assert cluster["encryptionProviderKey"] == key.id
    assert key.inputs["automaticRotation"] == "Enabled"
    assert key.inputs["rotationInterval"] == "365d"
    assert cluster["name"] == PREFIX
    assert "ack-pod-identity-webhook" in [a["name"] for a in cluster["addons"]]


def test_every_boolean_sent_is_one_the_api_receives(ali_plan: Plan) -> None:
    """Finding 1/2: no False on a field Create reads with d.GetOk and defaults to true."""
    cluster = ali_plan.one(CLUSTER).inputs
    assert cluster["newNatGateway"] is True  # ACK's NAT gateway is the only one
    assert cluster["isEnterpriseSecurityGroup"] is True  # the API default, said out loud
    assert "disableEncryption" not in cluster  # Create never reads it


def test_version_is_pinned_not_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 4: a newer ACK patch in the region changes nothing on the next `pulumi up`."""
    monkeypatch.setattr(ali_mocks, "ACK_VERSIONS", ("1.33.9-aliyun.1", *ali_mocks.ACK_VERSIONS))
    plan = build(STACK)
    cluster = plan.one(CLUSTER).inputs
    assert cluster["version"] == "1.33.3-aliyun.1"
    assert cluster["upgradePolicy"] == {"controlPlaneOnly": True}
    assert plan.outputs["kubernetesVersion"] == "1.33.3-aliyun.1"


def test_changing_the_pinned_version_is_the_upgrade() -> None:
    plan = build(STACK, {"ackVersion": "1.33.8-aliyun.1"})
    assert plan.one(CLUSTER).inputs["version"] == "1.33.8-aliyun.1"


def test_private_endpoint_unless_asked(ali_plan: Plan) -> None:
    assert ali_plan.one(CLUSTER).inputs["slbInternetEnabled"] is False
    public = build(STACK, {"apiEndpointPublic": True, "allowPublicAdminAccess": True})
    assert public.one(CLUSTER).inputs["slbInternetEnabled"] is True


def test_deletion_protection_and_logs_from_config() -> None:
    plan = build(
        STACK,
        {
            "deletionProtection": True,
            "clusterLogTypes": ["api", "scheduler", "authenticator"],
            "clusterLogRetentionDays": 45,
        },
    )
    cluster = plan.one(CLUSTER).inputs
    assert cluster["deletionProtection"] is True
    assert cluster["controlPlaneLogComponents"] == ["apiserver", "scheduler"]
    assert cluster["controlPlaneLogTtl"] == "45"
    assert cluster["auditLogConfig"] == {"enabled": False}


def test_destroy_removes_the_log_projects_ack_made(ali_plan: Plan) -> None:
    """Finding 8: ACK keeps its SLS projects after DeleteCluster unless told to delete them."""
    options = ali_plan.one(CLUSTER).inputs["deleteOptions"]
    assert {(o["resourceType"], o["deleteMode"]) for o in options} == {
        ("SLS_ControlPlane", "delete"),
        ("SLS_Data", "delete"),
    }


def test_kubeconfig_names_the_private_endpoint_the_cluster_has(ali_plan: Plan) -> None:
    """Finding 3: the credential lookup returns the Internet kubeconfig whatever the endpoint;
    the stack hands on the one for the endpoint it chose (private here)."""
    assert "kubeconfig" in ali_plan.secret_outputs
    kubeconfig = json.loads(ali_plan.outputs["kubeconfig"])
    cluster = ali_plan.one(CLUSTER)
    intranet = cluster.outputs["connections"][0]["apiServerIntranet"]
    assert [c["cluster"]["server"] for c in kubeconfig["clusters"]] == [intranet]
    assert ali_plan.outputs["apiEndpoint"] == intranet
    assert cluster.id in kubeconfig["current-context"]


def test_kubeconfig_names_the_public_endpoint_when_public() -> None:
    plan = build(STACK, {"apiEndpointPublic": True, "allowPublicAdminAccess": True})
    kubeconfig = json.loads(plan.outputs["kubeconfig"])
    internet = plan.one(CLUSTER).outputs["connections"][0]["apiServerInternet"]
    assert internet.startswith("https://") and internet != "https://:6443"
    assert [c["cluster"]["server"] for c in kubeconfig["clusters"]] == [internet]


def test_kubeconfig_for_rewrites_every_cluster_and_keeps_the_rest() -> None:
    text = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "clusters": [{"name": "k", "cluster": {"server": "https://47.1.2.3:6443", "x": 1}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
        }
    )
    config = json.loads(kubeconfig_for(text, "https://10.0.0.9:6443"))
    assert config["clusters"] == [
        {"name": "k", "cluster": {"server": "https://10.0.0.9:6443", "x": 1}}
    ]
    assert config["users"] == [{"name": "u", "user": {"token": "t"}}]
    with pytest.raises(ValueError, match="without clusters"):
        kubeconfig_for("apiVersion: v1\n", "https://10.0.0.9:6443")


def test_api_endpoint_refuses_a_missing_public_address() -> None:
    connections = [{"api_server_intranet": "https://10.0.0.9:6443", "api_server_internet": ""}]
    assert api_endpoint(connections, public=False) == "https://10.0.0.9:6443"
    with pytest.raises(ValueError, match="no public API endpoint"):
        api_endpoint(connections, public=True)
