"""The one sampler interface shared by ADR (SVPG), UDR, baseline and fixed-range samplers.

    sampler.propose() -> (n, d) float64 points in the normalized coordinates of the randomization space
    sampler.update(rewards)  -> metrics   rewards: (n,) in proposal order: discriminator rewards
                                          (``learns_from_rewards``) or task scores (``learns_from_outcomes``)
    sampler.state_dict() / sampler.load_state_dict(state)

``propose`` and ``update`` alternate: every proposal batch is answered by one ``update`` call.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class SamplerError(ValueError):
    """Misuse of a sampler (wrong reward shape, update without propose, mismatched state)."""


class Sampler(ABC):
    name: str = ""
    learns_from_rewards: bool = False  # True: the trainer needs reference rollouts and discriminator rewards
    learns_from_outcomes: bool = False  # True: ``update`` takes the task score of each proposal (boundary ADR)

    @property
    @abstractmethod
    def num_proposals(self) -> int:
        """Points returned by each ``propose`` call."""

    @abstractmethod
    def propose(self) -> np.ndarray: ...

    def update(self, rewards: np.ndarray) -> dict[str, float]:
        return {}

    def particle_points(self) -> np.ndarray | None:
        """(n, d) normalized points of the sampler's particles (ADR), None for samplers without particles."""
        return None

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def _check_state_kind(self, state: dict[str, Any]) -> None:
        if state.get("sampler") != self.name:
            raise SamplerError(f"sampler checkpoint is for {state.get('sampler')!r}, this sampler is {self.name!r}")


def feedback_path(sampler: Sampler | type[Sampler]) -> str:
    """What a sampler learns from after each iteration, the one rule every executor, ``RunSpec`` and the record read:
    'discriminator' (the discriminator's rewards of its proposals: reference rollouts, a discriminator), 'outcomes'
    (each proposal's task score: ``iteration.outcome_scores``) or 'none'."""
    if sampler.learns_from_rewards:
        return "discriminator"
    return "outcomes" if sampler.learns_from_outcomes else "none"
