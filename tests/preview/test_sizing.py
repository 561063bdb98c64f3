# ruff: noqa: E501  (long literal argument lists)
"""GPU sizing formula: bytes per parameter and activations, and which types fit."""

from __future__ import annotations

import pytest

from gpuinfra.sizing import GIB, estimate_memory, fits, fsdp_per_gpu_gib, render


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
    small = fits(estimate_memory(1e8, "bf16", seq_len=512), ["aws"])
    assert small[0].instance_type == "g4dn.xlarge"  # cheapest 16 GB GPU
    big = fits(estimate_memory(7e9, "bf16", checkpointing=True), ["aws"])
    assert all(f.gpu_count == 8 and f.mode == "FSDP" for f in big)
    assert all(f.per_gpu_gib <= f.gpu_memory_gb * 1e9 / GIB for f in big)


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
    assert "FSDP is needed: no GPU of the catalog holds the 116.47 GiB" in text
    assert "8 GPUs 16.07 GiB (saves 100.40)" in text
    assert "(FSDP saves 100.40 GiB/GPU)" in text
    small = estimate_memory(1e8, "bf16", seq_len=512)
    found = fits(small, ["aws"])
    assert found[0].mode == "DDP" and found[0].fsdp_saves_gib == 0.0  # one GPU: nothing to shard
    assert "FSDP is needed" not in render(small, found)
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
    assert doc["fsdpPerGpuGib"]["8"] == pytest.approx(16.07, abs=0.01)
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
