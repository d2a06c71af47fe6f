"""The run id check every node applies to what it receives (``adr_core.run_spec``: chosen at launch, carried in
every message and service call of the run)."""
from __future__ import annotations

from adr_interfaces.msg import Trajectory


def foreign(received: str, own: str, what: str) -> str | None:
    """Why ``what`` (carrying run id ``received``) is not this run's, or None when it is."""
    if received == own:
        return None
    return f"{what} of run {received!r}, this is run {own!r}"


def foreign_trajectory(msg: Trajectory, own: str, what: str) -> str | None:
    """``foreign`` for a Trajectory message: its own run id and its parameters' must both be this run's."""
    outer, inner = msg.run_id, msg.parameters.run_id
    if outer != inner:
        return f"{what} of run {outer!r} with parameters of run {inner!r}, this is run {own!r}"
    return foreign(outer, own, what)
