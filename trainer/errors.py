"""Exceptions that map to documented exit codes."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user must fix (arguments, data, URI): exit code ``USER_ERROR``, no retry."""


class CheckpointError(Exception):
    """A checkpoint that is partial, corrupt or unloadable."""
