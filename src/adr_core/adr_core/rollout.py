"""One episode of a policy in a (randomized or reference) simulator, as a plain ``Trajectory``.

Randomness depends only on ``(run_seed, iteration, slot, kind)``, never on which process runs the
rollout or on the order rollouts finish: ``rollout_randomness`` derives the env reset seed and the
exploration-noise generator from those four numbers.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

import gymnasium as gym
import numpy as np

Kind = Literal["randomized", "reference"]
KIND_CODES: dict[str, int] = {"randomized": 0, "reference": 1}
Policy = Callable[[np.ndarray], np.ndarray]


@dataclass
class Trajectory:
    """One episode. Arrays are float32 (``terminated`` bool) with leading dimension ``length``."""

    obs: np.ndarray  # (T, obs_dim)
    actions: np.ndarray  # (T, act_dim): the actions executed (exploration noise included, clipped)
    next_obs: np.ndarray  # (T, obs_dim)
    rewards: np.ndarray  # (T,)
    terminated: np.ndarray  # (T,) bool; True only on a true terminal state (not on time-limit truncation)
    params: np.ndarray  # (d,) float64 physical parameters the simulator ran with
    params_normalized: np.ndarray  # (d,) float64 the same point in the sampler's [0, 1]^d coordinates
    kind: Kind
    iteration: int
    slot: int
    policy_version: int
    episode_return: float
    length: int
    truncated: bool = False  # ended by the time limit
    solved: bool = False  # the env's own success criterion (``env.unwrapped.is_solved``) when it has one
    final_distance: float = float("nan")  # info["distance"] at the last step (Pusher / Ergo), NaN otherwise

    def transitions(self) -> np.ndarray:
        """``(T, 2*obs_dim + act_dim)`` float32 rows ``[s, a, s']`` (the discriminator's input)."""
        return np.concatenate([self.obs, self.actions, self.next_obs], axis=1)


def trajectory_digest(trajectory: Trajectory) -> str:
    """SHA-256 (hex) of what a trajectory says: where and under which policy it ran, and every transition. Two nodes
    that decoded the same message get the same digest; any changed value changes it (the graph's acceptance rule:
    the discriminator scores the trajectories whose digests the trainer accepted)."""
    digest = hashlib.sha256()
    digest.update(f"{trajectory.kind}|{trajectory.iteration}|{trajectory.slot}|{trajectory.policy_version}|"
                  f"{trajectory.length}|{trajectory.episode_return!r}|".encode())
    for array, dtype in ((trajectory.params, np.float64), (trajectory.params_normalized, np.float64),
                         (trajectory.obs, np.float32), (trajectory.actions, np.float32),
                         (trajectory.next_obs, np.float32), (trajectory.rewards, np.float32),
                         (trajectory.terminated, np.bool_)):
        digest.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return digest.hexdigest()


def rollout_randomness(run_seed: int, iteration: int, slot: int, kind: Kind) -> tuple[int, np.random.Generator]:
    """The env reset seed and the exploration-noise generator of one rollout."""
    sequence = np.random.SeedSequence([int(run_seed), int(iteration), int(slot), KIND_CODES[kind]])
    reset_sequence, noise_sequence = sequence.spawn(2)
    reset_seed = int(reset_sequence.generate_state(1, dtype=np.uint32)[0])
    return reset_seed, np.random.default_rng(noise_sequence)


def rollout(env: gym.Env, policy: Policy, *, params: np.ndarray, params_normalized: np.ndarray, kind: Kind,
            iteration: int, slot: int, run_seed: int, policy_version: int = 0, exploration_noise: float = 0.0,
            max_steps: int | None = None) -> Trajectory:
    """Run one episode of ``policy`` in ``env`` set to the physical ``params``.

    Actions are ``clip(policy(obs) + N(0, exploration_noise^2), low, high)``; a policy with an
    ``explore(obs, rng, exploration_noise)`` method (``ActorPolicy``) makes its own exploring actions instead
    (the same noise for a deterministic actor; samples of a SAC actor's Gaussian). The episode ends on
    ``terminated`` or ``truncated`` (the env's time limit) or after ``max_steps`` steps. A policy with memory
    (``ActorPolicy`` of an actor with a history) is told where the episode starts (``begin_episode``) and which
    action was executed at each step (``remember``).
    """
    reset_seed, noise_rng = rollout_randomness(run_seed, iteration, slot, kind)
    explore = getattr(policy, "explore", None)  # ActorPolicy: Gaussian noise, or sampling for a SAC actor
    remember = getattr(policy, "remember", None)  # ActorPolicy: a policy with memory keeps the episode's history
    unwrapped = env.unwrapped
    if hasattr(unwrapped, "set_parameters"):
        unwrapped.set_parameters(np.asarray(params, dtype=np.float64))
    obs, info = env.reset(seed=reset_seed)
    begin_episode = getattr(policy, "begin_episode", None)
    if begin_episode is not None:
        begin_episode(np.asarray(obs, dtype=np.float32))
    action_space = cast(gym.spaces.Box, env.action_space)  # every adr env acts in a Box
    low, high = action_space.low, action_space.high
    obs_list, action_list, next_list, reward_list, terminated_list = [], [], [], [], []
    terminated = truncated = False
    while not (terminated or truncated):
        if exploration_noise > 0.0 and explore is not None:
            action = explore(np.asarray(obs, dtype=np.float32), noise_rng, exploration_noise)
        else:
            action = np.asarray(policy(np.asarray(obs, dtype=np.float32)), dtype=np.float64)
            if exploration_noise > 0.0:
                action = action + noise_rng.normal(0.0, exploration_noise, size=action.shape)
        action = np.clip(action, low, high).astype(np.float32)
        if remember is not None:
            remember(np.asarray(obs, dtype=np.float32), action)
        next_obs, reward, terminated, truncated, info = env.step(action)
        obs_list.append(obs)
        action_list.append(action)
        next_list.append(next_obs)
        reward_list.append(reward)
        terminated_list.append(terminated)
        obs = next_obs
        if max_steps is not None and len(reward_list) >= max_steps and not terminated:
            truncated = True

    rewards = np.asarray(reward_list, dtype=np.float32)
    episode_return = float(np.sum(np.asarray(reward_list, dtype=np.float64)))
    solved = bool(unwrapped.is_solved(episode_return, info)) if hasattr(unwrapped, "is_solved") else False
    return Trajectory(
        obs=np.asarray(obs_list, dtype=np.float32),
        actions=np.asarray(action_list, dtype=np.float32),
        next_obs=np.asarray(next_list, dtype=np.float32),
        rewards=rewards,
        terminated=np.asarray(terminated_list, dtype=bool),
        params=np.asarray(params, dtype=np.float64).copy(),
        params_normalized=np.asarray(params_normalized, dtype=np.float64).copy(),
        kind=kind, iteration=int(iteration), slot=int(slot), policy_version=int(policy_version),
        episode_return=episode_return, length=len(rewards), truncated=bool(truncated and not terminated),
        solved=solved, final_distance=float(info.get("distance", float("nan"))),
    )
