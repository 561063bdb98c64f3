"""Provider rules for the tencentcloud resources the stacks create (see model.py)."""

from __future__ import annotations
