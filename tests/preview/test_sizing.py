# ruff: noqa: E501  (long literal argument lists)
"""GPU sizing formula: bytes per parameter and activations, and which types fit."""

from __future__ import annotations

import pytest

from gpuinfra.sizing import GIB, estimate_memory, fits


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
