"""``Probe``: Algorithm 1 with a frozen policy (no agent updates), recording where the sampler proposes.

    probe = Probe(config, load_frozen_policy(spec, config.env_id, space), out_dir)
    probe.measure_failures()          # the policy's failure map over the training range (failure.py)
    result = probe.run(200)           # iterations of adr_core.iteration.run_iteration with agent=None

Files in ``out_dir``: ``probe_config.yaml`` (the run's config and the probe's options), ``failure_map.csv``,
``proposals.csv`` (every proposal: iteration, slot, normalized and physical values, discriminator reward, the
episode's return and outcome, whether it lies in the failure region), ``iterations.csv`` (per iteration: share of
proposals in the failure region, reward, discriminator and particle statistics, seconds) and ``focus.json`` (the
focus statistics below). ``figure.py`` draws ``probe.png`` from them.

Focus, a rule fixed before any probe was run: ``share`` = fraction of an iteration's proposals inside the failure
region; the focus ratio of a window of iterations = its mean share / the region's uniform share. The sampler's focus
holds when the ratio over the second half of the iterations is >= 2 and so is the ratio over the last quarter (it
has not drifted away by the end).
"""
from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from ..discriminator import DiscriminatorRewarder
from ..envs import make_env
from ..evaluation.episodes import PolicySpec
from ..iteration import Components, IterationResult, RolloutSettings, run_iteration
from ..samplers import make_sampler
from ..training.config import TrainConfig
from ..training.seeding import component_seed
from .failure import FailureMap, FailureRegion, failure_region, sweep_training_range
from .policies import FrozenPolicy, check_policy

FOCUS_RATIO = 2.0  # the focus target: share in the failure region / uniform share


@dataclass
class ProbeResult:
    region: FailureRegion
    shares: list[float] = field(default_factory=list)  # per iteration
    focus: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # the iterations (the failure sweep excluded)


def focus_statistics(shares: list[float], uniform_share: float) -> dict[str, Any]:
    n = len(shares)
    shares_array = np.asarray(shares, dtype=np.float64)

    def window(a: int, b: int) -> float:
        return float(shares_array[a:b].mean()) if b > a else float("nan")

    out: dict[str, Any] = {"iterations": n, "uniform_share": uniform_share,
                           "share_whole": window(0, n), "share_first_half": window(0, n // 2),
                           "share_second_half": window(n // 2, n), "share_last_quarter": window(3 * n // 4, n)}
    for key in ("whole", "first_half", "second_half", "last_quarter"):
        out[f"ratio_{key}"] = out[f"share_{key}"] / uniform_share if uniform_share > 0 else float("nan")
    out["focus_held"] = bool(out["ratio_second_half"] >= FOCUS_RATIO and out["ratio_last_quarter"] >= FOCUS_RATIO)
    return out


class Probe:
    def __init__(self, config: TrainConfig, policy: FrozenPolicy, out_dir: str | Path | None = None, *,
                 exploration_noise: float = 0.0, sweep_points: int = 13, sweep_episodes: int = 5,
                 sweep_seeds: tuple[int, ...] = (0, 1), workers: int | None = None) -> None:
        self.config, self.frozen, self.out_dir = config, policy, None if out_dir is None else Path(out_dir)
        # small networks only (discriminator, particles): one thread unless the config asks for more; torch's
        # default of one per core spins against any other busy process (40x slower steps seen on 2 cores)
        torch.set_num_threads(config.torch_threads or 1)
        env_kwargs = {} if config.max_episode_steps is None else {"max_episode_steps": config.max_episode_steps}
        self.randomized_env = make_env(config.env_id, **env_kwargs)
        self.reference_env = make_env(config.env_id, **env_kwargs)
        check_policy(policy, self.randomized_env)
        self.space = self.randomized_env.unwrapped.randomization_space
        obs_dim = int(np.prod(self.randomized_env.observation_space.shape))
        act_dim = int(np.prod(self.randomized_env.action_space.shape))
        seed = config.seed
        self.sampler = make_sampler(config.sampler, self.space, config.resolved_svpg(),
                                    component_seed(seed, "sampler"), config.fixed_range)
        self.discriminator = DiscriminatorRewarder(obs_dim, act_dim, config.discriminator,
                                                   component_seed(seed, "discriminator"))
        self.components = Components(self.space, self.sampler, self.discriminator, self.randomized_env,
                                     self.reference_env, RolloutSettings(seed, exploration_noise, exploration_noise))
        self.options = {"policy": policy.spec, "policy_kind": policy.kind, "exploration_noise": exploration_noise,
                        "sweep_points": sweep_points, "sweep_episodes": sweep_episodes,
                        "sweep_seeds": list(sweep_seeds)}
        self.sweep_points, self.sweep_episodes, self.sweep_seeds = sweep_points, sweep_episodes, tuple(sweep_seeds)
        self.workers = workers
        self.failure_map: FailureMap | None = None
        self.region: FailureRegion | None = None
        self.iteration = 0

    # ------------------------------------------------------------------ the failure map
    def measure_failures(self) -> FailureRegion:
        spec = PolicySpec(self.config.env_id, self.frozen.weights or {}, self.config.max_episode_steps,
                          callable_path=self.frozen.callable_path)
        self.failure_map = sweep_training_range(spec, self.space, self.sweep_points, self.sweep_episodes,
                                                self.sweep_seeds, self.workers)
        self.region = failure_region(self.failure_map)
        if self.out_dir is not None:
            self._write_failure_map()
        return self.region

    # ------------------------------------------------------------------ the iterations
    def run(self, iterations: int, log: Callable[[str], None] = lambda _: None) -> ProbeResult:
        if self.region is None:
            self.measure_failures()
        assert self.region is not None
        result = ProbeResult(self.region)
        writers = self._open_files() if self.out_dir is not None else None
        try:
            started = time.perf_counter()
            for _ in range(iterations):
                step = run_iteration(self.components, self.iteration, self.frozen.policy)
                inside = self.region.contains(step.proposals)
                share = float(inside.mean())
                result.shares.append(share)
                if writers is not None:
                    self._write_iteration(writers, step, inside, share)
                self.iteration += 1
                if self.iteration % 10 == 0:
                    log(f"iteration {self.iteration}/{iterations}: share in the failure region {share:.2f} "
                        f"(uniform {self.region.uniform_share:.2f}), mean of the last 10 "
                        f"{np.mean(result.shares[-10:]):.2f}")
            result.seconds = time.perf_counter() - started
        finally:
            if writers is not None:
                for handle, _ in writers.values():
                    handle.close()
        result.focus = {**focus_statistics(result.shares, self.region.uniform_share),
                        "region": self.region.to_dict(), "region_described": self.region.describe(self.space),
                        "probe_seconds": result.seconds, "seed": self.config.seed, "sampler": self.config.sampler}
        if self.out_dir is not None:
            (self.out_dir / "focus.json").write_text(json.dumps(result.focus, indent=1))
        return result

    # ------------------------------------------------------------------ files
    def _open_files(self) -> dict[str, tuple[Any, Any]]:
        assert self.out_dir is not None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "probe_config.yaml").write_text(
            yaml.safe_dump({"config": self.config.to_dict(), "probe": self.options}, sort_keys=False))
        names = self.space.names
        columns = {"proposals": ["iteration", "slot", *(f"u_{n}" for n in names), *names, "reward",
                                 "episode_return", "solved", "length", "in_failure_region"],
                   "iterations": ["iteration", "share_in_failure_region", "reward_mean", "reward_std", "d_randomized",
                                  "d_reference", "discriminator_loss", "svpg_bandwidth", "svpg_kernel_mean",
                                  "svpg_log_std", "return_mean", "solved_fraction", "time_iteration_s"]}
        writers = {}
        for name, header in columns.items():
            handle = (self.out_dir / f"{name}.csv").open("w", newline="")
            writer = csv.writer(handle)
            writer.writerow(header)
            writers[name] = (handle, writer)
        return writers

    def _write_iteration(self, writers: dict, step: IterationResult, inside: np.ndarray, share: float) -> None:
        rewards = step.rewards if step.rewards is not None else np.full(len(step.proposals), np.nan)
        _, proposals = writers["proposals"]
        for slot, trajectory in enumerate(step.randomized):
            proposals.writerow([step.iteration, slot, *(repr(float(v)) for v in step.proposals[slot]),
                                *(repr(float(v)) for v in step.parameters[slot]), repr(float(rewards[slot])),
                                repr(trajectory.episode_return), int(trajectory.solved), trajectory.length,
                                int(inside[slot])])
        m = step.metrics()
        _, iterations = writers["iterations"]
        iterations.writerow([step.iteration, share, m["sampler_reward_mean"], m["sampler_reward_std"],
                             *(m.get(k, float("nan")) for k in ("d_randomized", "d_reference", "discriminator_loss",
                                                                "svpg_bandwidth", "svpg_kernel_mean", "svpg_log_std")),
                             m["return_mean"], m["solved_fraction"], m["time_iteration_s"]])

    def _write_failure_map(self) -> None:
        assert self.out_dir is not None and self.failure_map is not None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        fm = self.failure_map
        with (self.out_dir / "failure_map.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["dimension", "u", "value", "solved_fraction", "return_mean", "final_distance_mean"])
            for i, (u, x) in enumerate(zip(fm.normalized, fm.physical)):
                d = int(fm.swept[i])
                writer.writerow([self.space.names[d], repr(float(u[d])), repr(float(x[d])),
                                 repr(float(fm.solved_fraction()[i])), repr(float(fm.mean_return()[i])),
                                 repr(float(fm.mean_final_distance()[i]))])
