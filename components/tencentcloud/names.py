"""Tencent names that fit the provider's limits for every valid `namePrefix`.

Settings allow a `namePrefix` of up to 32 characters; some Tencent names allow fewer (a CVM
key pair: 25 letters, digits and underscores). Such a name keeps its start and ends in a
short hash of the whole, so it stays the same from one `pulumi up` to the next and two long
prefixes that share a start still get different names.
"""

from __future__ import annotations

import hashlib
import re

KEY_PAIR_NAME_MAX = 25
"""terraform-provider-tencentcloud@v1.82.42 tencentcloud/common/validators.go:119-130
(`ValidateKeyPairName`: 1 to 25 characters of `[a-zA-Z0-9_]`)."""
_KEY_PAIR_CHARS = re.compile(r"[^a-zA-Z0-9_]")
_HASH_LENGTH = 6


def fit_name(name: str, limit: int) -> str:
    """`name` itself when it fits in `limit` characters, else its start, `_` and a hash."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH_LENGTH]
    return f"{name[: limit - _HASH_LENGTH - 1].rstrip('_-')}_{digest}"


def key_pair_name(prefix: str, suffix: str) -> str:
    """A CVM key pair name: `<prefix>_<suffix>` in the characters CVM allows, at most 25."""
    return fit_name(_KEY_PAIR_CHARS.sub("_", f"{prefix}_{suffix}"), KEY_PAIR_NAME_MAX)
