"""EKS Kubernetes versions: settings refuse what EKS no longer creates, and multi-minor jumps."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from components.catalog import fees
from components.settings import SettingsError, parse_settings
from components.settings import eks_versions as eks
from tests.conftest import ROOT

BASE = {"cloud": "aws", "gpuPoolInstanceType": "g5.xlarge", "gpuLayer": "separate"}
REGION = {"aws:region": "us-east-1"}
TODAY = dt.date(2026, 11, 30)


def _parse(version: str, today: dt.date = TODAY):  # type: ignore[no-untyped-def]
    raw = {**BASE, "kubernetesVersion": version}
    return parse_settings(raw, stack="dev", provider_config=REGION, today=today)


@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.35", "1.36"])
def test_versions_eks_offers_are_accepted(version: str) -> None:
    assert _parse(version).cluster.kubernetes_version == version


def test_version_past_extended_support_is_refused_naming_what_eks_offers() -> None:
    with pytest.raises(SettingsError) as raised:
        _parse("1.31")
    (problem,) = raised.value.problems
    assert problem.key == "gpuinfra:kubernetesVersion" and problem.value == "1.31"
    assert "ended extended support for 1.31 on 2026-11-26" in problem.allowed
    # The message says which offered minors cost extra.
    assert "1.32 (extended support until 2027-03-23, billed extra)" in problem.allowed
    assert "1.35" in problem.allowed


def test_version_eks_never_offered_is_refused() -> None:
    with pytest.raises(SettingsError, match=r"EKS does not offer Kubernetes 1\.37"):
        _parse("1.37")


def test_the_window_moves_with_the_date() -> None:
    assert _parse("1.31", today=dt.date(2026, 11, 26)).cluster.kubernetes_version == "1.31"
    with pytest.raises(SettingsError, match=r"ended extended support for 1\.32"):
        _parse("1.32", today=dt.date(2027, 3, 24))


def test_other_clouds_keep_their_own_windows() -> None:
    """The EKS calendar applies to EKS only (TKE and ACK check theirs)."""
    settings = parse_settings(
        {
            "cloud": "kubernetes",
            "kubernetesVersion": "1.31",
            "existingGpuNodeLabels": '["nvidia.com/gpu.present=true"]',
            # An existing cluster's training queue needs its GPU quota (no pools to count).
            "kueueGpuQuota": "2",
        },
        stack="k8s",
        today=TODAY,
    )
    assert settings.cluster.kubernetes_version == "1.31"


@pytest.mark.parametrize(
    ("minor", "kind", "until"),
    [
        ("1.31", "ended", dt.date(2026, 11, 26)),
        ("1.32", "extended", dt.date(2027, 3, 23)),
        ("1.34", "standard", dt.date(2026, 12, 2)),
        ("1.36", "standard", None),
        ("1.29", "unknown", None),
    ],
)
def test_support_status(minor: str, kind: str, until: dt.date | None) -> None:
    status = eks.support(minor, TODAY)
    assert (status.kind, status.until) == (kind, until)
    assert minor in status.describe(minor)


def test_calendar_agrees_with_the_fee_table() -> None:
    """The cost estimate (components/catalog/fees.py) bills from the same dates."""
    for minor, end in fees.EKS_END_OF_STANDARD_SUPPORT.items():
        if minor in eks.EKS_CALENDAR:
            assert str(eks.EKS_CALENDAR[minor].end_of_standard) == end, minor


@pytest.mark.parametrize(
    ("wanted", "control_plane", "nodes", "fragment"),
    [
        ("1.35", None, [], None),  # nothing deployed yet
        ("1.35", "1.35", ["1.35"], None),
        ("1.35", "1.34", ["1.34", "1.34"], None),  # one minor, nodes caught up
        ("1.34", "1.34", ["1.32"], None),  # node groups catch up to the control plane
        ("1.35", "1.33", ["1.33"], "run `pulumi up` with 1.34, then 1.35 in turn"),
        ("1.35", "1.34", ["1.33"], "node groups run 1.33"),
        ("1.33", "1.34", ["1.34"], "cannot downgrade"),
    ],
)
def test_upgrade_one_minor_at_a_time_from_where_the_nodes_are(
    wanted: str, control_plane: str | None, nodes: list[str], fragment: str | None
) -> None:
    problem = eks.upgrade_problem(wanted, control_plane, nodes)
    if fragment is None:
        assert problem is None
    else:
        assert problem is not None and fragment in problem


def test_preview_exits_2_on_a_version_eks_no_longer_offers(tmp_path: Path) -> None:
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    for folder in ("components", "stacks"):  # a gpuinfra project: the CLI checks for it
        (tmp_path / folder).symlink_to(ROOT / folder)
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    text = text.replace('gpuinfra:kubernetesVersion: "1.35"', 'gpuinfra:kubernetesVersion: "1.31"')
    assert '"1.31"' in text
    (tmp_path / "Pulumi.dev.yaml").write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "preview", "--cwd", str(tmp_path), "--stack", "dev"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "gpuinfra:kubernetesVersion" in result.stderr and "Traceback" not in result.stderr
    assert "ended extended support for 1.31" in result.stderr
