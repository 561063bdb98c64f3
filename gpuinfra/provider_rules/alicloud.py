"""Provider rules for the alicloud resources the stacks create (see model.py)."""

from __future__ import annotations
