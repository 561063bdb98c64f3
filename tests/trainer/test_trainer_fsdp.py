"""FSDP over two CPU processes (gloo, under ``trainer.launch``) with sharded (DCP) checkpoints.

* Killed (SIGKILL of the whole process tree), then preempted (SIGTERM) with a corrupt shard
  in its newest checkpoint, then resumed to the end on the same two processes: bit-identical
  to an uninterrupted run (weights, optimizer, schedule, RNG, every step's loss).
* Resumed on one process (2 -> 1), and from one process onto two through ``s3://`` (1 -> 2,
  with batches of 2 in two accumulation rounds): at the same step, on the same samples (the
  global batch of 8 is kept by accumulation rounds), and every later step's loss within
  :data:`LOSS_TOLERANCE` of the uninterrupted run.

Why that tolerance: with another number of processes the same samples' gradients are summed
in another order (an all-reduce of two halves against two accumulation rounds), so fp32
results differ in their last bits. Measured on this model over 16 steps, the global-batch
losses of 2 x 4, 1 x 4 x 2 rounds and 1 x 8 (FSDP and DDP) agree to 1e-6. A step on other
samples, or one step further on, changes the loss by 1e-3 or more here (asserted below), so
1e-4 is a hundred times the rounding and ten times below any misplaced resume.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from killing import kill_tree, running, sigkill_at_step
from object_stores import BUCKET, RecordingMoto
from trainer_testlib import (
    REPO,
    assert_same,
    gpt_args,
    launch_cmd,
    load_final,
    load_sharded,
    logged_losses,
    run_inprocess,
    stop_at,
    subprocess_env,
)

from trainer import exit_codes
from trainer.checkpoint import step_dir
from trainer.data import DataSource, step_samples

TOTAL = 12  # steps: 1.5 epochs of 8
EVERY = ("--checkpoint-every-steps=2", "--async-checkpoint", "--keep-last=3", "--no-tensorboard")
KILLED = -signal.SIGKILL
LOSS_TOLERANCE = 1e-4
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


@dataclass
class Reference:
    """The uninterrupted two-process run, started once for this file and run alongside."""

    root: str
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        """Its stderr, once it has finished (with exit 0)."""
        self.proc.wait(timeout=300)
        text = self.log_path.read_text()
        assert self.proc.returncode == exit_codes.OK, text[-3000:]
        return text


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    tmp = tmp_path_factory.mktemp("fsdp-reference")
    root = str(tmp / "run")
    env = subprocess_env(TMPDIR=str(tmp), **ONE_THREAD)
    log_path = tmp / "uninterrupted.log"
    with open(log_path, "w") as err:
        proc = subprocess.Popen(
            launch_cmd(*gpt_args(root, *EVERY, steps=TOTAL)), cwd=REPO, env=env, stderr=err
        )
    ref = Reference(root, proc, log_path)
    try:
        yield ref
    finally:
        if proc.poll() is None:  # a test failed before waiting for it: leave nothing behind
            kill_tree(proc.pid)
            proc.wait()


def _complete_steps(root: str) -> list[int]:
    folder = Path(root, "checkpoints")
    if not folder.is_dir():
        return []
    return sorted(int(d.name[5:]) for d in folder.glob("step_*") if (d / "manifest.json").is_file())


def _sigterm_after(cmd: list[str], step: int, env: dict[str, str]) -> tuple[int, str]:
    """Start ``cmd``; SIGTERM the launcher (as the kubelet does PID 1) once it logs ``step``."""
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if re.search(rf"\bstep {step}/", line):
                proc.send_signal(signal.SIGTERM)
                break
        rest = proc.communicate(timeout=180)[1]
    finally:
        if proc.poll() is None:
            kill_tree(proc.pid)
            proc.wait()
    return proc.returncode, "".join(lines) + rest


def _emergency_step(log: str) -> int:
    m = re.search(r"emergency checkpoint of step (\d+) took", log)
    assert m, log[-3000:]
    return int(m[1])


def test_fsdp_killed_and_preempted_then_resumed_is_bit_identical(
    tmp_path: Path, reference: Reference
) -> None:
    root = str(tmp_path / "run")
    env = subprocess_env(TMPDIR=str(tmp_path), **ONE_THREAD)
    args = gpt_args(root, *EVERY, steps=TOTAL)

    # 1. A node dies: the launcher, torchrun and both workers at once, maybe mid-write.
    killed = sigkill_at_step(launch_cmd(*args), 5, tree=True, env=env, timeout=180)
    assert killed.returncode == KILLED, killed.log[-3000:]
    deadline = time.monotonic() + 10
    while any(map(running, killed.pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(running, killed.pids)), killed.pids
    done = _complete_steps(root)
    assert done and all(s % 2 == 0 and s <= killed.last_logged_step for s in done), done
    assert not Path(root, "final").exists()

    # 2. One byte of rank 1's shard of the newest checkpoint rots: the ranks' verification
    #    (each hashes a share of the files) must refuse it and fall back to the one before.
    newest = done[-1]
    shard = Path(root, step_dir(newest), "__1_0.distcp")
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    back_to = done[-2] if len(done) > 1 else 0

    # 3. The retry is preempted: SIGTERM to the launcher a few steps on.
    code, log = _sigterm_after(launch_cmd(*args), back_to + 3, env)
    assert code == exit_codes.PREEMPTED, log[-3000:]
    assert "workers [75, 75] -> exit 75" in log, log[-3000:]
    skipped = f"skipping checkpoint {root}/{step_dir(newest)}: sha256 mismatch in __1_0.distcp"
    assert skipped in log, log[-3000:]
    for rank in (0, 1):
        resumed = f"[trainer rank{rank}] INFO resumed from checkpoint step {back_to} "
        assert resumed in log or back_to == 0, log[-3000:]
    preempted_at = _emergency_step(log)
    manifest = json.loads(Path(root, step_dir(preempted_at), "manifest.json").read_text())
    assert manifest["reason"] == "preempted" and manifest["world_size"] == 2
    assert {"__0_0.distcp", "__1_0.distcp", ".metadata", "trainer.pt"} <= set(manifest["files"])

    # 4. The next retry runs to the end.
    last = subprocess.run(
        launch_cmd(*args), cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert last.returncode == exit_codes.OK, last.stderr[-3000:]
    assert "workers [0, 0] -> exit 0" in last.stderr
    for rank in (0, 1):
        resumed = f"[trainer rank{rank}] INFO resumed from checkpoint step {preempted_at} "
        assert resumed in last.stderr, last.stderr[-3000:]

    ref_log = reference.log()
    assert_same(load_final(reference.root), load_final(root), "final weights")
    ref_state = load_sharded(reference.root, TOTAL, str(tmp_path))
    state = load_sharded(root, TOTAL, str(tmp_path))
    assert_same(ref_state["dcp"], state["dcp"], "model and optimizer shards")
    assert_same(ref_state["trainer"], state["trainer"], "schedule, RNG, data position, meta")
    assert state["trainer"]["meta"]["world_size"] == 2 and len(state["trainer"]["rng"]) == 2
    # every step's loss, as the three processes logged them (a repeated step: its last run)
    pieces = {**logged_losses(killed.log), **logged_losses(log), **logged_losses(last.stderr)}
    assert pieces == logged_losses(ref_log)
    assert sorted(pieces) == list(range(1, TOTAL + 1))


def _record_samples(monkeypatch: pytest.MonkeyPatch) -> dict[int, set[int]]:
    """Sample indices each global step trains on in this process, as the data source hands
    them to the loop."""
    used: dict[int, set[int]] = {}
    original = DataSource.index_steps

    def recording(self: DataSource, epoch: int, start: int) -> list[list[torch.Tensor]]:
        steps = original(self, epoch, start)
        for i, micro in enumerate(steps):
            step = epoch * self.steps_per_epoch + start + i + 1
            used[step] = {int(j) for mb in micro for j in mb}
        return steps

    monkeypatch.setattr(DataSource, "index_steps", recording)
    return used


def _close(losses: dict[int, float], ref: dict[int, float], steps: range) -> None:
    for k in steps:
        assert abs(losses[k] - ref[k]) <= LOSS_TOLERANCE, (k, losses[k], ref[k])


def _weights_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert set(a) == set(b)
    for k in a:
        assert torch.allclose(a[k], b[k], rtol=0, atol=LOSS_TOLERANCE), k


def test_fsdp_resumes_on_one_process_and_back_onto_two_with_the_same_global_batch(
    tmp_path: Path,
    reference: Reference,
    trainer_log: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    moto_s3: RecordingMoto,
    clean_cloud_env: None,
) -> None:
    env = subprocess_env(TMPDIR=str(tmp_path), **ONE_THREAD)
    ref_losses = logged_losses(reference.log())
    ref_final = load_final(reference.root)
    # The tolerance can tell steps apart: neighbouring steps' losses differ by far more.
    assert min(abs(ref_losses[k + 1] - ref_losses[k]) for k in range(1, TOTAL)) > 1e-3

    # ---- 2 -> 1: two processes preempted, the retry gets one (batch 4 x 2 rounds)
    root = str(tmp_path / "two-to-one")
    args = gpt_args(root, *EVERY, steps=TOTAL)
    code, log = _sigterm_after(launch_cmd(*args), 3, env)
    assert code == exit_codes.PREEMPTED, log[-3000:]
    at = _emergency_step(log)
    used = _record_samples(monkeypatch)
    seen: list[int] = []
    trainer_log.clear()
    assert run_inprocess(args, hook=lambda t, s: seen.append(s)) == exit_codes.OK
    assert seen == list(range(at + 1, TOTAL + 1))
    messages = "\n".join(r.getMessage() for r in trainer_log.records)
    assert (
        "written by 2 process(es) of batch 4 x 1 round(s); this run has 1 of batch 4 x 2 "
        f"round(s): the same global batch, so the data position maps exactly (step {at}, "
        f"{8 * at} samples seen)"
    ) in messages, messages[-3000:]
    for k in seen:  # the samples the two processes would have trained on at that step
        epoch, in_epoch = divmod(k - 1, 8)
        assert used[k] == step_samples(64, 0, epoch, 8, in_epoch), k
    _close(logged_losses(messages), ref_losses, range(at + 1, TOTAL + 1))
    _weights_close(load_final(root), ref_final)

    # ---- 1 -> 2 through s3://: one process preempted, the retry gets two
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "STORAGE_REGION": "us-east-1",
        "STORAGE_ENDPOINT_URL": moto_s3.ip_url,
    }.items():
        monkeypatch.setenv(name, value)
    uri = f"s3://{BUCKET}/one-to-two"
    args = gpt_args(uri, *EVERY, f"--staging-dir={tmp_path / 'stage'}", steps=TOTAL)
    assert run_inprocess(args, hook=stop_at(3)) == exit_codes.PREEMPTED
    # batches of 2 on two processes: 2 rounds, the first without FSDP's gradient reduction
    args = gpt_args(uri, *EVERY, f"--staging-dir={tmp_path / 'stage'}", steps=TOTAL, batch=2)
    resumed = subprocess.run(
        launch_cmd(*args),
        cwd=REPO,
        env=subprocess_env(TMPDIR=str(tmp_path), **ONE_THREAD),
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = resumed.stderr
    assert resumed.returncode == exit_codes.OK, log[-3000:]
    assert (
        "written by 1 process(es) of batch 4 x 2 round(s); this run has 2 of batch 2 x 2 "
        "round(s): the same global batch, so the data position maps exactly (step 3, 24 "
        "samples seen)"
    ) in log, log[-3000:]
    for rank in (0, 1):
        assert f"[trainer rank{rank}] INFO resumed from checkpoint step 3 " in log
    _close(logged_losses(log), ref_losses, range(4, TOTAL + 1))
    # each rank wrote its own shard to the bucket; the manifest has every object's digest
    admin: Any = moto_s3.admin  # type: ignore[attr-defined]
    prefix = f"one-to-two/{step_dir(TOTAL)}/"
    listed = admin.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]
    objects = {o["Key"][len(prefix) :] for o in listed}
    assert {"__0_0.distcp", "__1_0.distcp", ".metadata", "trainer.pt", "manifest.json"} <= objects
    manifest = json.loads(
        admin.get_object(Bucket=BUCKET, Key=prefix + "manifest.json")["Body"].read()
    )
    assert manifest["world_size"] == 2
    for name, entry in manifest["files"].items():
        body = admin.get_object(Bucket=BUCKET, Key=prefix + name)["Body"].read()
        assert entry == {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}, name
    final = admin.get_object(Bucket=BUCKET, Key="one-to-two/final/model.pt")["Body"].read()
    path = tmp_path / "final.pt"
    path.write_bytes(final)
    _weights_close(torch.load(path, weights_only=True), ref_final)
