"""The reference trainer's checkpoint flags, as they appear in a training Job's arguments.

Read by the preemption estimate and the policy rules; the flags themselves are defined in
trainer/config.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

INTERVAL_FLAG = "--checkpoint-every-seconds"
STEPS_FLAG = "--checkpoint-every-steps"


def flag_value(args: Sequence[str] | None, flag: str) -> str | None:
    """The last value given for `flag` (`--flag=value` or `--flag value`), as argparse reads."""
    found: str | None = None
    for i, arg in enumerate(args or ()):
        if arg.startswith(flag + "="):
            found = arg.split("=", 1)[1]
        elif arg == flag and i + 1 < len(args or ()):
            found = (args or ())[i + 1]
    return found


def _positive(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and number > 0 else None


def checkpoint_interval(args: Sequence[str] | None) -> float | None:
    """Seconds between periodic checkpoints; None when the arguments set none."""
    return _positive(flag_value(args, INTERVAL_FLAG))


def checkpoints_periodically(args: Sequence[str] | None) -> bool:
    return (
        checkpoint_interval(args) is not None or _positive(flag_value(args, STEPS_FLAG)) is not None
    )


def pod_arguments(pod: Mapping[str, Any]) -> list[str]:
    """Every container's command and args, in order: where the trainer's flags can be."""
    found: list[str] = []
    for container in pod.get("containers") or []:
        found += [str(a) for a in container.get("command") or []]
        found += [str(a) for a in container.get("args") or []]
    return found
