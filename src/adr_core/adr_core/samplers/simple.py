"""The non-learning samplers of the paper's comparisons.

UDR: uniform over the training range. Baseline: the reference parameters only. Fixed range
("oracle"): uniform over a named range of the space, e.g. LunarLander's MES in [8, 11].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError


class _NumpySampler(Sampler):
    """A sampler whose only state is a numpy generator."""

    def __init__(self, space: RandomizationSpace, num_proposals: int, seed: int) -> None:
        if num_proposals < 1:
            raise SamplerError(f"num_proposals must be >= 1, got {num_proposals}")
        self.space, self._num_proposals = space, int(num_proposals)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(seed)))

    @property
    def num_proposals(self) -> int:
        return self._num_proposals

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._check_state_kind(state)
        self.rng.bit_generator.state = state["rng"]


class UniformSampler(_NumpySampler):
    """UDR: every proposal uniform over the training range (the unit cube in normalized coordinates)."""

    name = "udr"

    def propose(self) -> np.ndarray:
        return self.space.sample_uniform(self.rng, self.num_proposals)


class ReferenceSampler(_NumpySampler):
    """Baseline: every proposal is the reference (default) parameter set."""

    name = "baseline"

    def propose(self) -> np.ndarray:
        return np.tile(self.space.reference_normalized(), (self.num_proposals, 1))


class FixedRangeSampler(_NumpySampler):
    """Uniform over a named range of the space (the paper's hand-picked "oracle" ranges)."""

    name = "fixed"

    def __init__(self, space: RandomizationSpace, range_name: str, num_proposals: int, seed: int) -> None:
        super().__init__(space, num_proposals, seed)
        self.range_name = range_name
        low, high = space.range_box(range_name)
        self.low, self.high = space.to_normalized(low), space.to_normalized(high)

    def propose(self) -> np.ndarray:
        u = self.rng.random((self.num_proposals, self.space.ndim))
        proposals: np.ndarray = self.low + (self.high - self.low) * u
        return proposals
