"""``Probe``: Algorithm 1 with a frozen policy (no agent updates), recording where the sampler proposes.

    probe = Probe.in_process(config, load_frozen_policy(spec, config.env_id, space), out_dir)
    probe.measure_failures()          # the policy's failure map over the training range (failure.py)
    result = probe.run(200)           # iterations of the engine (engine/loop.py) with no agent

``Probe.in_process`` builds the engine with the steps carried out in this process (adr-probe); the trainer node's
``mode:=probe`` gives ``Probe`` its engine over the node graph. Files (with an ``out_dir``): record.py. The focus
rule: focus.py.
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
from ..randomization import RandomizationSpace
from ..training.components import build_run_parts
from ..training.config import TrainConfig
from .failure import FailureMap, FailureRegion, failure_region, sweep_training_range
from .focus import FOCUS_RATIO, focus_statistics
from .policies import FrozenPolicy, check_policy
from .record import ProbeRecorder

__all__ = ["FOCUS_RATIO", "Probe", "ProbeResult", "Sweep", "focus_statistics"]


@dataclass
class ProbeResult:
    region: FailureRegion
    shares: list[float] = field(default_factory=list)  # per iteration
    focus: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # the iterations (the failure sweep excluded)


@dataclass(frozen=True)
class Sweep:
    """The failure map's sweep of the training range (adr-probe's defaults)."""

    points: int = 13  # per dimension
    episodes: int = 5  # per point and seed
    seeds: tuple[int, ...] = (0, 1)
    workers: int | None = None  # worker processes (None: one per CPU)


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
    """The failure map of ``policy``, then iterations of ``engine`` (no agent; its steps roll out the frozen policy)
    with the share of each iteration's proposals in the failure region; files in ``out_dir`` when given."""

    def __init__(self, config: TrainConfig, policy: FrozenPolicy, space: RandomizationSpace, engine: Engine,
                 out_dir: str | Path | None = None, *, exploration_noise: float = 0.0, sweep: Sweep = Sweep()) -> None:
        self.config, self.frozen, self.space, self.engine, self.sweep = config, policy, space, engine, sweep
        options = probe_options(policy, exploration_noise, sweep.points, sweep.episodes, sweep.seeds)
        self.recorder = None if out_dir is None else ProbeRecorder(out_dir, space, config, options)
        self.failure_map: FailureMap | None = None
        self.region: FailureRegion | None = None

    @classmethod
    def in_process(cls, config: TrainConfig, policy: FrozenPolicy, out_dir: str | Path | None = None, *,
                   exploration_noise: float = 0.0, sweep: Sweep = Sweep()) -> Probe:
        """The probe with its steps carried out in this process (``LocalSteps``), its envs, sampler and
        discriminator built as the trainer builds them."""
        # small networks only (discriminator, particles): one thread unless the config asks for more; torch's
        # default of one per core spins against any other busy process (40x slower steps seen on 2 cores)
        configure_torch(config.torch_threads or 1, config.flush_denormals)
        parts = build_run_parts(config)  # envs, sampler, discriminator: as the trainer builds them
        check_policy(policy, parts.randomized_env)
        components = Components(parts.space, parts.sampler, parts.discriminator, parts.randomized_env,
                                parts.reference_env, RolloutSettings(config.seed, exploration_noise, exploration_noise,
                                                                     config.rollout_max_steps))
        engine = Engine(None, config, LocalSteps(components, lambda: (policy.policy, 0)))
        return cls(config, policy, parts.space, engine, out_dir, exploration_noise=exploration_noise, sweep=sweep)

    def measure_failures(self, log: Callable[[str], None] = lambda _: None) -> FailureRegion:
        """The policy's failure map over the training range and the region where it fails (said in ``log``)."""
        started = time.perf_counter()
        sweep = self.sweep
        self.failure_map, self.region = measure_failure_map(self.frozen, self.config, sweep.points, sweep.episodes,
                                                            sweep.seeds, sweep.workers)
        if self.recorder is not None:
            self.recorder.write_failure_map(self.failure_map, self.region)
        log(f"failure map ({time.perf_counter() - started:.0f} s): the policy fails at "
            f"{self.region.describe(self.space)} (uniform share {self.region.uniform_share:.2f})")
        return self.region

    @property
    def iteration(self) -> int:
        """Iterations run so far."""
        return self.engine.iteration

    def run(self, iterations: int, log: Callable[[str], None] = lambda _: None) -> ProbeResult:
        """``iterations`` ADR iterations around the frozen policy (the engine, engine/loop.py, with no agent and
        a ``ShareHook``); ``engine.failure`` says why they stopped early, if an iteration could not complete."""
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
