"""``Probe``: Algorithm 1 with a frozen policy (no agent updates), recording where the sampler proposes.

    probe = Probe(config, load_frozen_policy(spec, config.env_id, space), out_dir)
    probe.measure_failures()          # the policy's failure map over the training range (failure.py)
    result = probe.run(200)           # iterations of the engine (engine/loop.py) with no agent

Files (with an ``out_dir``): record.py. The focus rule: focus.py.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..base.devices import configure_torch
from ..engine.hooks import Hook
from ..engine.local_steps import LocalSteps
from ..engine.loop import Engine
from ..evaluation.episodes import PolicySpec
from ..iteration import Components, IterationResult, RolloutSettings
from ..training.components import build_run_parts
from ..training.config import TrainConfig
from .failure import FailureMap, FailureRegion, failure_region, sweep_training_range
from .focus import FOCUS_RATIO, focus_statistics
from .policies import FrozenPolicy, check_policy
from .record import ProbeRecorder

__all__ = ["FOCUS_RATIO", "Probe", "ProbeResult", "focus_statistics"]


@dataclass
class ProbeResult:
    region: FailureRegion
    shares: list[float] = field(default_factory=list)  # per iteration
    focus: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # the iterations (the failure sweep excluded)


def probe_options(policy: FrozenPolicy, exploration_noise: float, sweep_points: int, sweep_episodes: int,
                  sweep_seeds: tuple[int, ...]) -> dict[str, Any]:
    return {"policy": policy.spec, "policy_kind": policy.kind, "exploration_noise": exploration_noise,
            "sweep_points": sweep_points, "sweep_episodes": sweep_episodes, "sweep_seeds": list(sweep_seeds)}


def measure_failure_map(policy: FrozenPolicy, config: TrainConfig, points: int, episodes: int,
                        seeds: tuple[int, ...], workers: int | None) -> tuple[FailureMap, FailureRegion]:
    from ..randomization import space_of

    space = None if config.space is None else space_of(config.env_id, config.space)
    spec = PolicySpec(config.env_id, policy.weights or {}, config.max_episode_steps,
                      callable_path=policy.callable_path, space=space)
    failure_map = sweep_training_range(spec, space_of(config.env_id, space), points, episodes, seeds, workers)
    return failure_map, failure_region(failure_map)


class Probe:
    def __init__(self, config: TrainConfig, policy: FrozenPolicy, out_dir: str | Path | None = None, *,
                 exploration_noise: float = 0.0, sweep_points: int = 13, sweep_episodes: int = 5,
                 sweep_seeds: tuple[int, ...] = (0, 1), workers: int | None = None) -> None:
        # small networks only (discriminator, particles): one thread unless the config asks for more; torch's
        # default of one per core spins against any other busy process (40x slower steps seen on 2 cores)
        configure_torch(config.torch_threads or 1, config.flush_denormals)
        self.config, self.frozen = config, policy
        parts = build_run_parts(config)  # envs, sampler, discriminator: as the trainer builds them
        self.randomized_env, self.reference_env, self.space = parts.randomized_env, parts.reference_env, parts.space
        check_policy(policy, self.randomized_env)
        self.sampler, self.discriminator = parts.sampler, parts.discriminator
        seed = config.seed
        self.components = Components(self.space, self.sampler, self.discriminator, self.randomized_env,
                                     self.reference_env, RolloutSettings(seed, exploration_noise, exploration_noise,
                                                                         config.rollout_max_steps))
        self.sweep = (sweep_points, sweep_episodes, tuple(sweep_seeds), workers)
        options = probe_options(policy, exploration_noise, sweep_points, sweep_episodes, tuple(sweep_seeds))
        self.recorder = None if out_dir is None else ProbeRecorder(out_dir, self.space, config, options)
        self.failure_map: FailureMap | None = None
        self.region: FailureRegion | None = None
        self.engine = Engine(None, config, LocalSteps(self.components, lambda: (policy.policy, 0)))

    def measure_failures(self) -> FailureRegion:
        points, episodes, seeds, workers = self.sweep
        self.failure_map, self.region = measure_failure_map(self.frozen, self.config, points, episodes, seeds, workers)
        if self.recorder is not None:
            self.recorder.write_failure_map(self.failure_map, self.region)
        return self.region

    @property
    def iteration(self) -> int:
        """Iterations run so far."""
        return self.engine.iteration

    def run(self, iterations: int, log: Callable[[str], None] = lambda _: None) -> ProbeResult:
        """``iterations`` ADR iterations around the frozen policy (the engine, engine/loop.py, with no agent and
        a ``ShareHook``)."""
        if self.region is None:
            self.measure_failures()
        assert self.region is not None
        result = ProbeResult(self.region)
        started = time.perf_counter()
        self.engine.start([ShareHook(self.recorder, result, self.iteration + iterations, log)])
        self.engine.run(max_iterations=iterations)
        result.seconds = time.perf_counter() - started
        if self.recorder is not None:
            result.focus = self.recorder.finish(result.seconds, self.config.seed)
        else:
            result.focus = focus_statistics(result.shares, self.region.uniform_share)
        return result


class ShareHook(Hook):
    """After each probe iteration: the share of its proposals in the failure region (recorded with the
    ``ProbeRecorder`` when the probe writes files), logged every 10 iterations."""

    def __init__(self, recorder: ProbeRecorder | None, result: ProbeResult, end: int,
                 log: Callable[[str], None]) -> None:
        self.recorder, self.result, self.end, self.log = recorder, result, end, log

    def after_row(self, run: Any, step: IterationResult, row: dict[str, Any]) -> None:
        region = self.result.region
        share = (self.recorder.record(step) if self.recorder is not None
                 else float(region.contains(step.proposals).mean()))
        self.result.shares.append(share)
        if run.iteration % 10 == 0:
            self.log(f"iteration {run.iteration}/{self.end}: share in the failure region {share:.2f} "
                     f"(uniform {region.uniform_share:.2f}), mean of the last 10 "
                     f"{np.mean(self.result.shares[-10:]):.2f}")
