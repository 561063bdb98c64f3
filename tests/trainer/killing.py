"""SIGKILL for the trainer tests: at a logged step, or of a whole process tree (a pod kill)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass

from trainer_testlib import REPO, subprocess_env

STEP_LINE = re.compile(r"\bstep (\d+)/\d+ ")


@dataclass
class Killed:
    """How a started process ended: its return code, the last step it logged, its stderr."""

    returncode: int
    last_logged_step: int
    log: str
    pids: list[int]


def children(pid: int) -> list[int]:
    """PIDs whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # comm may hold spaces and parentheses
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(int(entry))
    return out


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, parents first."""
    tree, i = [pid], 0
    while i < len(tree):
        tree += children(tree[i])
        i += 1
    return tree


def kill_tree(pid: int) -> list[int]:
    """SIGKILL ``pid`` and every descendant at once, as a container runtime kills a pod.

    torchrun starts each worker in a session of its own, so killing the launcher's process
    group alone would leave the workers training. The tree is first frozen with SIGSTOP
    (repeatedly, until no new child appears) so that no process notices the others dying.
    """
    frozen: list[int] = []
    while True:
        tree = [p for p in process_tree(pid) if p not in frozen]
        if not tree:
            break
        for p in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGSTOP)
        frozen += tree
    for p in frozen:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    return frozen


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def sigkill_at_step(
    cmd: list[str],
    step: int,
    *,
    tree: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> Killed:
    """Start ``cmd``; SIGKILL it as soon as it logs a step >= ``step`` (``--log-every-steps=1``).

    The process keeps running while the line travels through the pipe, so it may die a step or
    two later and in any phase (inside a checkpoint write too); the tests check the outcome,
    which must not depend on that.
    """
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env if env is not None else subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        start_new_session=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    last, pids = 0, [proc.pid]
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break  # exited before the step: the caller sees a return code other than -9
            lines.append(line)
            m = STEP_LINE.search(line)
            if m:
                last = max(last, int(m[1]))
                if last >= step:
                    if tree:
                        pids = kill_tree(proc.pid)
                    else:
                        proc.send_signal(signal.SIGKILL)
                    break
        rest = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[1]
    finally:
        if proc.poll() is None:
            kill_tree(proc.pid)
            proc.wait()
    log = "".join(lines) + (rest or "")
    last = max([0, *(int(m[1]) for m in STEP_LINE.finditer(log))])
    return Killed(proc.returncode, last, log, pids)
