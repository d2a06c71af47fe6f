"""Issue 30: adr_monitor refuses proposals outside their env's space instead of printing them as valid."""
from __future__ import annotations

import numpy as np
import pytest

from adr.monitor import check_in_space
from adr_core.randomization import space_of
from adr_ros.parameter_sets import Proposal

ENV = "adr/LunarLander-v0"
SPACE = space_of(ENV)


def proposal(values: np.ndarray, normalized: np.ndarray, env_id: str = ENV) -> Proposal:
    return Proposal(env_id, 0, 0, tuple(SPACE.names), values, normalized)


def test_a_real_proposal_passes() -> None:
    u = np.array([0.25])
    check_in_space(proposal(SPACE.from_normalized(u), u))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: proposal(np.array([14.0]), np.array([0.5]), "x" * 100_000), "is not one of"),
    (lambda: proposal(np.array([-52.0]), np.array([-5.0])), "outside the allowed range"),
    (lambda: proposal(np.array([9.0]), np.array([0.9])), "do not match normalized"),
])
def test_out_of_space_proposals_are_refused(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_in_space(make())
