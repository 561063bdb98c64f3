"""TKE cluster: managed, version and CIDRs from settings, KMS Secrets, private endpoint."""

from __future__ import annotations

import json

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


def test_secrets_encrypted_with_the_stacks_kms_key(tc_plan: Plan) -> None:
    key = tc_plan.one(T + "Kms/key:Key")
    assert key.inputs["keyRotationEnabled"] is True
    protection = tc_plan.one(T + "Kubernetes/encryptionProtection:EncryptionProtection").inputs
    assert protection["clusterId"] == tc_plan.one(CLUSTER).id
    assert protection["kmsConfiguration"] == {"keyId": key.id, "kmsRegion": "ap-guangzhou"}


def test_endpoint_is_private_by_default(tc_plan: Plan) -> None:
    endpoint = tc_plan.one(ENDPOINT)
    assert endpoint.inputs["clusterIntranet"] is True
    assert endpoint.inputs["clusterInternet"] is False
    assert not endpoint.inputs.get("clusterInternetSecurityGroup")
    assert endpoint.inputs["clusterIntranetSubnetId"] in {s.id for s in tc_plan.of_type(SUBNET)}
    kubeconfig = json.loads(tc_plan.outputs["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == endpoint.outputs["pgwEndpoint"]
    assert "kubeconfig" in tc_plan.secret_outputs
    assert not tc_plan.of_type(T + "Security/group:Group") or all(
        not g.name.endswith("-api-sg") for g in tc_plan.of_type(T + "Security/group:Group")
    )


def test_endpoint_opened_after_a_node_pool_exists(tc_plan: Plan) -> None:
    endpoint = tc_plan.one(ENDPOINT)
    system = tc_plan.one(
        T + "Kubernetes/nodePool:NodePool", "gpuinfra-tencentcloud-dev-system-pool"
    )
    assert system.urn in endpoint.dependencies or any(
        d.endswith("gpuinfra-tencentcloud-dev-system") for d in endpoint.dependencies
    )


def test_public_endpoint_only_from_admin_networks() -> None:
    plan = build_tc({"apiEndpointPublic": True, "adminCidrs": ["203.0.113.0/24", "2001:db8::/48"]})
    endpoint = plan.one(ENDPOINT).inputs
    assert endpoint["clusterInternet"] is True
    api_group = plan.one(T + "Security/group:Group", "gpuinfra-tencentcloud-dev-api-sg")
    assert endpoint["clusterInternetSecurityGroup"] == api_group.id
    rules = plan.one(RULE_SET, "gpuinfra-tencentcloud-dev-api-sg-rules").inputs["ingresses"]
    assert [(r["cidrBlock"], r["port"], r["protocol"]) for r in rules] == [
        ("203.0.113.0/24", "443", "TCP")
    ]
    kubeconfig = json.loads(plan.outputs["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"].endswith(".ccs.tencent-cloud.com")
