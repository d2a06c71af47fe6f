"""Plausibility bounds on in-band values received over the wire: a well-formed message whose numbers no
simulator of the run could produce is refused before it reaches the replay buffer, the discriminator or a checkpoint.

Per step, a trajectory's reward must be within +-``reward_bound(env_id)``, the env record's
``reward_bound_per_step``: LunarLander's largest per-step rewards are the crash and landing terms (+-100) plus a
shaping difference of tens, so 1000; the robot envs reward minus a distance in metres minus a small control cost (a
few units at most), so 100. A run can set its own bound
(``reward_bound_per_step``). Observations must be within +-``OBSERVATION_LIMIT`` (no env of this project comes
near it; NaN and inf are refused earlier, as malformed). Particle rewards have their sampler's bound
(its record's ``reward_limit``; ADR's ``samplers.svpg.REWARD_LIMIT``: a discriminator reward is a
log-probability), and a statistic another
node reports for metrics.csv (a loss, a step count) must be within +-``STATISTIC_LIMIT``.
"""
from __future__ import annotations

import numpy as np

from .rollout import Trajectory

DEFAULT_REWARD_PER_STEP = 1e4  # an env without a record
OBSERVATION_LIMIT = 1e6
STATISTIC_LIMIT = 1e9  # a producer's statistic (a loss, a count, a mean reward) of one iteration, in size


def reward_bound(env_id: str, configured: float | None = None) -> float:
    """The run's bound on |reward| per step: ``configured`` if set, else the env's."""
    if configured is not None:
        return float(configured)
    from .envs.registry import env_record

    try:
        return env_record(env_id).reward_bound_per_step
    except ValueError:  # an env without a record
        return DEFAULT_REWARD_PER_STEP


def implausible(trajectory: Trajectory, bound: float) -> str | None:
    """Why no simulator of the run could have produced ``trajectory`` (None: it could)."""
    largest = float(np.abs(trajectory.rewards).max()) if trajectory.rewards.size else 0.0
    if largest > bound:
        return (f"a reward of {largest:.3g} in one step (this run's bound: +-{bound:g} per step, config key "
                f"reward_bound_per_step)")
    if abs(trajectory.episode_return) > bound * max(1, trajectory.length):
        return f"episode return {trajectory.episode_return:.3g} beyond {trajectory.length} steps of +-{bound:g}"
    for name, values in (("observations", trajectory.obs), ("next_observations", trajectory.next_obs)):
        if values.size and float(np.abs(values).max()) > OBSERVATION_LIMIT:
            return f"{name} up to {float(np.abs(values).max()):.3g} (limit +-{OBSERVATION_LIMIT:g})"
    return None
