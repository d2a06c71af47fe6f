"""Deterministic evaluation episodes, in this process or in a pool of worker processes.

An evaluation episode is ``adr_core.rollout.rollout`` with no exploration noise. Its env reset seed is derived from
``(seed, EVALUATION_ITERATION, episode, "reference")`` only, so episode e of seed s starts from the same initial state
at every point of a sweep (common random numbers) and in every process: results do not depend on the number of
workers or on the order in which jobs finish. Workers use one torch thread each.
"""
from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

if TYPE_CHECKING:
    import gymnasium
    from gymnasium.spaces import Box

    from ..agents.networks import ActorPolicy
    from ..envs.randomized import RandomizedEnvMixin
    from ..randomization import RandomizationSpace
    from ..rollout import Policy

EVALUATION_ITERATION = 2**31 - 1  # the rollout stream of evaluation episodes (no training run gets this far)
EVALUATION_KIND: Literal["reference"] = "reference"


@dataclass(frozen=True)
class PolicySpec:
    """What a worker needs to rebuild a policy and its environment."""

    env_id: str
    weights: Mapping[str, np.ndarray]  # actor state dict as arrays (empty for a callable policy)
    max_episode_steps: int | None = None
    callable_path: str = ""  # 'module:callable' obs -> action, imported by each worker (instead of weights)
    space: RandomizationSpace | None = None  # the run's own space (e.g. a sim-to-real variant); None = packaged


@dataclass(frozen=True)
class EpisodeJob:
    """``episodes`` episodes of one policy at one physical point, with one evaluation seed."""

    policy: str  # key into the policy specs
    point: tuple[float, ...]
    seed: int
    episodes: int


@dataclass(frozen=True)
class EpisodeOutcomes:
    returns: np.ndarray  # (episodes,) float64
    final_distance: np.ndarray  # (episodes,) float64, NaN where the env has no distance
    solved: np.ndarray  # (episodes,) bool
    lengths: np.ndarray  # (episodes,) int64


class EpisodeRunner:
    """Builds each policy and env once, then runs jobs."""

    def __init__(self, specs: Mapping[str, PolicySpec]) -> None:
        self.specs = dict(specs)
        self._policies: dict[str, Policy] = {}
        self._envs: dict[tuple[str, int | None, str], gymnasium.Env[Any, Any]] = {}

    def run(self, job: EpisodeJob) -> EpisodeOutcomes:
        from ..rollout import rollout

        policy, env = self._policy(job.policy), self._env(job.policy)
        space = cast("RandomizedEnvMixin", env.unwrapped).randomization_space
        point = np.asarray(job.point, dtype=np.float64)
        normalized = space.to_normalized(point)
        trajectories = [rollout(env, policy, params=point, params_normalized=normalized, kind=EVALUATION_KIND,
                                iteration=EVALUATION_ITERATION, slot=episode, run_seed=job.seed,
                                exploration_noise=0.0)
                        for episode in range(job.episodes)]
        return EpisodeOutcomes(
            returns=np.array([t.episode_return for t in trajectories], dtype=np.float64),
            final_distance=np.array([t.final_distance for t in trajectories], dtype=np.float64),
            solved=np.array([t.solved for t in trajectories], dtype=bool),
            lengths=np.array([t.length for t in trajectories], dtype=np.int64))

    def close(self) -> None:
        """Close the envs (PyBullet and MuJoCo hold native resources until then)."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    def _policy(self, key: str) -> Policy:
        if key not in self._policies:
            spec = self.specs[key]
            if spec.callable_path:
                from ..probe.policies import import_callable

                self._policies[key] = import_callable(spec.callable_path)
                return self._policies[key]
            import torch

            from ..agents.networks import ActorPolicy

            weights = {
                name: torch.from_numpy(np.array(value, dtype=np.float32)) for name, value in spec.weights.items()
            }
            self._policies[key] = ActorPolicy.from_state_dict(weights)
        return self._policies[key]

    def _env(self, key: str) -> gymnasium.Env[Any, Any]:
        from ..base.checkpoint import CheckpointError

        spec = self.specs[key]
        cache_key = (spec.env_id, spec.max_episode_steps, "" if spec.space is None else key)
        if cache_key not in self._envs:
            from ..envs import make_env

            kwargs: dict[str, Any] = {} if spec.max_episode_steps is None else {
                "max_episode_steps": spec.max_episode_steps}
            if spec.space is not None:
                kwargs["space"] = spec.space
            self._envs[cache_key] = make_env(spec.env_id, **kwargs)
        env = self._envs[cache_key]
        if spec.callable_path:  # checked by the probe before it asks for episodes (probe.policies.check_policy)
            return env
        actor = cast("ActorPolicy", self._policy(key)).actor  # a checkpoint's policy (no callable_path)
        observation_space, action_space = cast("Box", env.observation_space), cast("Box", env.action_space)
        dims = (int(np.prod(observation_space.shape)), int(np.prod(action_space.shape)))
        if dims != (actor.obs_dim, actor.act_dim):
            raise CheckpointError(f"policy {key!r} maps {actor.obs_dim} -> {actor.act_dim} values, {spec.env_id} has "
                                  f"{dims[0]} observations and {dims[1]} actions")
        return env


_WORKER: EpisodeRunner | None = None


def _init_worker(specs: Mapping[str, PolicySpec], env_modules: tuple[str, ...]) -> None:
    global _WORKER
    import torch

    from ..envs import import_env_modules

    torch.set_num_threads(1)
    import_env_modules(env_modules)  # envs registered outside adr_core.envs: their modules register them here too
    _WORKER = EpisodeRunner(specs)


def _run_in_worker(job: EpisodeJob) -> EpisodeOutcomes:
    assert _WORKER is not None
    return _WORKER.run(job)


def default_workers(jobs: int) -> int:
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1,
                      jobs))


def run_jobs(specs: Mapping[str, PolicySpec], jobs: Sequence[EpisodeJob], workers: int | None = None,
             progress: Callable[[int, int], None] | None = None) -> list[EpisodeOutcomes]:
    """Outcomes of ``jobs`` in their order. ``workers`` 1: in this process; more: a forkserver (or spawn) pool."""
    workers = default_workers(len(jobs)) if workers is None else max(1, min(int(workers), len(jobs) or 1))
    results: list[EpisodeOutcomes] = []
    if workers == 1:
        runner = EpisodeRunner(specs)
        try:
            for job in jobs:
                results.append(runner.run(job))
                if progress:
                    progress(len(results), len(jobs))
        finally:
            runner.close()
        return results
    from ..envs import entry_modules

    modules = entry_modules(spec.env_id for spec in specs.values())
    with _pool_context().Pool(workers, initializer=_init_worker, initargs=(dict(specs), modules)) as pool:
        for outcome in pool.imap(_run_in_worker, jobs, chunksize=1):
            results.append(outcome)
            if progress:
                progress(len(results), len(jobs))
    return results


def _pool_context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__, "adr_core.envs", "adr_core.agents.networks"])
        return context
    return multiprocessing.get_context("spawn")
