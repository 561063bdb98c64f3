"""Shared fixtures: a shipped stack plus overrides, built under the mock engine."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from components.settings import load_settings
from gpuinfra.engine import Plan, StackOutputs, run_program
from gpuinfra.preview import referenced_stacks
from gpuinfra.project import engine_text, load_project, load_stack_config
from stacks import build_stack

pytest_plugins = ["tests.fake_http"]  # the `serve` fixture: local fake HTTP servers

ROOT = Path(__file__).resolve().parent.parent

BuildStack = Callable[..., Plan]


def stack_config(stack: str, overrides: Mapping[str, object] | None = None) -> dict[str, str]:
    """A shipped stack's config with some `gpuinfra:` keys replaced (None removes a key)."""
    config = dict(load_stack_config(load_project(ROOT), stack).values)
    for key, value in (overrides or {}).items():
        qualified = key if ":" in key else f"gpuinfra:{key}"
        if value is None:
            config.pop(qualified, None)
        else:
            config[qualified] = engine_text(value)
    return config


def flat_pool(stack: str, overrides: Mapping[str, object] | None = None) -> dict[str, object]:
    """Overrides that turn `stack` into a single-pool stack file of the flat `gpuPool*` keys
    (as stack files were before `gpuPools`): its first pool, then `overrides`."""
    from components.settings.gpu_pools import LEGACY_KEYS, LIST_KEY

    config = dict(load_stack_config(load_project(ROOT), stack).values)
    first = json.loads(config[f"gpuinfra:{LIST_KEY}"])[0]
    flat: dict[str, object] = {LIST_KEY: None}
    flat.update({key: first[field] for field, key in LEGACY_KEYS.items() if field in first})
    flat.update(overrides or {})
    return flat


def flat_if_pool_keys(stack: str, overrides: Mapping[str, object] | None) -> dict[str, object]:
    """`overrides` as they are, or, where they set a flat per-pool key (`gpuPoolSpotMaxPrice`,
    ...), on top of `stack` turned into its single-pool form (`flat_pool`): a test of a flat
    key tests the single-pool stack file it belongs to."""
    from components.settings.gpu_pools import LEGACY_KEYS

    if overrides and set(LEGACY_KEYS.values()) & set(overrides):
        return flat_pool(stack, overrides)
    return dict(overrides or {})


def build(stack: str = "dev", overrides: Mapping[str, object] | None = None) -> Plan:
    """The stack's plan; a `clusterStack` it names is previewed first (shipped config)."""
    config = stack_config(stack, overrides)
    return run_program(
        lambda: build_stack(load_settings()),
        project="gpuinfra",
        stack=stack,
        config=config,
        stack_references=referenced_stacks(ROOT, config),
    )


def gpu_layer_plan(
    stack: str,
    overrides: Mapping[str, object] | None = None,
    layer: Mapping[str, object] | None = None,
) -> Plan:
    """The plan that holds `stack`'s GPU layer: the stack's own, or, where it sets
    `gpuLayer: separate`, that of a `cloud: kubernetes` stack naming it in `clusterStack`
    (with `layer` config: trainingJobs, devicePlugin, ...)."""
    config = stack_config(stack, overrides)
    if config.get("gpuinfra:gpuLayer") != "separate":
        return build(stack, {**(overrides or {}), **(layer or {})})
    cluster = run_program(
        lambda: build_stack(load_settings()), project="gpuinfra", stack=stack, config=config
    )
    name = f"organization/gpuinfra/{stack}"
    layer_config = {
        "gpuinfra:cloud": "kubernetes",
        "gpuinfra:kubernetesVersion": config.get("gpuinfra:kubernetesVersion", "1.35"),
        "gpuinfra:clusterStack": name,
        **{f"gpuinfra:{k}": engine_text(v) for k, v in (layer or {}).items()},
    }
    return run_program(
        lambda: build_stack(load_settings()),
        project="gpuinfra",
        stack=f"{stack}-gpu",
        config=layer_config,
        stack_references={name: StackOutputs(cluster.outputs, frozenset(cluster.secret_outputs))},
    )


@pytest.fixture(scope="session")
def dev_plan() -> Plan:
    return build("dev")


@pytest.fixture(scope="session")
def prod_plan() -> Plan:
    return build("prod")


@pytest.fixture
def build_stack_plan() -> BuildStack:
    return build


@pytest.fixture(autouse=True)
def _no_refreshed_prices(tmp_path_factory: pytest.TempPathFactory):
    """Estimates and sizing read refreshed price files (`gpuinfra prices`) from the project's
    `prices/`; tests read none unless they write their own (`gpuinfra.prices.file.set_folder`),
    so a developer's refresh never changes a test's figures."""
    from gpuinfra.prices import file as price_file

    price_file.set_folder(tmp_path_factory.mktemp("no-prices"))
    yield
    price_file.set_folder(None)


# The longest test files (each several minutes of one core: FSDP and DCP runs with real
# processes, the workstation's services installed into a venv, killed and signalled
# trainers). Under `--dist loadfile` a file runs whole on one worker, in collection order, so
# these start first, longest first, instead of becoming a long tail on one core.
LONGEST_FILES = (
    "tests/workstation/test_services_local.py",
    "tests/trainer/test_trainer_fsdp.py",
    "tests/trainer/test_trainer_sharded.py",
    "tests/trainer/test_trainer_sigkill.py",
    "tests/trainer/test_trainer_signals.py",
    "tests/kubernetes/test_kueue.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return LONGEST_FILES.index(path) if path in LONGEST_FILES else len(LONGEST_FILES)

    items.sort(key=rank)  # stable: every other file keeps its order
