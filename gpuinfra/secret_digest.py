"""Keyed digests of secret inputs, so a plan diff sees a changed secret without showing it.

The JSON plan prints secret inputs as `[secret]`; two plans would then always look equal. A
plain hash would let anyone with the PR artifact test guesses of a short secret, so the
digest is an HMAC under a key that never leaves the machine: `GPUINFRA_PLAN_DIGEST_KEY`, or a
random key kept in the user's cache directory (created once, mode 0600). Plans compared on
one machine (as the preview workflow does with the base and head plans) share that key;
plans from different machines show every secret as changed, which errs on the safe side.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

KEY_ENV = "GPUINFRA_PLAN_DIGEST_KEY"


def _key_file() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "gpuinfra" / "plan-digest-key"


def _key() -> bytes:
    given = os.environ.get(KEY_ENV)
    if given:
        return given.encode()
    path = _key_file()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key
    except OSError:
        return secrets.token_bytes(32)  # no cache: digests differ from any other run's


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    mac = hmac.new(_key(), text.encode(), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{mac[:32]}"
