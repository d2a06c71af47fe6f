"""Errors the runner reports in one line (never a traceback)."""
from __future__ import annotations


class DeployError(ValueError):
    """A checkpoint, parameter or goal the runner cannot use; the message says which and why."""


class Stopped(Exception):
    """The runner was asked to stop (Ctrl-C, shutdown) while it waited or ran an episode."""
