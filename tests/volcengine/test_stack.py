"""The Volcano Engine stack as a whole: the handle the GPU layer gets, where `pulumi up` runs,
and what the README promises."""

from __future__ import annotations

import re

import pytest

from gpuinfra.engine import Plan
from tests.conftest import ROOT, gpu_layer_plan
from tests.volcengine.conftest import STACK

TRAINER_SA = "kubernetes:core/v1:ServiceAccount"
NAMESPACE = "kubernetes:core/v1:Namespace"


@pytest.fixture(scope="module")
def layer_plan() -> Plan:
    """volcengine-dev's GPU layer: its private endpoint makes it a separate stack."""
    return gpu_layer_plan(STACK)


def test_gpu_layer_gets_irsa_annotation_and_injection_label(
    ve_plan: Plan, layer_plan: Plan
) -> None:
    prefix = "gpuinfra-volcengine-dev-gpu"
    sa = layer_plan.one(TRAINER_SA, f"{prefix}-trainer-sa")
    annotations = sa.inputs["metadata"]["annotations"]
    assert annotations["vke.volcengine.com/role-trn"] == ve_plan.outputs["trainingRoleTrn"]
    training = layer_plan.one(NAMESPACE, f"{prefix}-training")
    labels = training.inputs["metadata"]["labels"]
    assert labels["vke.volcengine.com/pod-identity-injection-enabled"] == "true"


def test_our_device_plugin_runs_on_vke(layer_plan: Plan) -> None:
    assert len(layer_plan.of_type("gpuinfra:kubernetes:NvidiaDevicePlugin")) == 1


def test_cluster_stack_deploys_no_kubernetes_object(ve_plan: Plan) -> None:
    assert not [r for r in ve_plan.resources if r.type.startswith("kubernetes:")]
    assert "clusterHandle" in ve_plan.secret_outputs


def test_outputs_say_tos_endpoint_and_from_where_to_deploy(ve_plan: Plan, layer_plan: Plan) -> None:
    out = ve_plan.outputs
    assert out["bucketUri"] == "tos://gpuinfra-volcengine-dev-data"
    assert out["bucketEndpoint"] == "https://tos-s3-cn-beijing.ivolces.com"
    assert out["deployFrom"].startswith("anywhere with Volcano Engine credentials")
    assert layer_plan.outputs["deployFrom"].startswith("inside the cluster's VPC (10.0.0.0/16)")
    assert "private" in layer_plan.outputs["deployFrom"]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"^## Volcano Engine \(VKE\)\n(.*?)^## ", text, re.S | re.M)
    assert match, "README has no Volcano Engine (VKE) section"
    return match.group(1)


def test_readme_gives_credentials_prerequisites_idle_cost_and_deploy_place() -> None:
    section = _section()
    for needed in (
        "VOLCENGINE_ACCESS_KEY",
        "VOLCENGINE_SECRET_KEY",
        "volcenginecc:region",
        "IRSA",
        "pod-identity-webhook",
        "quota",
        "idle",
        "inside the VPC",
        "vkeZones",
        "pulumi-volcenginecc",
        "Not confirmed",
    ):
        assert needed in section, needed
