"""Algorithm 1 of the paper (Active Domain Randomization): one iteration, written once, as per-role steps.

Every runner calls these steps, and one loop orders them (``adr_core.engine.loop.Engine``). In this process
(the ``Trainer``, and the ``Probe``: a frozen policy, no agent) ``engine/local_steps.py`` calls them; the ROS nodes
each call their role's step (sampler node: ``propose`` and ``update_sampler``; simulator node: ``roll_out_episode``,
once per kind; discriminator node: ``score_then_train``; trainer node: ``update_agent``)::

    proposals = propose(sampler, space)                                   (n, d) normalized and physical
    for each slot:                                                        the policy is fixed during the rollouts
        randomized[slot], reference[slot] = roll_out(...)                 a reference episode only for ADR
    rewards = score_then_train(discriminator, randomized, reference)      scored BEFORE it trains on them
    update_sampler(sampler, rewards)                                      SVPG, eq. (2)
    update_agent(agent, randomized, budget)                               stored in slot order, then the owed steps
                                                                          (+ reference: learn_from_reference)

The components draw randomness from their own generators, so the order of the last three steps does not change any
result (the node graph runs them in parallel processes and matches this in-process order bit for bit; in-process,
``Components.learner_pool`` runs ``score_then_train`` in a second thread while the agent updates).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np

from .agents import OffPolicyAgent
from .discriminator import DiscriminatorRewarder
from .randomization import RandomizationSpace
from .rollout import Kind, Policy, Trajectory, rollout
from .samplers import Sampler, feedback_path

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .envs.randomized import RandomizedEnvMixin


@dataclass(frozen=True)
class Proposals:
    normalized: np.ndarray  # (n, d) in the sampler's [0, 1]^d
    physical: np.ndarray  # (n, d) the simulator settings


def propose(sampler: Sampler, space: RandomizationSpace) -> Proposals:
    """The sampler's settings for this iteration, in both coordinates."""
    normalized = sampler.propose()
    return Proposals(normalized, space.from_normalized(normalized))


@dataclass(frozen=True)
class RolloutSettings:
    """What every rollout of a run shares."""

    run_seed: int
    exploration_noise: float  # randomized episodes
    reference_noise: float  # reference episodes
    max_steps: int | None = None  # cut episodes after this many steps (a truncation), None: the env's limit


def roll_out_episode(env: gym.Env, policy: Policy, params: np.ndarray, params_normalized: np.ndarray, kind: Kind,
                     slot: int, iteration: int, settings: RolloutSettings, policy_version: int = 0) -> Trajectory:
    """One episode of a slot, randomized (at its setting) or reference, with the run's noise for that kind: what
    ``roll_out`` does twice and a simulator node once per kind."""
    noise = settings.exploration_noise if kind == "randomized" else settings.reference_noise
    return rollout(env, policy, params=params, params_normalized=params_normalized, kind=kind, slot=slot,
                   iteration=iteration, run_seed=settings.run_seed, policy_version=policy_version,
                   exploration_noise=noise, max_steps=settings.max_steps)


def roll_out(randomized_env: gym.Env, reference_env: gym.Env | None, policy: Policy, proposals: Proposals, slot: int,
             iteration: int, settings: RolloutSettings, policy_version: int = 0,
             with_reference: bool = True) -> tuple[Trajectory, Trajectory | None]:
    """One slot: an episode at the proposed setting and, with ``with_reference``, one at the reference setting."""
    randomized = roll_out_episode(randomized_env, policy, proposals.physical[slot], proposals.normalized[slot],
                                  "randomized", slot, iteration, settings, policy_version)
    if not with_reference:
        return randomized, None
    if reference_env is None:
        raise ValueError("a reference rollout needs the reference env")
    space = cast("RandomizedEnvMixin", randomized_env.unwrapped).randomization_space
    reference = roll_out_episode(reference_env, policy, space.reference(), space.reference_normalized(), "reference",
                                 slot, iteration, settings, policy_version)
    return randomized, reference


def score_then_train(discriminator: DiscriminatorRewarder, randomized: list[Trajectory],
                     reference: list[Trajectory]) -> tuple[np.ndarray, dict[str, float]]:
    """The discriminator's part: one reward per randomized trajectory, computed before it trains on them."""
    rewards = discriminator.score(randomized)
    metrics: dict[str, float] = {"d_randomized": discriminator.mean_probability(randomized),
                                 "d_reference": discriminator.mean_probability(reference)}
    steps = discriminator.steps_for(randomized)
    metrics.update(discriminator.train(randomized, reference, steps))
    metrics["discriminator_steps"] = float(steps)  # as the graph carries it (float64 metric values)
    return rewards, metrics


def outcome_scores(randomized: list[Trajectory]) -> np.ndarray:
    """The task score of each slot's randomized episode, in slot order: 1.0 when the env's success rule says
    solved, else 0.0 (what boundary ADR learns from)."""
    return np.array([float(t.solved) for t in sorted(randomized, key=lambda t: t.slot)], dtype=np.float64)


def sampler_rewards(sampler: Sampler, randomized: list[Trajectory],
                    discriminator_rewards: np.ndarray | None) -> np.ndarray | None:
    """What the sampler's update takes after an iteration, by its ``feedback_path``: the discriminator's rewards of
    its proposals, the task scores of the iteration's randomized episodes (``outcome_scores``), or nothing."""
    path = feedback_path(sampler)
    if path == "outcomes":
        return outcome_scores(randomized)
    return discriminator_rewards if path == "discriminator" else None


def update_sampler(sampler: Sampler, rewards: np.ndarray | None) -> dict[str, float]:
    """The sampler's step on what it learns from: SVPG on the discriminator rewards of its proposals, boundary ADR on
    their task scores (``outcome_scores``); nothing for samplers that do not learn."""
    return sampler.update(rewards) if feedback_path(sampler) != "none" and rewards is not None else {}


def update_agent(agent: OffPolicyAgent, randomized: list[Trajectory], budget: int | None = None,
                 reference: list[Trajectory] | None = None) -> tuple[int, dict[str, float]]:
    """Store the randomized trajectories in slot order (then, when given, the ``reference`` ones: the
    ``learn_from_reference`` option), then take the gradient steps owed. ``budget``: the run's total agent steps: no
    transition past it is stored (the last iteration's last trajectories are cut or skipped, so a run ends at its
    budget exactly), and learning-rate schedules run on it (progress = agent steps so far / budget)."""
    for trajectory in [*sorted(randomized, key=lambda t: t.slot), *sorted(reference or [], key=lambda t: t.slot)]:
        agent.store(trajectory, None if budget is None else budget - agent.transitions_seen)
    n_updates = agent.updates_due()
    progress = agent.transitions_seen / budget if budget else None
    return n_updates, agent.update(n_updates, progress=progress)


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else float("nan")


# The columns each producer fills (the graph carries them as name/value pairs in its messages).
DISCRIMINATOR_COLUMNS = ("d_randomized", "d_reference", "discriminator_loss", "discriminator_steps")


def sampler_columns() -> tuple[str, ...]:
    """Every column a sampler's statistics may fill: those each registered sampler's record declares
    (``SamplerRecord.metric_columns``: the built-ins' and a plug-in's alike)."""
    from .samplers import sampler_records

    return tuple(dict.fromkeys(c for record in sampler_records() for c in record.metric_columns))


def own_columns(metrics: dict[str, float], columns: tuple[str, ...]) -> dict[str, float]:
    """Only the producer's own, finite values."""
    return {k: float(v) for k, v in metrics.items() if k in columns and math.isfinite(v)}


@dataclass(frozen=True)
class Rollouts:
    """An iteration's episodes as an executor's ``roll_out`` returns them; the engine hands them to its ``feedback``
    unchanged, so nothing of the iteration waits in the executor between the two calls."""

    randomized: list[Trajectory]  # one per slot, in slot order
    reference: list[Trajectory] = field(default_factory=list)  # ADR's reference episodes; else none
    # work on them begun at roll-out that the feedback collects: in this process, the discriminator's scoring
    # (``score_then_train``, timed) in a second thread while the agent updates
    scoring: Future[Any] | None = None


@dataclass
class Feedback:
    """What the sampler's side sends back about an iteration: the particles' rewards (ADR: the discriminator's;
    boundary ADR: the task scores), the sampler's update statistics and the discriminator's; in the node graph a
    ``None`` field never came (in time). ``timings``: the executor's own timing columns of the iteration (in this
    process the discriminator's and the sampler's seconds, in the graph the transport time)."""

    rewards: np.ndarray | None
    sampler_metrics: dict[str, float] | None
    discriminator_metrics: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class IterationResult:
    iteration: int
    proposals: np.ndarray  # (n, d) normalized
    parameters: np.ndarray  # (n, d) physical
    policy_version: int
    randomized: list[Trajectory]
    reference: list[Trajectory]
    rewards: np.ndarray | None  # discriminator rewards (scored before training); None for non-learning samplers
    n_updates: int
    agent_losses: dict[str, float]
    sampler_metrics: dict[str, float]
    discriminator_metrics: dict[str, float]
    timings: dict[str, float] = field(default_factory=dict)

    @classmethod
    def assemble(cls, iteration: int, proposals: Proposals, policy_version: int, randomized: list[Trajectory],
                 reference: list[Trajectory], feedback: Feedback, n_updates: int = 0,
                 agent_losses: dict[str, float] | None = None,
                 timings: dict[str, float] | None = None) -> IterationResult:
        """The result of iteration ``iteration`` from its steps' outputs: every runner builds it here (in-process,
        the node graph, the probes)."""
        return cls(iteration=iteration, proposals=proposals.normalized, parameters=proposals.physical,
                   policy_version=policy_version, randomized=randomized, reference=reference,
                   rewards=feedback.rewards, n_updates=n_updates, agent_losses=dict(agent_losses or {}),
                   sampler_metrics=feedback.sampler_metrics or {},
                   discriminator_metrics=feedback.discriminator_metrics, timings=dict(timings or {}))

    def metrics(self) -> dict[str, Any]:
        """The iteration's metrics.csv row (less the trainer's counters). The sampler's and the discriminator's
        statistics fill only their own columns (``sampler_columns()``, ``DISCRIMINATOR_COLUMNS``): a statistics
        message of the graph cannot rename or overwrite another field."""
        rand, ref = self.randomized, self.reference
        rewards = self.rewards if self.rewards is not None else np.array([])
        nan = float("nan")
        return {
            "iteration": self.iteration, "episodes": len(rand),
            "return_mean": _mean([t.episode_return for t in rand]),
            "return_min": min((t.episode_return for t in rand), default=nan),
            "return_max": max((t.episode_return for t in rand), default=nan),
            "length_mean": _mean([float(t.length) for t in rand]),
            "solved_fraction": _mean([float(t.solved) for t in rand]),
            "final_distance_mean": _mean([t.final_distance for t in rand]),
            "reference_return_mean": _mean([t.episode_return for t in ref]),
            "reference_solved_fraction": _mean([float(t.solved) for t in ref]),
            "reference_final_distance_mean": _mean([t.final_distance for t in ref]),
            "sampler_reward_mean": float(rewards.mean()) if rewards.size else nan,
            "sampler_reward_std": float(rewards.std()) if rewards.size else nan,
            "n_updates": self.n_updates, **self.agent_losses, **own_columns(self.sampler_metrics, sampler_columns()),
            **own_columns(self.discriminator_metrics, DISCRIMINATOR_COLUMNS), **self.timings,
        }


@dataclass
class Components:
    """What one in-process iteration needs. ``agent`` None: a frozen ``policy`` is probed (no agent updates)."""

    space: RandomizationSpace
    sampler: Sampler
    discriminator: DiscriminatorRewarder
    randomized_env: gym.Env
    reference_env: gym.Env
    rollouts: RolloutSettings
    agent: OffPolicyAgent | None = None
    budget: int | None = None  # the run's total agent steps (learning-rate schedules)
    learn_from_reference: bool = False  # the agent also stores the reference rollouts
    learner_pool: ThreadPoolExecutor | None = None  # set: the discriminator trains there while the agent updates
