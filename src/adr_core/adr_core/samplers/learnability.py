"""Learnability sampling (Rutherford et al., "No Regrets: Investigating and Improving Regret Approximations for
Curriculum Discovery", NeurIPS 2024: Sampling For Learnability, SFL), adapted to ADR's one episode per setting.

SFL scores a level by its learnability p(1-p), p the policy's success rate there: highest where the policy sometimes
succeeds, zero where it always or never does; it trains on the most learnable levels, mixed with uniform ones. SFL
estimates p by rolling every candidate level out many times; here every proposal is played once (its randomized
episode), so p is estimated from the episodes already played *near* a point:

- history: the last ``history`` (setting, outcome) pairs, outcome = 1.0 when the env's success rule says solved (the
  task scores ``update`` receives, in proposal order), 0.0 otherwise;
- p(x) = (s + 1) / (k + 2) over the ``neighbours`` nearest settings of the history in the normalized cube (s of them
  solved; the Beta(1, 1) prior keeps an unexplored region at 1/2, i.e. learnable until shown otherwise);
- a proposal is uniform with probability ``uniform_share``; otherwise ``candidates`` uniform points are scored by
  p(1-p) and one is drawn with probability proportional to its score (to the power ``sharpness``);
- before ``warmup`` outcomes have arrived every proposal is uniform.
Constants (defaults): history 2000 (about 130 ADR iterations of 15 settings: the recent policy), neighbours 20,
candidates 256, uniform share 0.5 (SFL's replay probability rho = 0.5), sharpness 1, warmup 100.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..base.fields import option
from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError


@dataclass
class LearnabilityConfig:
    history: int = option(2000, "learnability: (setting, solved) pairs kept; older ones are forgotten.")
    neighbours: int = option(20, "learnability: nearest past settings that estimate the success rate at a point.")
    candidates: int = option(256, "learnability: uniform candidate settings scored by p(1-p) per proposal.")
    uniform_share: float = option(0.5, "learnability: share of proposals drawn uniformly (SFL's rho: 0.5).")
    sharpness: float = option(1.0, "learnability: candidates are drawn with probability ~ (p(1-p))^sharpness.")
    warmup: int = option(100, "learnability: outcomes needed before proposals follow the scores (uniform before).")

    def __post_init__(self) -> None:
        for name in ("history", "neighbours", "candidates", "warmup"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"learnability.{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.uniform_share <= 1.0:
            raise ValueError(f"learnability.uniform_share must be in [0, 1], got {self.uniform_share}")
        if not 0.0 < self.sharpness <= 10.0:
            raise ValueError(f"learnability.sharpness must be in (0, 10], got {self.sharpness}")


class LearnabilitySampler(Sampler):
    name = "learnability"
    learns_from_outcomes = True
    METRICS = ("learnability_score_mean", "learnability_success_mean", "learnability_focused_share")

    def __init__(self, space: RandomizationSpace, config: LearnabilityConfig, num_proposals: int, seed: int) -> None:
        self.space, self.config, self._n = space, config, int(num_proposals)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
        self.points = np.zeros((0, space.ndim))
        self.outcomes = np.zeros(0)
        self._pending: np.ndarray | None = None
        self._focused = 0

    @property
    def num_proposals(self) -> int:
        return self._n

    def success_rate(self, x: np.ndarray) -> np.ndarray:
        """The estimated p at points ``x`` (m, d) from the history (1/2 with no history)."""
        x = np.atleast_2d(x)
        if len(self.outcomes) == 0:
            return np.full(len(x), 0.5)
        k = min(self.config.neighbours, len(self.outcomes))
        distances = np.linalg.norm(x[:, None, :] - self.points[None, :, :], axis=-1)
        nearest = np.argpartition(distances, k - 1, axis=1)[:, :k]
        solved = self.outcomes[nearest].sum(axis=1)
        rate: np.ndarray = (solved + 1.0) / (k + 2.0)
        return rate

    def learnability(self, x: np.ndarray) -> np.ndarray:
        p = self.success_rate(x)
        score: np.ndarray = p * (1.0 - p)
        return score

    def propose(self) -> np.ndarray:
        d, cfg = self.space.ndim, self.config
        proposals = self.rng.random((self._n, d))
        self._focused = 0
        if len(self.outcomes) >= cfg.warmup:
            focused = self.rng.random(self._n) >= cfg.uniform_share
            for i in np.flatnonzero(focused):
                candidates = self.rng.random((cfg.candidates, d))
                weights = self.learnability(candidates) ** cfg.sharpness
                total = weights.sum()
                pick = self.rng.choice(cfg.candidates, p=weights / total) if total > 0 else 0
                proposals[i] = candidates[pick]
            self._focused = int(focused.sum())
        self._pending = proposals.copy()
        return proposals

    def update(self, rewards: np.ndarray) -> dict[str, float]:
        if self._pending is None:
            raise SamplerError("learnability: update without a propose")
        scores = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if scores.shape != (self._n,) or not np.all(np.isfinite(scores)) or scores.min() < 0 or scores.max() > 1:
            raise SamplerError(f"learnability: expected {self._n} task scores in [0, 1], got {scores.tolist()}")
        learnable = float(self.learnability(self._pending).mean())
        self.points = np.concatenate([self.points, self._pending])[-self.config.history:]
        self.outcomes = np.concatenate([self.outcomes, scores])[-self.config.history:]
        self._pending = None
        return {"learnability_score_mean": learnable, "learnability_success_mean": float(self.outcomes.mean()),
                "learnability_focused_share": self._focused / self._n}

    def state_dict(self) -> dict[str, Any]:
        """Plain data and float64 tensors (checkpoints are read with weights_only=True)."""
        return {"sampler": self.name, "rng": self.rng.bit_generator.state,
                "points": torch.from_numpy(self.points.copy()), "outcomes": torch.from_numpy(self.outcomes.copy()),
                "pending": None if self._pending is None else torch.from_numpy(self._pending.copy()),
                "focused": self._focused}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._check_state_kind(state)
        points = np.asarray(state["points"], dtype=np.float64)
        if points.ndim != 2 or points.shape[1] != self.space.ndim:
            raise SamplerError(f"learnability checkpoint has points of shape {points.shape}, this space "
                               f"{self.space.ndim} dimensions")
        self.rng.bit_generator.state = state["rng"]
        self.points = points
        self.outcomes = np.asarray(state["outcomes"], dtype=np.float64).reshape(-1)
        pending = state["pending"]
        self._pending = None if pending is None else np.asarray(pending, dtype=np.float64)
        self._focused = int(state["focused"])
