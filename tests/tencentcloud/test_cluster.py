"""TKE cluster: managed, version and CIDRs from settings, KMS Secrets, the API endpoint."""

from __future__ import annotations

import json

from components.tencentcloud.cluster import ENDPOINT_FIELDS
from gpuinfra.engine import Plan
from tests.tencentcloud.conftest import CLUSTER, ENDPOINT, RULE_SET, SUBNET, T, build_tc


def test_managed_cluster_from_settings(tc_plan: Plan) -> None:
    cluster = tc_plan.one(CLUSTER).inputs
    assert cluster["clusterDeployType"] == "MANAGED_CLUSTER"
    assert cluster["clusterVersion"] == "1.34.1"  # in TKE's own acceptance test
    assert cluster["clusterCidr"] == "172.20.0.0/16"
    assert cluster["serviceCidr"] == "172.21.0.0/20"
    assert cluster["clusterMaxServiceNum"] == 4096
    assert cluster["deletionProtection"] is False
    assert cluster["vpcId"] == tc_plan.one(T + "Vpc/instance:Instance").id


def test_settings_reach_the_cluster() -> None:
    plan = build_tc(
        {
            "kubernetesVersion": "1.34",
            "deletionProtection": True,
            "tkePodCidr": "192.168.0.0/17",
            "tkeServiceCidr": "192.168.128.0/22",
        }
    )
    cluster = plan.one(CLUSTER).inputs
    assert cluster["clusterVersion"] == "1.34.1"
    assert cluster["deletionProtection"] is True
    assert (cluster["clusterCidr"], cluster["serviceCidr"]) == (
        "192.168.0.0/17",
        "192.168.128.0/22",
    )
    assert cluster["clusterMaxServiceNum"] == 1024


def test_cluster_leaves_the_endpoints_to_the_cluster_endpoint(tc_plan: Plan) -> None:
    """Finding 6: a Cluster that sets cluster_internet/intranet=False closes, on its next
    update, what the ClusterEndpoint opened (provider v1.82.42 reads them back from TKE)."""
    cluster = tc_plan.one(CLUSTER)
    assert "clusterInternet" not in cluster.inputs and "clusterIntranet" not in cluster.inputs
    assert set(ENDPOINT_FIELDS) <= set(cluster.ignore_changes)


def test_secrets_encrypted_with_the_stacks_kms_key(tc_plan: Plan) -> None:
    key = tc_plan.one(T + "Kms/key:Key")
    # Finding 3: without is_enabled the provider creates the key and then disables it.
    assert key.inputs["isEnabled"] is True
    assert key.outputs["keyState"] == "Enabled"
    assert key.inputs["keyRotationEnabled"] is True
    protection = tc_plan.one(T + "Kubernetes/encryptionProtection:EncryptionProtection").inputs
    assert protection["clusterId"] == tc_plan.one(CLUSTER).id
    assert protection["kmsConfiguration"] == {"keyId": key.id, "kmsRegion": "ap-guangzhou"}


def test_private_endpoint_when_not_public() -> None:
    plan = build_tc({"apiEndpointPublic": False, "gpuLayer": "separate"})
    endpoint = plan.one(ENDPOINT)
    assert endpoint.inputs["clusterIntranet"] is True
    assert endpoint.inputs["clusterInternet"] is False
    assert not endpoint.inputs.get("clusterInternetSecurityGroup")
    assert endpoint.inputs["clusterIntranetSubnetId"] in {s.id for s in plan.of_type(SUBNET)}
    kubeconfig = json.loads(plan.outputs["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == endpoint.outputs["pgwEndpoint"]
    assert plan.outputs["clusterEndpoint"] == endpoint.outputs["pgwEndpoint"]
    assert "kubeconfig" in plan.secret_outputs
    assert not any(g.name.endswith("-api-sg") for g in plan.of_type(T + "Security/group:Group"))


def test_endpoint_opened_after_a_node_pool_exists(tc_plan: Plan) -> None:
    endpoint = tc_plan.one(ENDPOINT)
    system = tc_plan.one(
        T + "Kubernetes/nodePool:NodePool", "gpuinfra-tencentcloud-dev-system-pool"
    )
    assert system.urn in endpoint.dependencies or any(
        d.endswith("gpuinfra-tencentcloud-dev-system") for d in endpoint.dependencies
    )


def test_shipped_stack_has_a_public_endpoint_for_admin_networks_only(tc_plan: Plan) -> None:
    """The team's reachability decision: tencentcloud-dev deploys the GPU layer in the same
    `pulumi up`, through a public endpoint that admits only adminCidrs, with the kubeconfig of
    that endpoint."""
    endpoint = tc_plan.one(ENDPOINT)
    assert endpoint.inputs["clusterInternet"] is True
    assert endpoint.inputs["clusterIntranet"] is True
    api_group = tc_plan.one(T + "Security/group:Group", "gpuinfra-tencentcloud-dev-api-sg")
    assert endpoint.inputs["clusterInternetSecurityGroup"] == api_group.id
    rules = tc_plan.one(RULE_SET, "gpuinfra-tencentcloud-dev-api-sg-rules").inputs
    assert [(r["cidrBlock"], r["port"], r["protocol"]) for r in rules["ingresses"]] == [
        ("203.0.113.0/24", "443", "TCP")
    ]
    assert not rules.get("egresses")
    kubeconfig = json.loads(tc_plan.outputs["kubeconfig"])
    server = endpoint.outputs["clusterExternalEndpoint"]
    assert server and kubeconfig["clusters"][0]["cluster"]["server"] == server
    assert tc_plan.outputs["clusterEndpoint"] == server
    assert "kubeconfig" in tc_plan.secret_outputs


def test_public_endpoint_takes_only_ipv4_admin_networks() -> None:
    plan = build_tc({"apiEndpointPublic": True, "adminCidrs": ["203.0.113.0/24", "2001:db8::/48"]})
    rules = plan.one(RULE_SET, "gpuinfra-tencentcloud-dev-api-sg-rules").inputs["ingresses"]
    assert [r["cidrBlock"] for r in rules] == ["203.0.113.0/24"]
