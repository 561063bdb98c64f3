# ruff: noqa: E501  (expected output lines read best whole)
"""`gpuinfra prices` end to end, in-process: nothing changes without credentials or SDK;
with them (canned Alibaba Cloud answers on 127.0.0.1) it writes the dated file, says what
changed, and the preview then shows the GPU pool's price with its source and date, in CNY,
never added to the USD fee."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuinfra import cli
from gpuinfra.prices import command
from gpuinfra.prices import file as price_file

from .conftest import recorded

ROOT = Path(__file__).resolve().parents[2]
STACKS = ("dev", "alicloud-dev", "tencentcloud-dev", "volcengine-dev")
GN7I = "ecs.gn7i-c8g1.2xlarge"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A gpuinfra project (the program's packages linked from the repository)."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", *(f"Pulumi.{s}.yaml" for s in STACKS)):
        (folder / name).write_text((ROOT / name).read_text())
    for package in ("components", "stacks"):
        (folder / package).symlink_to(ROOT / package)
    return folder


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "path", list(sys.path))

    def invoke(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.mark.parametrize("stack", STACKS)
def test_without_credentials_it_says_so_and_changes_nothing(run, project: Path, stack: str) -> None:
    existing = project / "prices" / "kept.json"
    existing.parent.mkdir()
    existing.write_text("{}")
    code, out, err = run("prices", "--stack", stack, "--cwd", str(project))
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "credentials" in err and "nothing was changed" in err
    assert [p.name for p in existing.parent.iterdir()] == ["kept.json"]


def test_without_the_sdk_it_says_how_to_install_it(
    run, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "alibabacloud_ecs20140526", None)  # import fails
    code, _, err = run("prices", "--stack", "alicloud-dev", "--cwd", str(project))
    assert code == 2 and "pip install 'gpuinfra[prices]'" in err and "nothing was changed" in err
    assert not (project / "prices").exists()


def _alibaba(spot_j: float = 2.6, sold: bool = True):
    def answer(method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        if headers.get("x-acs-action") == "DescribePrice":
            if not sold or "gn8is" in path:
                return 400, recorded("alicloud-DescribePrice-not-sold")
            return 200, recorded("alicloud-DescribePrice")
        if not sold:
            return 400, recorded("alicloud-DescribePrice-not-sold")
        history = recorded("alicloud-DescribeSpotPriceHistory")
        history["SpotPrices"]["SpotPriceType"][2]["SpotPrice"] = spot_j
        if GN7I not in path:  # the canned history is gn7i's
            history["SpotPrices"]["SpotPriceType"] = []
        return 200, history

    return answer


@pytest.fixture
def alibaba(monkeypatch: pytest.MonkeyPatch, serve):
    """Credentials in the environment and the SDK pointed at a local server."""
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "test-id")
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "test-secret")

    def start(answer: Any) -> None:
        server = serve(answer)
        monkeypatch.setattr(command, "ENDPOINTS", {"alicloud": {"ecs": server.url}})

    return start


def test_refresh_writes_the_file_and_says_what_changed(run, project: Path, alibaba) -> None:
    alibaba(_alibaba())
    types = ("--instance-type", GN7I, "--instance-type", "ecs.gn8is.2xlarge")
    code, out, err = run("prices", "--stack", "alicloud-dev", "--cwd", str(project), *types)
    assert code == 0, err
    path = project / "prices" / "alicloud-cn-hangzhou.json"
    assert out.startswith(
        f"Wrote {path}: alicloud cn-hangzhou prices in CNY, 1 on-demand and 2 spot"
    )
    assert f"{GN7I} on-demand: unknown -> ¥10.50/h" in out  # against the catalog: unknown
    assert f"{GN7I} spot cn-hangzhou-j: unknown -> ¥2.60/h" in out
    assert "ecs.gn8is.2xlarge: no on-demand price (InvalidInstanceType.ValueNotSupported" in out
    written = price_file.read(path)
    assert written.on_demand == {GN7I: 10.5} and written.currency == "CNY"
    assert written.source.startswith("Alibaba Cloud ECS DescribePrice")

    alibaba(_alibaba(spot_j=3.0))
    before = path.read_text()
    code, out, _ = run(
        "prices", "--stack", "alicloud-dev", "--cwd", str(project), *types, "--dry-run"
    )
    assert code == 0 and out.startswith("Would write")
    assert f"{GN7I} spot cn-hangzhou-j: ¥2.60 -> ¥3.00/h" in out
    assert f"{GN7I} on-demand" not in out  # unchanged against the previous file
    assert path.read_text() == before  # dry run: nothing written

    code, out, _ = run("prices", "--stack", "alicloud-dev", "--cwd", str(project), *types)
    assert code == 0 and price_file.read(path).spot[GN7I]["cn-hangzhou-j"].per_hour == 3.0


def test_no_price_at_all_writes_nothing(run, project: Path, alibaba) -> None:
    alibaba(_alibaba(sold=False))
    code, _, err = run(
        "prices", "--stack", "alicloud-dev", "--cwd", str(project), "--instance-type", GN7I
    )
    assert code == 2 and "gave no price" in err and "nothing was changed" in err
    assert not (project / "prices").exists()


def test_preview_shows_the_refreshed_pool_price_with_source_and_date(
    run, project: Path, alibaba
) -> None:
    alibaba(_alibaba())
    assert run("prices", "-s", "alicloud-dev", "-C", str(project), "--instance-type", GN7I)[0] == 0
    price_file.set_folder(project / "prices")
    refreshed = price_file.read(project / "prices" / "alicloud-cn-hangzhou.json").refreshed
    code, out, err = run("preview", "--stack", "alicloud-dev", "--cwd", str(project))
    assert code == 0, err
    # The spot pool `small` (the first: the GPU-hours budget's): the highest current spot
    # price of the zones read, in CNY. `large`'s type was not refreshed: no price.
    assert (
        "Node price: gpuinfra-alicloud-dev-small-pool: ¥2.60/h per node (spot = current spot "
        "price ¥2.60/h in cn-hangzhou-j"
    ) in out
    assert "Node price: gpuinfra-alicloud-dev-large-pool: no price (`gpuinfra prices" in out
    assert f"source: Alibaba Cloud ECS DescribePrice (on-demand) and DescribeSpotPriceHistory (spot), read with the account's credentials (cn-hangzhou, refreshed {refreshed}); {refreshed[:10]}" in out  # fmt: skip
    total = next(line for line in out.splitlines() if line.startswith("total"))
    # Monthly: 100 GPU hours x ¥2.60 in CNY beside the ACK fee in USD, never added up.
    assert "at least ¥260.00 + $65.70 (4 unpriced)" in total
    code, out, _ = run("preview", "--stack", "alicloud-dev", "--cwd", str(project), "--json")
    cost = json.loads(out)["cost"]
    assert cost["currency"] == "CNY"
    assert cost["totalsByCurrency"]["CNY"]["monthly"] == pytest.approx(260.0)
    assert cost["totalsByCurrency"]["USD"]["monthly"] == pytest.approx(65.7)
    assert cost["totals"]["monthly"] == pytest.approx(260.0)  # the stack's currency only


def test_the_refresh_prices_every_gpu_pools_types() -> None:
    """Issue #20 with #21: a `gpuPools` stack names its types per entry, not in the flat
    `gpuPool*` keys; each pool's type and extra types are refreshed (catalog or not)."""
    _, _, _, types = command._stack(ROOT, "alicloud-dev")
    assert {"ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge", "ecs.gn7i-c32g1.32xlarge"} <= set(
        types
    )
