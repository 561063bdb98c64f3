"""Exact resume: an interrupted and resumed run ends with bit-identical weights."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from trainer_testlib import (
    assert_same,
    checkpoint_steps,
    gpt_args,
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


def test_gradient_accumulation_resumes_bit_identically_and_matches_one_big_batch(
    tmp_path: Path,
) -> None:
    """--global-batch-size 16 from batches of 8: two accumulation rounds per step. Stopped and
    resumed it is bit-identical. Against one batch of 16 (the same samples per step; the GPT,
    which has no dropout to draw differently) the weights differ only by the order of sums."""
    full, parted = str(tmp_path / "full"), str(tmp_path / "parted")
    accum = ("--global-batch-size=16", "--synthetic-samples=64")
    assert run_inprocess(tiny_args(full, *accum, steps=6)) == exit_codes.OK
    assert run_inprocess(tiny_args(parted, *accum, steps=6), hook=stop_at(3)) == 75
    state = load_state(parted, 3)
    assert state["meta"]["accumulation"] == 2 and state["meta"]["global_batch"] == 16
    assert state["samples_seen"] == 48
    seen: list[int] = []
    assert run_inprocess(tiny_args(parted, *accum, steps=6), lambda t, s: seen.append(s)) == 0
    assert seen == [4, 5, 6]
    assert_same(load_state(full, 6), load_state(parted, 6))

    rounds, one = str(tmp_path / "rounds"), str(tmp_path / "one")
    assert run_inprocess(gpt_args(rounds, "--no-tensorboard", steps=6, batch=2)) == 0
    assert run_inprocess(gpt_args(one, "--no-tensorboard", steps=6, batch=8)) == 0
    a, b = load_final(rounds), load_final(one)
    assert all(torch.allclose(a[k], b[k], rtol=0, atol=1e-5) for k in a)
    assert any(not torch.equal(a[k], b[k]) for k in a)  # another order of sums, not the same
