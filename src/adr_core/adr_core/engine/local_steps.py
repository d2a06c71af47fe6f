"""Algorithm 1's steps in this process (the in-process trainer and probe): the executor ``Engine.run`` drives.

``propose``: the sampler's settings; ``roll_out``: every slot's randomized episode (and, for ADR, a reference one)
with the current policy, one after another; the discriminator scores the randomized episodes before training on
them, in a second thread while the agent updates when the run has a learner pool (``concurrent_learning``), else
when the feedback is asked for; ``feedback``: the discriminator's rewards (boundary ADR: the task scores) and the
sampler's update. The discriminator and the agent draw from generators of their own, so where the discriminator
runs changes no number.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..iteration import (
    Components,
    Feedback,
    Proposals,
    Rollouts,
    propose,
    roll_out,
    sampler_rewards,
    score_then_train,
    update_sampler,
)
from ..rollout import Policy
from ..samplers import feedback_path


class LocalSteps:
    """``Steps`` on a run's ``Components``. ``policy()``: the policy of the next rollouts and its version (the
    agent's actor at the end of the last iteration, or a frozen policy at version 0)."""

    def __init__(self, parts: Components, policy: Callable[[], tuple[Policy, int]]) -> None:
        self.parts, self.policy = parts, policy
        self.path = feedback_path(parts.sampler)

    @property
    def sampler_learns(self) -> bool:
        return self.path != "none"

    def propose(self, k: int) -> Proposals:
        return propose(self.parts.sampler, self.parts.space)

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        parts = self.parts
        policy, version = self.policy()
        randomized, reference = [], []
        for slot in range(len(proposals.normalized)):
            rand, ref = roll_out(parts.randomized_env, parts.reference_env, policy, proposals, slot, k,
                                 parts.rollouts, version, with_reference=self.path == "discriminator")
            randomized.append(rand)
            if ref is not None:
                reference.append(ref)
        scoring = None
        if self.path == "discriminator" and parts.learner_pool is not None and parts.agent is not None:
            # scored while the agent updates
            scoring = parts.learner_pool.submit(_timed, score_then_train, parts.discriminator, randomized, reference)
        return Rollouts(randomized, reference, scoring)

    def publish_weights(self) -> None:
        """Nothing to send: the next ``roll_out`` reads the policy."""

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        rewards: np.ndarray | None = None
        discriminator_metrics: dict[str, float] = {}
        time_discriminator = 0.0
        if rollouts.scoring is not None:
            (rewards, discriminator_metrics), time_discriminator = rollouts.scoring.result()
        elif self.path == "discriminator":
            (rewards, discriminator_metrics), time_discriminator = _timed(score_then_train, self.parts.discriminator,
                                                                          rollouts.randomized, rollouts.reference)
        started = time.perf_counter()
        rewards = sampler_rewards(self.parts.sampler, rollouts.randomized, rewards)
        sampler_metrics = update_sampler(self.parts.sampler, rewards)
        return Feedback(rewards, sampler_metrics, discriminator_metrics,
                        {"time_discriminator_s": time_discriminator, "time_sampler_s": time.perf_counter() - started})


def _timed(step: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """``step(*args)`` and the seconds it took."""
    start = time.perf_counter()
    return step(*args), time.perf_counter() - start
