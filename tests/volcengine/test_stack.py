"""The Volcano Engine stack as a whole: the handle the GPU layer gets, where `pulumi up` runs,
and what the README promises."""

from __future__ import annotations

import re

from gpuinfra.engine import Plan
from tests.conftest import ROOT

TRAINER_SA = "kubernetes:core/v1:ServiceAccount"
NAMESPACE = "kubernetes:core/v1:Namespace"


def test_gpu_layer_gets_irsa_annotation_and_injection_label(ve_plan: Plan) -> None:
    sa = ve_plan.one(TRAINER_SA, "gpuinfra-volcengine-dev-trainer-sa")
    annotations = sa.inputs["metadata"]["annotations"]
    assert annotations["vke.volcengine.com/role-trn"] == ve_plan.outputs["trainingRoleTrn"]
    training = ve_plan.one(NAMESPACE, "gpuinfra-volcengine-dev-training")
    labels = training.inputs["metadata"]["labels"]
    assert labels["vke.volcengine.com/pod-identity-injection-enabled"] == "true"


def test_our_device_plugin_runs_on_vke(ve_plan: Plan) -> None:
    assert len(ve_plan.of_type("gpuinfra:kubernetes:NvidiaDevicePlugin")) == 1


def test_outputs_say_tos_endpoint_and_from_where_to_deploy(ve_plan: Plan) -> None:
    out = ve_plan.outputs
    assert out["bucketUri"] == "tos://gpuinfra-volcengine-dev-data"
    assert out["bucketEndpoint"] == "https://tos-s3-cn-beijing.ivolces.com"
    assert out["deployFrom"].startswith("inside the cluster's VPC (10.0.0.0/16)")
    assert "private" in out["deployFrom"]


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
