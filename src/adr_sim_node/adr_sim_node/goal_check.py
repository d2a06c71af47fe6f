"""Is a RollOut goal's ParameterSet a point of this instance's randomization space?"""
from __future__ import annotations

import numpy as np

from adr_core.randomization import RandomizationError, RandomizationSpace
from adr_interfaces.msg import ParameterSet
from adr_ros import parameter_sets

NORMALIZED_TOLERANCE = 1e-9
# InvalidGoal.reason values
REASONS = ("run_id", "malformed", "env_id", "names", "out_of_range", "normalized", "versions")


class InvalidGoal(ValueError):
    """A goal this instance refuses; ``reason`` is the diagnostics counter (``rejected_<reason>``)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def checked_setting(msg: ParameterSet, space: RandomizationSpace) -> parameter_sets.Proposal:
    """The goal's setting, decoded; raises InvalidGoal naming the offending field or dimension."""
    try:
        proposal = parameter_sets.from_msg(msg)
    except ValueError as error:  # lengths disagree, NaN/inf
        raise InvalidGoal("malformed", f"parameters: {error}") from None
    if proposal.env_id != space.env_id:
        raise InvalidGoal("env_id", f"parameters.env_id {proposal.env_id!r}: this instance simulates {space.env_id!r}")
    if list(proposal.names) != space.names:
        unknown = [n for n in proposal.names if n not in space.names]
        missing = [n for n in space.names if n not in proposal.names]
        raise InvalidGoal("names", f"parameters.names {list(proposal.names)} must be {space.names} in this order "
                                   f"(unknown: {unknown}, missing: {missing})")
    try:
        expected = space.to_normalized(proposal.values)
    except RandomizationError as error:
        raise InvalidGoal("out_of_range", f"parameters.values: {error}") from None
    deviation = np.abs(proposal.normalized - expected)
    if (deviation > NORMALIZED_TOLERANCE).any():
        i = int(np.argmax(deviation))
        name, given, value, wanted = space.names[i], *(float(x[i]) for x in (proposal.normalized, proposal.values,
                                                                               expected))
        raise InvalidGoal("normalized", f"parameters.normalized[{i}] ({name}) is {given!r} but {name}={value!r} "
                                        f"is {wanted!r} normalized (tolerance {NORMALIZED_TOLERANCE:g})")
    return proposal
