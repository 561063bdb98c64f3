"""From where `pulumi up` reaches the API server: gpuLayer inline|separate, clusterStack through
a StackReference, `deployFrom` on every stack, `gpuinfra reachability`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from components.cluster_handle import handle_document, handle_from_document
from components.settings import SettingsError
from gpuinfra.engine import Plan, StackOutputs, run_program
from gpuinfra.project import load_project
from tests.conftest import ROOT, build, gpu_layer_plan, stack_config

K8S_PREFIX = "kubernetes:"
PROVIDER = "pulumi:providers:kubernetes"


def _problems(stack: str, overrides: dict[str, object]) -> dict[str, str]:
    with pytest.raises(SettingsError) as caught:
        build(stack, overrides)
    return {p.key: str(p) for p in caught.value.problems}


def _gpuinfra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuinfra", *args, "--cwd", str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_inline_gpu_layer_behind_a_private_endpoint_is_refused() -> None:
    problems = _problems("dev", {"apiEndpointPublic": False})
    assert list(problems) == ["gpuinfra:gpuLayer"]
    message = problems["gpuinfra:gpuLayer"]
    for fragment in ("apiEndpointPublic", "adminCidrs", "separate", "clusterStack"):
        assert fragment in message


def test_inline_behind_a_private_endpoint_exits_2_in_the_preview(tmp_path: Path) -> None:
    text = (
        (ROOT / "Pulumi.dev.yaml")
        .read_text()
        .replace("gpuinfra:apiEndpointPublic: true", "gpuinfra:apiEndpointPublic: false")
    )
    assert "apiEndpointPublic: false" in text
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    (tmp_path / "Pulumi.private.yaml").write_text(text)
    for package in ("components", "stacks"):
        (tmp_path / package).symlink_to(ROOT / package)
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--stack", "private", "--cwd", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert 'gpuinfra:gpuLayer = "inline"' in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("stack", "overrides", "key", "fragment"),
    [
        ("k8s-dev", {"gpuLayer": "separate"}, "gpuinfra:gpuLayer", "nothing to separate"),
        ("dev", {"clusterStack": "o/gpuinfra/prod"}, "gpuinfra:clusterStack", "only for cloud"),
        ("prod-gpu", {"clusterStack": "prod"}, "gpuinfra:clusterStack", "<org>/<project>"),
        ("prod-gpu", {"kubeconfig": "x"}, "gpuinfra:kubeconfig", "clusterHandle"),
        (
            "prod-gpu",
            {"existingGpuNodeLabels": ["a=b"]},
            "gpuinfra:existingGpuNodeLabels",
            "clusterHandle",
        ),
    ],
)
def test_bad_reachability_settings_name_the_key(
    stack: str, overrides: dict[str, object], key: str, fragment: str
) -> None:
    config = stack_config(stack, overrides)
    from components.settings import parse_settings

    raw = {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpuinfra:")}
    with pytest.raises(SettingsError) as caught:
        parse_settings(raw, stack=stack, provider_config={"aws:region": "us-east-1"})
    problems = {p.key: str(p) for p in caught.value.problems}
    assert key in problems and fragment in problems[key], problems


def test_a_separate_cluster_stack_deploys_no_kubernetes_object(prod_plan: Plan) -> None:
    assert not [r for r in prod_plan.resources if r.type.startswith(K8S_PREFIX)]
    assert not prod_plan.of_type(PROVIDER)
    assert "clusterHandle" in prod_plan.secret_outputs
    doc = prod_plan.outputs["clusterHandle"]
    assert doc["kubeconfig"] == prod_plan.outputs["kubeconfig"]
    assert doc["apiAccess"] == {
        "public": False,
        "adminCidrs": ["10.200.0.0/16"],
        "vpcCidr": "10.0.0.0/16",
    }
    assert doc["gpusPerNode"] == 8 and doc["cloud"] == "aws"


def test_the_handle_survives_its_round_trip(prod_plan: Plan) -> None:
    """What prod exports is what prod-gpu rebuilds: serialise it again, same document."""
    doc = prod_plan.outputs["clusterHandle"]
    again: list[dict] = []

    def program() -> None:
        handle_document(handle_from_document(doc)).apply(again.append)

    run_program(program, project="gpuinfra", stack="t", config={})
    assert again == [doc]


def test_prod_gpu_deploys_the_gpu_layer_from_prods_handle(prod_plan: Plan) -> None:
    plan = build("prod-gpu")
    [provider] = plan.of_type(PROVIDER)
    assert provider.inputs["kubeconfig"] == prod_plan.outputs["kubeconfig"]
    assert "kubeconfig" in provider.secret_inputs
    names = {r.inputs["metadata"]["name"] for r in plan.resources if r.type.startswith(K8S_PREFIX)}
    assert {"dcgm-exporter", "nvidia-device-plugin", "cluster-autoscaler", "trainer"} <= names
    [account] = [
        r for r in plan.of_type("kubernetes:core/v1:ServiceAccount")
        if r.inputs["metadata"]["name"] == "trainer"
    ]  # fmt: skip
    [irsa] = account.inputs["metadata"]["annotations"].values()
    assert irsa == prod_plan.outputs["trainingRoleArn"]
    assert plan.outputs["clusterName"] == prod_plan.outputs["clusterName"]


def test_a_cluster_stack_without_a_handle_is_a_clear_error() -> None:
    dev = build("dev")  # inline: it deploys its own GPU layer and exports no handle
    config = {
        "gpuinfra:cloud": "kubernetes",
        "gpuinfra:kubernetesVersion": "1.35",
        "gpuinfra:clusterStack": "organization/gpuinfra/dev",
    }
    from components.settings import load_settings
    from stacks import build_stack

    with pytest.raises(SettingsError) as caught:
        run_program(
            lambda: build_stack(load_settings()),
            project="gpuinfra",
            stack="dev-gpu",
            config=config,
            stack_references={"organization/gpuinfra/dev": StackOutputs(dev.outputs)},
        )
    assert "no clusterHandle output" in str(caught.value) and "gpuLayer" in str(caught.value)


def test_jobs_must_fit_the_cluster_stacks_gpu_nodes() -> None:
    jobs = {"trainingJobs": [{"name": "big", "gpusPerNode": 8}]}
    with pytest.raises(SettingsError) as caught:
        gpu_layer_plan("alicloud-dev", layer=jobs)  # one A10 per node
    assert "gpuinfra:trainingJobs[0].gpusPerNode" in str(caught.value)


def test_every_shipped_stack_says_from_where_pulumi_up_runs() -> None:
    stacks = load_project(ROOT).stacks()
    assert {
        "dev", "prod", "prod-gpu", "alicloud-dev", "alicloud-dev-gpu", "tencentcloud-dev",
        "k8s-dev", "volcengine-dev", "volcengine-dev-gpu",
    } <= set(stacks)  # fmt: skip
    said = {stack: build(stack).outputs["deployFrom"] for stack in stacks}
    for inline in ("dev", "tencentcloud-dev"):
        assert said[inline].startswith("a network in adminCidrs (203.0.113.0/24)"), said[inline]
    for cluster_only in ("prod", "alicloud-dev", "volcengine-dev"):
        assert said[cluster_only].startswith("anywhere with"), said[cluster_only]
    for layer in ("prod-gpu", "alicloud-dev-gpu", "volcengine-dev-gpu"):
        assert said[layer].startswith("inside the cluster's VPC (10.0.0.0/16)"), said[layer]
    assert "kubeconfig" in said["k8s-dev"]


def test_the_preview_prints_deploy_from_in_text_markdown_and_json() -> None:
    text = _gpuinfra("preview", "--stack", "prod-gpu")
    assert text.returncode == 0, text.stderr
    assert "Deploy from: inside the cluster's VPC (10.0.0.0/16)" in text.stdout
    markdown = _gpuinfra("preview", "--stack", "prod", "--format", "markdown")
    assert "**Deploy from:** anywhere with AWS credentials" in markdown.stdout
    doc = json.loads(_gpuinfra("preview", "--stack", "dev", "--json").stdout)
    assert doc["deployFrom"].startswith("a network in adminCidrs")


@pytest.mark.parametrize(
    ("stack", "address", "code", "fragment"),
    [
        ("dev", "203.0.113.40", 0, "is in 203.0.113.0/24"),
        ("dev", "198.51.100.7", 2, "admits only gpuinfra:adminCidrs"),
        ("prod", "198.51.100.7", 0, "only to cloud APIs"),
        ("prod-gpu", "10.0.12.5", 0, "is in 10.0.0.0/16"),
        ("prod-gpu", "203.0.113.40", 2, "run from inside the VPC"),
        ("k8s-dev", "198.51.100.7", 0, "not checked"),
    ],
)
def test_reachability_preflight(stack: str, address: str, code: int, fragment: str) -> None:
    result = _gpuinfra("reachability", "--stack", stack, "--from-ip", address)
    assert result.returncode == code, result.stderr
    out = result.stdout + result.stderr
    assert fragment in out and len(out.strip().splitlines()) == 1


def test_reachability_prints_deploy_from_and_refuses_a_bad_address() -> None:
    result = _gpuinfra("reachability", "--stack", "prod")
    assert result.returncode == 0 and result.stdout.startswith("prod: deploy from anywhere")
    bad = _gpuinfra("reachability", "--stack", "dev", "--from-ip", "not-an-ip")
    assert bad.returncode == 2 and "is not an IP address" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def _layer_from(doc: dict, jobs: list[dict], extra: dict[str, str] | None = None) -> Plan:
    """A GPU-layer stack deployed from a cluster stack that exported `doc` as its handle."""
    from components.settings import load_settings
    from stacks import build_stack

    name = "organization/gpuinfra/alicloud-dev"
    config = {
        "gpuinfra:cloud": "kubernetes",
        "gpuinfra:kubernetesVersion": "1.35",
        "gpuinfra:clusterStack": name,
        "gpuinfra:trainingJobs": json.dumps(jobs),
        **(extra or {}),
    }
    outputs = {"clusterHandle": doc}
    return run_program(
        lambda: build_stack(load_settings()),
        project="gpuinfra",
        stack="alicloud-dev-gpu",
        config=config,
        stack_references={name: StackOutputs(outputs, frozenset({"clusterHandle"}))},
    )


def _handle(stack: str) -> dict:
    doc: dict = build(stack).outputs["clusterHandle"]
    return doc


def test_the_handle_lists_every_gpu_pool() -> None:
    """What a GPU-layer stack (and Kueue) needs of each pool: name, model, GPUs per node,
    node labels and taints; version 2 since `gpuPools`."""
    doc = _handle("alicloud-dev")
    assert doc["version"] == 2
    pools = {p["name"]: p for p in doc["gpuPools"]}
    assert list(pools) == ["small", "large"]
    for name, gpus, capacity in (("small", 1, "spot"), ("large", 4, "onDemand")):
        pool = pools[name]
        assert (pool["gpuModel"], pool["gpusPerNode"], pool["capacityType"]) == (
            "A10",
            gpus,
            capacity,
        )
        assert pool["nodeLabels"]["gpuinfra.io/pool"] == name
        assert {"key": "gpuinfra.io/pool", "value": name, "effect": "NoSchedule"} in pool["taints"]
    again: list[dict] = []
    run_program(
        lambda: handle_document(handle_from_document(doc)).apply(again.append),
        project="gpuinfra",
        stack="t",
        config={},
    )
    assert again == [doc]


def test_a_version_1_handle_still_places_jobs_where_they_went() -> None:
    """A cluster stack not yet updated exports a version-1 handle without `gpuPools`: its GPU
    layer's Jobs select `gpuNodeLabels` with the GPU taint, as before; naming a pool is refused
    with the way out."""
    doc = {k: v for k, v in _handle("alicloud-dev").items() if k != "gpuPools"}
    doc |= {
        "version": 1,
        "gpusPerNode": 1,
        "gpuNodeLabels": {"gpuinfra.io/accelerator": "A10", "gpuinfra.io/pool": "gpu"},
    }
    # No pools to take the queue's quota from: it must be given (or Kueue turned off).
    with pytest.raises(SettingsError) as caught:
        _layer_from(doc, [{"name": "a"}])
    [problem] = caught.value.problems
    assert problem.key == "gpuinfra:kueueGpuQuota" and "pulumi up" in problem.allowed
    plan = _layer_from(doc, [{"name": "a"}], {"gpuinfra:kueueGpuQuota": "2"})
    [job] = [r for r in plan.of_type("kubernetes:batch/v1:Job")]
    pod = job.inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpuinfra.io/accelerator": "A10", "gpuinfra.io/pool": "gpu"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    with pytest.raises(SettingsError) as caught:
        _layer_from(doc, [{"name": "a", "pool": "large"}], {"gpuinfra:kueueGpuQuota": "2"})
    [problem] = caught.value.problems
    assert problem.key == "gpuinfra:trainingJobs[0].pool" and "pulumi up" in problem.allowed
    with pytest.raises(SettingsError) as caught:
        _layer_from({**doc, "version": 3}, [{"name": "a"}])
    assert "clusterHandle version 3" in str(caught.value)
