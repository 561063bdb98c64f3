"""Provider rules for the aws resources the stacks create (see model.py)."""

from __future__ import annotations
