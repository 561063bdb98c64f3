"""Upstream manifests vendored as data files (components/kubernetes/vendor/), read at run time.

Each file's header says where it came from; its sha256 is pinned in the module that reads it,
so an edited file fails loudly instead of installing something nobody reviewed.
"""

from __future__ import annotations

import copy
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import yaml

VENDOR = Path(__file__).resolve().parent / "vendor"


class VendoredManifestError(RuntimeError):
    """A vendored manifest is not the file its header describes."""


@cache
def _text(path: Path, sha256: str) -> str:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise VendoredManifestError(
            f"{path} has sha256 {digest}, not {sha256}: it was edited; restore it (git "
            "checkout), or vendor a new release and update the pinned sha256"
        )
    return data.decode()


@cache
def _parsed(path: Path, sha256: str) -> tuple[dict[str, Any], ...]:
    # libyaml's loader where PyYAML has it: Kueue's release is 30k lines, which the pure-Python
    # loader takes seconds to read; parsed once per process.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(doc for doc in yaml.load_all(_text(path, sha256), Loader=loader) if doc)


def vendored_objects(name: str, sha256: str) -> list[dict[str, Any]]:
    """Every object of `vendor/<name>`, in file order (a fresh copy each call: callers adapt
    them)."""
    return copy.deepcopy(list(_parsed(VENDOR / name, sha256)))
