"""Errors the runner reports in one line (never a traceback)."""
from __future__ import annotations


class DeployError(ValueError):
    """A checkpoint, parameter or goal the runner cannot use; the message says which and why."""


class Stopped(Exception):
    """The runner was asked to stop (Ctrl-C, shutdown) while it waited or ran an episode."""


class ArmNotReady(Exception):
    """The driver cannot take the arm right now (bus down, service refused or unanswered); worth retrying."""
