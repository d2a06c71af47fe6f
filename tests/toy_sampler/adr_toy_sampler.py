"""A sampler adr_core does not know, registered from outside it (issue 44): one module and its record, nothing else.

``toy_corner``: each proposal is the corner the config names, jittered by ``spread``, and the corner moves a step
toward the middle of the cube after every iteration whose proposals were all solved (it learns from outcomes).
A run names this module in its config (``sampler_modules: [adr_toy_sampler]``) so that every process imports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from adr_core.base.fields import option
from adr_core.samplers import Sampler, SamplerError, SamplerRecord, register_sampler


@dataclass
class CornerConfig:
    corner: float = option(0.0, "toy_corner: where every dimension of the proposals starts (0 or 1 ...).")
    spread: float = option(0.05, "toy_corner: jitter around the corner.")

    def __post_init__(self) -> None:
        if not 0.0 <= self.corner <= 1.0 or not 0.0 <= self.spread <= 0.5:
            raise ValueError(f"toy_corner: corner must be in [0, 1] and spread in [0, 0.5], got {self.corner}, "
                             f"{self.spread}")


class CornerSampler(Sampler):
    name = "toy_corner"
    learns_from_outcomes = True

    def __init__(self, ndim: int, config: CornerConfig, num_proposals: int, seed: int) -> None:
        self.ndim, self.config, self._n = ndim, config, num_proposals
        self.rng = np.random.default_rng(seed)
        self.center = np.full(ndim, config.corner)
        self._pending = False

    @property
    def num_proposals(self) -> int:
        return self._n

    def propose(self) -> np.ndarray:
        self._pending = True
        points: np.ndarray = np.clip(self.center + self.rng.normal(0, self.config.spread, (self._n, self.ndim)), 0, 1)
        return points

    def update(self, rewards: np.ndarray) -> dict[str, float]:
        if not self._pending:
            raise SamplerError("toy_corner: update without a propose")
        self._pending = False
        if np.all(np.asarray(rewards) >= 1.0):
            self.center += 0.1 * (0.5 - self.center)
        return {"toy_corner_center": float(self.center.mean())}

    def state_dict(self) -> dict[str, Any]:
        return {"sampler": self.name, "rng": self.rng.bit_generator.state, "center": self.center.tolist(),
                "pending": self._pending}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._check_state_kind(state)
        self.rng.bit_generator.state = state["rng"]
        self.center = np.asarray(state["center"], dtype=np.float64)
        self._pending = bool(state["pending"])


RECORD = register_sampler(SamplerRecord(
    "toy_corner", CornerSampler, lambda b: CornerSampler(b.space.ndim, b.options, b.num_proposals, b.seed),
    "toy corner", "a corner of the cube that moves inward once an iteration is all solved (a test's plug-in)",
    options=CornerConfig, metric_columns=("toy_corner_center",)))
