"""Every object the GPU layer renders is valid Kubernetes, passes checkov, and k8s/ is current."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest

from gpuinfra.engine import Plan
from gpuinfra.manifests import kustomize_files, manifests, write_or_check
from tests.kubernetes import crd_schemas
from tests.kubernetes.test_kueue import validate_kueue_object

ROOT = Path(__file__).resolve().parents[2]
KUEUE_GROUP = "kueue.x-k8s.io/"
"""Kueue's custom resources: checked against the release's own CRD schemas (test_kueue.py)."""


@pytest.mark.parametrize("version", ["1.31.0", "1.37.0"])
@pytest.mark.parametrize("stack", ["k8s-dev", "dev", "alicloud-dev", "tencentcloud-dev"])
def test_every_object_validates_strictly(
    stack: str, version: str, request: pytest.FixtureRequest
) -> None:
    from tests.conftest import gpu_layer_plan

    plan = request.getfixturevalue("k8s_plan") if stack == "k8s-dev" else gpu_layer_plan(stack)
    objects = manifests(plan)
    assert objects, "the GPU layer rendered nothing"
    checked = 0
    for obj in objects:
        if crd_schemas.has_schema(obj):
            # Custom resources (kubernetes-validate has no CRD): the operator's own schema.
            crd_schemas.validate(obj)
        elif obj["apiVersion"].startswith(KUEUE_GROUP):
            validate_kueue_object(obj)
        else:
            kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 8  # namespaces, policy, account, priority, DCGM objects at least


def test_strict_validation_catches_a_misspelled_field(k8s_plan: Plan) -> None:
    [job] = [o for o in manifests(k8s_plan) if o["kind"] == "Job"][:1]
    job["spec"]["podFailurePolicyy"] = job["spec"].pop("podFailurePolicy")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, "1.31.0", strict=True)


def test_rendered_folder_has_no_drift(k8s_plan: Plan) -> None:
    assert write_or_check(k8s_plan, ROOT / "k8s", check=True) == [], (
        "run `gpuinfra render --stack k8s-dev`"
    )
    kustomization = (ROOT / "k8s" / "kustomization.yaml").read_text()
    for name in kustomize_files(k8s_plan):
        if name != "kustomization.yaml":
            assert f"- {name}" in kustomization


def test_drift_is_detected(k8s_plan: Plan, tmp_path: Path) -> None:
    assert write_or_check(k8s_plan, tmp_path, check=False)  # empty folder: all new
    assert write_or_check(k8s_plan, tmp_path, check=True) == []
    target = next(tmp_path.glob("training-job-*.yaml"))
    target.write_text(target.read_text().replace("Never", "OnFailure"))
    (tmp_path / "stale.yaml").write_text("kind: ConfigMap\n")
    assert write_or_check(k8s_plan, tmp_path, check=True) == sorted([target.name, "stale.yaml"])


def _checkov() -> str:
    """checkov lives in its own venv (requirements-checkov.txt); CHECKOV overrides."""
    for candidate in (
        os.environ.get("CHECKOV"),
        str(ROOT / ".venv-checkov" / "bin" / "checkov"),
        shutil.which("checkov"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail(
        "checkov not found: python3 -m venv .venv-checkov && "
        ".venv-checkov/bin/pip install -r requirements-checkov.txt (or set CHECKOV)"
    )


@pytest.mark.parametrize("stack", ["k8s-dev", "alicloud-dev"])
def test_checkov_finds_nothing_unexplained(stack: str, tmp_path: Path) -> None:
    """Every failed check must be skipped on its object with a reason (checkov.io/skipN).
    k8s/ as committed, and a spot cloud stack's objects (its spot reclaim drainer too)."""
    from tests.conftest import gpu_layer_plan

    folder = ROOT / "k8s"
    if stack != "k8s-dev":
        folder = tmp_path / stack
        write_or_check(gpu_layer_plan(stack), folder, check=False)
        assert list(folder.glob("*spot-reclaim-drainer*"))
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE"}
    result = subprocess.run(
        [
            _checkov(),
            "-d",
            str(folder),
            "--framework",
            "kubernetes",
            "--quiet",
            "--compact",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    report = json.loads(result.stdout)
    failed = report["results"]["failed_checks"]
    assert [(c["check_id"], c["resource"]) for c in failed] == []
    assert report["summary"]["passed"] > 100
    for check in report["results"].get("skipped_checks", []):
        assert check["check_result"].get("suppress_comment"), check["check_id"]
