"""``python -m trainer``: parse arguments, run, map outcomes to documented exit codes."""

from __future__ import annotations

import logging
import os
import sys

from trainer import exit_codes
from trainer.errors import UserError

log = logging.getLogger("trainer")


def setup_logging() -> None:
    """One line per record on stderr, tagged with the rank."""
    rank = os.environ.get("RANK", "0")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(f"%(asctime)s [trainer rank{rank}] %(levelname)s %(message)s")
    )
    root = logging.getLogger("trainer")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False


def _report_exit(code: int) -> None:
    """Leave this worker's exit code where ``trainer.launch`` collects it (under torchrun)."""
    status_dir = os.environ.get("TRAINER_EXIT_STATUS_DIR")
    if not status_dir:
        return
    rank = os.environ.get("RANK", "0")
    local_world = os.environ.get("LOCAL_WORLD_SIZE", "1")
    try:
        path = os.path.join(status_dir, f"rank-{rank}")
        with open(path + ".tmp", "w") as f:
            f.write(f"{code} {local_world}\n")
        os.replace(path + ".tmp", path)
    except OSError as e:  # never let bookkeeping change the outcome
        log.warning("could not record exit status in %s: %s", status_dir, e)


def main(argv: list[str] | None = None) -> int:
    """Run the trainer; return the process exit code (see :mod:`trainer.exit_codes`)."""
    setup_logging()
    code = exit_codes.UNEXPECTED_ERROR
    try:
        from trainer.config import parse_args

        cfg = parse_args(argv)
        from trainer.train import run

        code = run(cfg)
    except UserError as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"trainer: error: {msg}", file=sys.stderr, flush=True)
        code = exit_codes.USER_ERROR
    except KeyboardInterrupt:
        log.error("interrupted")
        code = exit_codes.UNEXPECTED_ERROR
    except SystemExit as e:  # --help
        code = e.code if isinstance(e.code, int) else exit_codes.OK
    except BaseException:
        log.exception("unexpected error")
        code = exit_codes.UNEXPECTED_ERROR
    finally:
        _report_exit(code)
    return code
