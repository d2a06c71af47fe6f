"""Controllers whose failure region is known by construction: ground truth for the probe's sampler focus.

``lunar_lander_heuristic``: gymnasium's own hand-tuned lander (``gymnasium.envs.box2d.lunar_lander.heuristic``), tuned
by its authors for the default main engine (13). It holds attitude and throttles against a fixed target descent
rate, which a weak engine cannot deliver: measured with the probe's sweep (docs/algorithm.md), it solves 0 % of
episodes at main engine 8..10, ~60 % at 11 and all from 12 to 20. The region where it fails is the weak-engine
end of the training range, and only there.
"""
from __future__ import annotations

import numpy as np


class _ContinuousLander:
    """What ``heuristic`` reads of its env argument: ``env.unwrapped.continuous``."""

    continuous = True

    @property
    def unwrapped(self) -> "_ContinuousLander":
        return self


_LANDER = _ContinuousLander()


def lunar_lander_heuristic(obs: np.ndarray) -> np.ndarray:
    """gymnasium's heuristic lander, continuous actions."""
    from gymnasium.envs.box2d.lunar_lander import heuristic

    return np.asarray(heuristic(_LANDER, np.asarray(obs, dtype=np.float64)), dtype=np.float32)
