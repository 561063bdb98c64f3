"""Provider rules for the kubernetes resources the stacks create (see model.py)."""

from __future__ import annotations
