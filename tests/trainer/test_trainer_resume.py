"""Exact resume: an interrupted and resumed run ends with bit-identical weights."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from trainer_testlib import (
    assert_same,
    checkpoint_steps,
    load_final,
    load_state,
    run_inprocess,
    stop_at,
    tiny_args,
)

from trainer import exit_codes


def test_interrupted_and_resumed_run_is_bit_identical(tmp_path: Path) -> None:
    full, parted, other = (str(tmp_path / n) for n in ("full", "parted", "other"))
    # 10 steps = 2.5 epochs of 4 steps; dropout makes the RNG state matter.
    assert run_inprocess(tiny_args(full, steps=10)) == exit_codes.OK

    # Stopped after step 6 (mid-epoch 1) as on SIGTERM: emergency checkpoint, PREEMPTED.
    assert run_inprocess(tiny_args(parted, steps=10), hook=stop_at(6)) == exit_codes.PREEMPTED
    assert checkpoint_steps(parted) == [6]
    state = load_state(parted, 6)
    assert (state["epoch"], state["batch_in_epoch"]) == (1, 2)
    assert not os.path.exists(os.path.join(parted, "final"))

    seen: list[int] = []
    assert run_inprocess(tiny_args(parted, steps=10), hook=lambda t, s: seen.append(s)) == 0
    assert seen == [7, 8, 9, 10]  # continued where it stopped, nothing repeated or skipped

    assert_same(load_final(full), load_final(parted))
    assert_same(load_state(full, 10), load_state(parted, 10))

    # The comparison is not vacuous: another seed gives other weights.
    assert run_inprocess(tiny_args(other, "--seed=1", steps=10)) == 0
    with pytest.raises(AssertionError):
        assert_same(load_final(full), load_final(other))


def test_assert_same_detects_differences() -> None:
    a = {"w": torch.ones(3), "n": [1, 2.5]}
    assert_same(a, {"w": torch.ones(3), "n": [1, 2.5]})
    for b in (
        {"w": torch.tensor([1.0, 1.0, 1.0 + 2**-20]), "n": [1, 2.5]},
        {"w": torch.ones(3), "n": [1, 2.25]},
        {"w": torch.ones(3, dtype=torch.float64), "n": [1, 2.5]},
        {"w": torch.ones(3)},
    ):
        with pytest.raises(AssertionError):
            assert_same(a, b)
