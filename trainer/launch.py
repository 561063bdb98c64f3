"""``python -m trainer.launch [torchrun options] -m trainer [trainer options]``: torchrun that
keeps the workers' exit codes.

Why: ``torchrun`` exits 1 whenever a worker fails and, when it receives SIGTERM itself, forwards
it and SIGKILLs the workers after ``--shutdown-timeout`` (30 s by default), which can cut an
emergency checkpoint short. This wrapper, meant to be the container's PID 1:

* starts ``python -m torch.distributed.run`` with the given arguments;
* on SIGTERM/SIGINT sends the signal straight to the worker processes (torchrun's children),
  not to torchrun, so the workers finish their step and checkpoint with no external deadline
  other than the pod's ``terminationGracePeriodSeconds``;
* exits with the most severe exit code the workers recorded (see :mod:`trainer.exit_codes`),
  e.g. 75 after a preemption with a checkpoint written, 64 after a user error.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from types import FrameType

from trainer import exit_codes


def _children(pid: int) -> list[int]:
    """PIDs whose parent is ``pid`` (Linux /proc)."""
    out: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may contain spaces/parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(int(entry))
    return out


def collect_codes(status_dir: str) -> tuple[list[int], int | None]:
    """Exit codes the workers recorded, and the local world size they reported."""
    codes: list[int] = []
    local_world: int | None = None
    for name in sorted(os.listdir(status_dir)):
        if not name.startswith("rank-") or name.endswith(".tmp"):
            continue
        try:
            with open(os.path.join(status_dir, name)) as f:
                code_s, world_s = f.read().split()
            codes.append(int(code_s))
            local_world = int(world_s)
        except (OSError, ValueError):
            continue
    return codes, local_world


def final_code(torchrun_rc: int, codes: list[int], local_world: int | None) -> int:
    """The container's exit code from torchrun's and the workers' codes."""
    if torchrun_rc < 0:  # torchrun itself died of a signal
        torchrun_rc = 128 - torchrun_rc
    if not codes:
        return torchrun_rc
    if local_world is not None and len(codes) < local_world:
        # a worker died without recording (SIGKILL, OOM): a failure, whatever the others said
        codes = [*codes, torchrun_rc or exit_codes.UNEXPECTED_ERROR]
    return exit_codes.combine(codes)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    status_dir = tempfile.mkdtemp(prefix="trainer-exit-")
    env = dict(os.environ, TRAINER_EXIT_STATUS_DIR=status_dir)
    proc = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", *args], env=env)

    def forward(signum: int, frame: FrameType | None) -> None:
        workers = _children(proc.pid)
        targets = workers or [proc.pid]
        print(
            f"trainer.launch: {signal.Signals(signum).name} -> worker pids {targets}",
            file=sys.stderr,
            flush=True,
        )
        for pid in targets:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    try:
        # A signal during the wait runs `forward`; the wait itself is retried (PEP 475).
        rc = proc.wait()
        codes, local_world = collect_codes(status_dir)
    finally:
        shutil.rmtree(status_dir, ignore_errors=True)
    code = final_code(rc, codes, local_world)
    print(
        f"trainer.launch: torchrun exited {rc}, workers {codes} -> exit {code} "
        f"({exit_codes.NAMES.get(code, '?')})",
        file=sys.stderr,
        flush=True,
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
