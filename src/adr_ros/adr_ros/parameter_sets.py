"""ParameterSet message <-> plain values."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from adr_interfaces.msg import ParameterSet
from adr_ros.arrays import from_field, to_field


@dataclass(frozen=True)
class Proposal:
    """A proposed simulator setting, as the core sees it."""

    env_id: str
    iteration: int
    slot: int
    names: tuple[str, ...]
    values: np.ndarray
    normalized: np.ndarray


def to_msg(proposal: Proposal, run_id: str = "") -> ParameterSet:
    msg = ParameterSet()
    msg.run_id = run_id
    msg.env_id = proposal.env_id
    msg.iteration = proposal.iteration
    msg.slot = proposal.slot
    msg.names = list(proposal.names)
    msg.values = to_field(proposal.values, np.float64)
    msg.normalized = to_field(proposal.normalized, np.float64)
    return msg


def from_msg(msg: ParameterSet) -> Proposal:
    """Decode a ParameterSet; raises ValueError when its arrays disagree in length or hold NaN/inf."""
    values = from_field(msg.values, np.float64)
    normalized = from_field(msg.normalized, np.float64)
    if not (len(msg.names) == values.size == normalized.size):
        raise ValueError(
            f"ParameterSet has {len(msg.names)} names, {values.size} values and {normalized.size} normalized values"
        )
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(normalized))):
        raise ValueError(f"ParameterSet holds non-finite values: {dict(zip(msg.names, values.tolist()))}")
    return Proposal(msg.env_id, msg.iteration, msg.slot, tuple(msg.names), values.copy(), normalized.copy())
