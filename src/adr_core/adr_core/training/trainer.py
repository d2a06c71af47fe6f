"""The in-process runner of Algorithm 1 (Active Domain Randomization): builds the pieces, loops, logs, checkpoints.

The iteration itself is ``adr_core.iteration.run_iteration`` (the steps every runner shares); the policy of iteration
k is the agent's actor at the end of k-1. The run stops at the first iteration boundary at which the agent has taken
``total_agent_steps`` steps; the last iteration stores only what the budget has left (``update_agent``), so it ends
at the budget exactly.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from .. import run_dir
from ..agents import ActorPolicy, OffPolicyAgent, make_agent
from ..iteration import Components, IterationResult, RolloutSettings, run_iteration

__all__ = ["IterationResult", "METRIC_COLUMNS", "Trainer", "early_stop", "periodic_evaluation", "resolve_device",
           "run_metric_columns"]
from ..base.checkpoint import (
    CheckpointError,
    CheckpointSchedule,
    global_rng_state,
    load_checkpoint,
    require_keys,
    save_checkpoint,
    set_global_rng_state,
)
from ..base.seeding import component_seed
from ..samplers import Sampler
from .components import build_run_parts
from .config import ConfigError, TrainConfig
from .driver import AgentRun, Hook, drive
from .hooks import CheckpointHook, EarlyStopHook, EvaluationHook, ProgressHook, RunLogHook, open_run_log

if TYPE_CHECKING:

    from ..evaluation.early_stop import EarlyStop
    from ..evaluation.periodic import PeriodicEvaluation

CONFIG_FILE, CHECKPOINT_DIR, LATEST = run_dir.CONFIG_FILE, run_dir.CHECKPOINTS, run_dir.IN_PROCESS_LATEST

METRIC_COLUMNS = (
    "iteration", "agent_steps", "agent_updates", "wall_time_s", "episodes",
    "return_mean", "return_min", "return_max", "length_mean", "solved_fraction", "final_distance_mean",
    "reference_return_mean", "reference_solved_fraction", "reference_final_distance_mean",
    "sampler_reward_mean", "sampler_reward_std", "d_randomized", "d_reference",
    "critic_loss", "actor_loss", "entropy_alpha", "policy_entropy", "n_updates",
    "discriminator_loss", "discriminator_steps",
    "svpg_value_loss", "svpg_objective", "svpg_bandwidth", "svpg_kernel_mean", "svpg_log_std",
    "boundary_width_mean", "boundary_low_mean", "boundary_high_mean", "boundary_edges_moved",  # boundary ADR's ranges
    "time_rollouts_s", "time_agent_s", "time_sampler_s", "time_discriminator_s", "time_iteration_s",
    "time_transport_s",  # graph runs: summed publish -> receive time of the iteration's randomized trajectories
)


def run_metric_columns(config: TrainConfig) -> tuple[str, ...]:
    """metrics.csv's columns for this run: the shared ones, then those of its sampler's record not among them (a
    plug-in sampler's statistics)."""
    from ..samplers import sampler_record

    own = tuple(c for c in sampler_record(config.sampler).metric_columns if c not in METRIC_COLUMNS)
    return METRIC_COLUMNS + own


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for, but torch sees no CUDA device (use 'cpu' or 'auto')")
    return torch.device(name)


def periodic_evaluation(config: TrainConfig, out_dir: Path, start_iteration: int) -> PeriodicEvaluation | None:
    """The learning-curve hook (reference and 'hard' settings) both trainers call after each iteration, or None."""
    if not config.evaluate_every and not config.evaluate_every_steps:
        return None
    from ..evaluation.periodic import PeriodicEvaluation

    return PeriodicEvaluation(out_dir, config.env_id, every=config.evaluate_every,
                              every_steps=config.evaluate_every_steps, settings=list(config.evaluate_settings),
                              episodes=config.evaluate_episodes, max_episode_steps=config.max_episode_steps,
                              start_iteration=start_iteration, space=config.space)


def early_stop(config: TrainConfig, out_dir: Path | None, start_steps: int) -> EarlyStop | None:
    """The early-stop check (``early_stop_*`` keys) both trainers call after each iteration, or None."""
    if not config.early_stop_every_steps:
        return None
    from ..evaluation.early_stop import EarlyStop, StopRule

    rule = StopRule(config.early_stop_every_steps, config.early_stop_episodes, config.early_stop_solved_fraction,
                    config.early_stop_return_mean, config.early_stop_confirm_episodes,
                    config.early_stop_confirm_solved_fraction)
    return EarlyStop(out_dir, config.env_id, rule, max_episode_steps=config.max_episode_steps, space=config.space,
                     start_steps=start_steps)


class Trainer(AgentRun):
    """Builds the pieces from a ``TrainConfig`` and runs Algorithm 1. ``out_dir=None``: no files, no logs."""

    def __init__(self, config: TrainConfig, out_dir: str | Path | None = None, *, resume: bool = False,
                 bootstrap_from: str | Path | None = None) -> None:
        if resume and bootstrap_from is not None:
            raise ConfigError("--resume continues a run; --bootstrap starts a new one: choose one")
        if resume and out_dir is None:
            raise ConfigError("resuming needs the run's output directory")
        self.config = config
        self.out_dir = None if out_dir is None else Path(out_dir)
        self.device = resolve_device(config.device)
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)

        parts = build_run_parts(config, self.device)  # envs, sampler, discriminator (components.py)
        self.randomized_env, self.reference_env, self.space = parts.randomized_env, parts.reference_env, parts.space
        self.obs_dim, self.act_dim = parts.obs_dim, parts.act_dim
        self.sampler: Sampler = parts.sampler
        self.discriminator = parts.discriminator
        self.agent: OffPolicyAgent = make_agent(config.agent, self.obs_dim, self.act_dim,
                                                component_seed(config.seed, "agent"), self.device, config.goal_layout)
        self._learner_pool = (ThreadPoolExecutor(1, thread_name_prefix="adr-discriminator")
                              if config.concurrent_learning else None)
        self.iteration = 0
        self.schedule = CheckpointSchedule(config.checkpoint_every, config.checkpoint_every_s)
        self.wall_time = 0.0
        self.stop_requested = False  # set (e.g. by a Ctrl-C handler) to end ``run`` at the next iteration boundary
        self.solved = False  # the early-stop rule was met: the run is done before its budget

        if resume:
            self.load_checkpoint(self.checkpoint_dir / LATEST)
        elif bootstrap_from is not None:
            self.bootstrap(bootstrap_from)

    # ------------------------------------------------------------------ one iteration
    def components(self) -> Components:
        return Components(space=self.space, sampler=self.sampler, discriminator=self.discriminator,
                          randomized_env=self.randomized_env, reference_env=self.reference_env,
                          rollouts=RolloutSettings(self.config.seed, self.config.agent.exploration_noise,
                                                   self.config.reference_noise, self.config.rollout_max_steps),
                          agent=self.agent, budget=self.config.total_agent_steps,
                          learn_from_reference=self.config.learn_from_reference, learner_pool=self._learner_pool)

    def run_iteration(self) -> IterationResult:
        policy = ActorPolicy.from_state_dict(self.agent.actor_state_dict())
        result = run_iteration(self.components(), self.iteration, policy, self.agent.policy_version)
        self.iteration += 1
        self.wall_time += result.timings["time_iteration_s"]
        return result

    # ------------------------------------------------------------------ the loop
    @property
    def checkpoint_dir(self) -> Path:
        if self.out_dir is None:
            raise ConfigError("this trainer has no output directory")
        return self.out_dir / CHECKPOINT_DIR

    def count_training_time(self, seconds: float) -> None:
        self.wall_time += seconds

    def hooks(self) -> list[Hook]:
        """The bookkeeping of ``run`` (driver.py): early stop, files, checkpoints, learning curve, progress bar."""
        cfg = self.config
        hooks: list[Hook] = []
        stop = early_stop(cfg, self.out_dir, self.agent_steps)
        if stop is not None:
            hooks.append(EarlyStopHook(stop))
        if self.out_dir is not None:
            log = open_run_log(cfg, self.out_dir, run_metric_columns(cfg), self.space.names, self.iteration)
            hooks += [RunLogHook(log),
                      CheckpointHook(lambda name: self._save_named(name), self.schedule, LATEST,
                                     cfg.keep_checkpoint_every, run_dir.snapshot_file)]
            evaluation = periodic_evaluation(cfg, self.out_dir, self.iteration)
            if evaluation is not None:
                hooks.append(EvaluationHook(evaluation))
        hooks.append(ProgressHook(cfg.total_agent_steps, f"{cfg.sampler} {cfg.env_id}", cfg.progress))
        return hooks

    def run(self, max_iterations: int | None = None) -> list[dict[str, Any]]:
        """Iterate until the budget, the early stop, ``stop_requested`` or ``max_iterations`` more iterations;
        returns the metric rows (driver.drive with ``hooks()``)."""
        return drive(self, self.run_iteration, self.hooks(), done=lambda: self.done,
                     stop_requested=lambda: self.stop_requested, max_iterations=max_iterations)

    def _save_named(self, name: str) -> None:
        self.save_checkpoint(self.checkpoint_dir / name)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "agent_steps": self.agent_steps, "wall_time": self.wall_time,
                "config": self.config.to_dict(), **self._identity(), "sampler_kind": self.config.sampler,
                "agent": self.agent.state_dict(), "sampler": self.sampler.state_dict(),
                "discriminator": self.discriminator.state_dict(), "rng": global_rng_state()}

    def save_checkpoint(self, path: str | Path) -> Path:
        return save_checkpoint(path, self.state_dict())

    def load_checkpoint(self, path: str | Path) -> None:
        """Continue the run saved at ``path``; the config must match except for runtime fields."""
        payload = self._read_compatible(path, ("iteration", "config", "agent", "sampler", "discriminator", "rng"))
        run_dir.check_config(payload["config"], self.config, path)
        try:
            self.agent.load_state_dict(payload["agent"])
            self.sampler.load_state_dict(payload["sampler"])
            self.discriminator.load_state_dict(payload["discriminator"])
        except (KeyError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this run: {exc}") from None
        set_global_rng_state(payload["rng"])
        self.iteration, self.wall_time = int(payload["iteration"]), float(payload["wall_time"])

    def bootstrap(self, path: str | Path) -> None:
        """Paper appendix 'Bootstrapping Training of New Agents': reuse a run's sampler and discriminator."""
        payload = self._read_compatible(path, ("sampler", "discriminator"))
        if payload["sampler_kind"] != self.config.sampler:
            raise CheckpointError(f"{path} holds a {payload['sampler_kind']!r} sampler, this run uses "
                                  f"{self.config.sampler!r}")
        try:
            self.sampler.load_state_dict(payload["sampler"])
            self.discriminator.load_state_dict(payload["discriminator"])
        except (KeyError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this run: {exc}") from None

    def _identity(self) -> dict[str, Any]:
        return run_dir.run_identity(self.config.env_id, self.space.to_dict(), self.obs_dim, self.act_dim)

    def _read_compatible(self, path: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
        payload = load_checkpoint(path, map_location="cpu")
        require_keys(payload, (*run_dir.IDENTITY_KEYS, "sampler_kind", *keys), path)
        run_dir.check_identity(payload, self._identity(), path)
        return payload
