# ruff: noqa: E501  (long literal argument lists)
"""GPU sizing formula: bytes per parameter and activations, the assumed shape, which types
fit, FSDP when DDP does not, and bf16 only where the GPU has it."""

from __future__ import annotations

import pytest

from gpuinfra.sizing import (
    GIB,
    estimate_memory,
    fits,
    fsdp_per_gpu_gib,
    infer_shape,
    native_precision,
    recommendation,
    render,
    unsupported_models,
)

CLOUDS = ["aws", "alicloud", "tencentcloud"]


def test_model_states_are_16_bytes_per_parameter_with_adam() -> None:
    for precision in ("bf16", "fp32"):
        m = estimate_memory(1e9, precision)
        assert m.states_gib == pytest.approx(16e9 / GIB)


def test_activations_follow_korthikanti() -> None:
    m = estimate_memory(3e8, "bf16", micro_batch=2, seq_len=1024, layers=24, hidden=1024, heads=16)
    per_layer = 1024 * 2 * 1024 * (34 + 5 * 16 * 1024 / 1024)
    assert m.activations_gib == pytest.approx(24 * per_layer / GIB)
    checkpointed = estimate_memory(3e8, "bf16", micro_batch=2, seq_len=1024, layers=24, hidden=1024, checkpointing=True)  # fmt: skip
    assert checkpointed.activations_gib < m.activations_gib / 10


def test_fits_cheapest_first_and_respects_memory() -> None:
    small = fits(estimate_memory(1e8, "fp16", seq_len=512), ["aws"])
    assert small[0].instance_type == "g4dn.xlarge"  # cheapest 16 GB GPU (T4: fp16 is native)
    big = fits(estimate_memory(7e9, "bf16", checkpointing=True), ["aws"])
    assert all(f.gpu_count == 8 and f.mode == "FSDP" for f in big)
    assert all(f.per_gpu_gib <= f.gpu_memory_gb * 1e9 / GIB for f in big)


def test_7b_takes_the_usual_7b_shape_and_fits_with_fsdp() -> None:
    """Issue #25: 7e9 was assumed 52 layers x 3328 and nothing fitted; the usual 7B shape
    (32 x 4096, Llama 2 7B) fits on 8 x 80 GB with FSDP, and the output says so."""
    m = estimate_memory(7e9)
    assert (m.layers, m.hidden, m.heads) == (32, 4096, 32)
    assert "Llama 2 7B" in m.shape_source
    found = fits(m, CLOUDS)
    assert found and all(f.mode == "FSDP" for f in found)
    assert {f.instance_type for f in found} >= {"p4de.24xlarge", "p5.48xlarge"}
    assert recommendation(found).startswith("DDP does not fit on any GPU here: use FSDP")
    text = render(m, found, unsupported_models("bf16", CLOUDS))
    assert "assumed: the shape of Llama 2 7B" in text and "Recommendation: DDP does not fit" in text


def test_shapes_between_references_scale_from_the_nearest() -> None:
    layers, hidden, heads, source = infer_shape(30e9)  # nearest: Llama 2 13B (40 x 5120)
    assert "Llama 2 13B" in source and "scaled" in source
    assert hidden % 128 == 0 and heads == hidden // 128
    assert 12 * layers * hidden**2 == pytest.approx(30e9, rel=0.25)
    assert infer_shape(1.3e9)[:2] == (24, 2048)  # GPT-3 XL as is


def test_bf16_leaves_out_gpus_without_it() -> None:
    """Issue #25: with the default bf16, sizing recommended T4 and V100 (compute capability
    below 8.0, no native bf16)."""
    m = estimate_memory(1e8, "bf16", seq_len=512)
    models = {f.gpu_model for f in fits(m, CLOUDS)}
    assert not {x for x in models if x.startswith(("T4", "V100"))}
    assert unsupported_models("bf16", CLOUDS) == ["T4", "V100-16GB", "V100-32GB"]
    fp16 = {f.gpu_model for f in fits(estimate_memory(1e8, "fp16", seq_len=512), CLOUDS)}
    assert "T4" in fp16 and "V100-16GB" in fp16
    assert native_precision("bf16", "A10G") and not native_precision("bf16", "T4")
    assert not native_precision("bf16", "unknown-gpu")  # unknown capability: not assumed


def test_fsdp_saving_per_gpu_and_when_it_is_needed() -> None:
    m = estimate_memory(7e9, "bf16", checkpointing=True)
    # FSDP over 8 GPUs: an eighth of the model states, the activations, the same reserve rule
    eighth = m.states_gib / 8 + m.activations_gib
    assert fsdp_per_gpu_gib(m, 8) == pytest.approx(1.1 * eighth + 1)
    big = fits(m, ["aws"])
    assert big and all(f.mode == "FSDP" for f in big)
    for f in big:
        assert f.fsdp_saves_gib == pytest.approx(m.total_gib - f.per_gpu_gib, abs=0.01)
    text = render(m, big)
    assert "Recommendation: DDP does not fit on any GPU here: use FSDP" in text
    assert recommendation(big).endswith("the reference trainer runs it with --sharding fsdp.")
    assert "8 GPUs 15.89 GiB (saves 100.40)" in text
    assert "(FSDP saves 100.40 GiB/GPU)" in text
    small = estimate_memory(1e8, "bf16", seq_len=512)
    found = fits(small, ["aws"])
    assert found[0].mode == "DDP" and found[0].fsdp_saves_gib == 0.0  # one GPU: nothing to shard
    assert "Recommendation: DDP fits" in render(small, found)
    assert "sharded over the GPUs" in render(small, found)  # what it would save, all the same


def test_json_says_when_fsdp_is_needed_and_what_it_saves() -> None:
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "gpuinfra", "sizing", "--params", "7e9", "--checkpointing"]
    result = subprocess.run(
        [*cmd, "--cloud", "aws", "--json"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["fsdpNeeded"] is True
    assert doc["fsdpPerGpuGib"]["8"] == pytest.approx(15.89, abs=0.01)
    assert all(f["fsdp_saves_gib"] == pytest.approx(100.40, abs=0.01) for f in doc["fits"])
    assert "FSDP" in doc["formula"]


def test_bad_argument_exits_2_on_stderr() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "gpuinfra", "sizing", "--params", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "argument --params: '0': expected a number greater than 0" in result.stderr


def test_a_stacks_pools_say_which_holds_the_job() -> None:
    """dev: `small` (1 x A10G) cannot hold a 3B model, `large` (4 x A10G) can, sharded; the
    advice names the pool a training Job should choose."""
    from pathlib import Path

    from gpuinfra.sizing import pool_fits, pool_recommendation, render_pools, stack_pools

    root = Path(__file__).resolve().parents[2]
    pools = pool_fits(estimate_memory(3e9, "bf16", checkpointing=True), stack_pools(root, "dev"))
    assert [(p.pool, p.mode) for p in pools] == [("small", None), ("large", "FSDP")]
    assert "`pool: large`" in pool_recommendation(pools)
    assert "does not hold it" in render_pools("dev", pools)
    # A GPU-layer stack answers for its cluster stack's pools.
    layer = pool_fits(estimate_memory(1e8, "bf16"), stack_pools(root, "alicloud-dev-gpu"))
    assert [p.pool for p in layer] == ["small", "large"]
    assert all(p.mode == "DDP" for p in layer)


def test_clouds_compare_in_one_currency_only_with_a_dated_rate(tmp_path) -> None:
    """Issue #21: sizing compares the fitting types across the clouds, cheapest first; a CNY
    price (refreshed for cn-hangzhou) and USD prices are never ranked against each other
    without a rate, and with one they are, converted, with the rate and its date shown."""
    from gpuinfra.currency import parse_rate
    from gpuinfra.prices import file as price_file

    price_file.write(
        price_file.PriceFile("alicloud", "cn-hangzhou", "CNY", "2026-11-30T12:00:00Z", "test API",
                             {"ecs.gn7i-c8g1.2xlarge": 7.0}),
        price_file.path_for("alicloud", "cn-hangzhou", tmp_path),
    )  # fmt: skip
    price_file.set_folder(tmp_path)
    m = estimate_memory(1e8, "bf16", seq_len=512)
    apart = fits(m, ["aws", "alicloud"])
    priced = [f for f in apart if f.per_hour is not None]
    ali = next(f for f in priced if f.cloud == "alicloud")
    assert (ali.per_hour, ali.currency, ali.region, ali.price_date) == (
        7.0,
        "CNY",
        "cn-hangzhou",
        "2026-11-30",
    )
    # No rate: sorted within each currency (CNY rows, then USD rows), never ¥7 vs $1.
    assert [f.currency for f in priced] == sorted(f.currency for f in priced)
    text = render(m, apart)
    assert "¥7.00/h (cn-hangzhou, 2026-11-30)" in text and "never converted" in text
    rate = parse_rate("USD/CNY=7.0@2026-11-30")
    together = fits(m, ["aws", "alicloud"], "USD", rate)
    ranked = [f for f in together if f.compare_per_hour is not None]
    assert [f.compare_per_hour for f in ranked] == sorted(f.compare_per_hour for f in ranked)
    ali = next(f for f in ranked if f.cloud == "alicloud")
    assert ali.compare_per_hour == pytest.approx(1.0)  # ¥7.00 at 7 CNY per USD
    assert ranked[0].instance_type in ("g6.xlarge", "ecs.gn7i-c8g1.2xlarge")
    shown = render(m, together, None, "USD", rate)
    assert "converted at 1 USD = 7 CNY (2026-11-30)" in shown and "¥7.00/h = $1.00/h" in shown
