"""VKE cluster: private endpoint, IRSA requested at creation, Flannel networks from settings,
its add-ons, and the private kubeconfig handed to the GPU layer as a secret."""

from __future__ import annotations

import base64

from components.volcengine.cluster import kubeconfig_text
from gpuinfra.engine import Plan
from tests.volcengine.conftest import ADDON, CLUSTER, KUBECONFIG, NODE_POOL, PREFIX, SUBNET


def test_cluster_is_private_with_irsa_and_the_configured_networks(ve_plan: Plan) -> None:
    cluster = ve_plan.one(CLUSTER)
    i = cluster.inputs
    assert i["clusterConfig"]["apiServerPublicAccessEnabled"] is False
    assert i["clusterConfig"]["resourcePublicAccessDefaultEnabled"] is False
    assert set(i["clusterConfig"]["subnetIds"]) == {
        s.outputs["subnetId"] for s in ve_plan.of_type(SUBNET)
    }
    assert i["irsaConfig"] == {"enabled": True}
    assert i["kubernetesVersionCreate"] == "1.32"
    assert i["podsConfig"] == {
        "podNetworkMode": "Flannel",
        "flannelConfig": {"podCidrs": ["172.20.0.0/16"], "maxPodsPerNode": 64},
    }
    assert i["servicesConfig"] == {"serviceCidrsv4s": ["172.21.0.0/20"]}
    assert ve_plan.outputs["apiEndpoint"] == "private"


def test_addons_autoscaler_managed_and_webhook_on_the_system_pool(ve_plan: Plan) -> None:
    addons = {a.inputs["name"]: a for a in ve_plan.of_type(ADDON)}
    assert set(addons) == {"cluster-autoscaler", "pod-identity-webhook"}
    assert addons["cluster-autoscaler"].inputs["deployMode"] == "Managed"
    webhook = addons["pod-identity-webhook"]
    assert (webhook.inputs["deployMode"], webhook.inputs["deployNodeType"]) == ("Unmanaged", "Node")
    system = ve_plan.one(NODE_POOL, f"{PREFIX}-system-pool")
    assert system.urn in webhook.dependencies or any(
        system.parent == d for d in webhook.dependencies
    )


def test_kubeconfig_is_the_private_one_decoded_and_secret(ve_plan: Plan) -> None:
    config = ve_plan.one(KUBECONFIG)
    assert config.inputs["type"] == "Private"
    assert config.inputs["validDuration"] == 8760
    assert "kubeconfig" in ve_plan.secret_outputs
    text = ve_plan.outputs["kubeconfig"]
    assert text.startswith("{") and '"server": "https://10.0.' in text


def test_kubeconfig_text_decodes_base64_and_keeps_yaml() -> None:
    yaml_text = "apiVersion: v1\nkind: Config\n"
    assert kubeconfig_text(base64.b64encode(yaml_text.encode()).decode()) == yaml_text
    assert kubeconfig_text(yaml_text) == yaml_text
    assert kubeconfig_text(None) == ""
