"""The hooks of a training run, built from its config: every training run's (``standard_hooks``: the early stop, the
run's files, the learning curve, the best policy), for the in-process trainer and the trainer node alike; the hooks
themselves are the engine's (adr_core/engine/hooks.py). metrics.csv's columns (``run_metric_columns``) are set here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.best_policy import BEST_POLICY, BestPolicy
from ..engine.hooks import EarlyStopHook, EvaluationHook, Hook, RunLogHook
from ..engine.run_log import RunLog
from ..run_dir import CHECKPOINTS, prepare_run_dir

if TYPE_CHECKING:
    from ..evaluation.early_stop import EarlyStop
    from ..evaluation.periodic import PeriodicEvaluation
    from .config import TrainConfig


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
    """metrics.csv's columns for this run: the shared ones (a layout fixed since the first runs: ADR's and boundary
    ADR's statistics among them), then those of its sampler's record not among them (any other sampler's, built-in
    or plug-in)."""
    own = tuple(c for c in config.sampler_record.metric_columns if c not in METRIC_COLUMNS)
    return METRIC_COLUMNS + own


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
                    config.early_stop_confirm_solved_fraction, config.early_stop_range_episodes,
                    config.early_stop_range_solved_fraction, config.early_stop_hard_episodes,
                    config.early_stop_hard_solved_fraction)
    return EarlyStop(out_dir, config.env_id, rule, max_episode_steps=config.max_episode_steps, space=config.space,
                     start_steps=start_steps)


@dataclass
class StandardHooks:
    """The hooks of a training run (``hooks``, in order), with the run's log (None without an output directory)
    and its periodic evaluation (None when off), which their owners close and read."""

    hooks: list[Hook]
    log: RunLog | None
    evaluation: PeriodicEvaluation | None


def standard_hooks(config: TrainConfig, out_dir: Path | None, iteration: int, agent_steps: int,
                   space_names: list[str], *, after_log: Sequence[Hook] = (),
                   announce: Callable[[str], None] | None = None,
                   identity: Mapping[str, Any] | None = None) -> StandardHooks:
    """Every training run's hooks: the early stop (``announce`` says when it is met), the run's files (config.yaml,
    metrics.csv, sampled_parameters.csv), ``after_log`` (the runner's own: the in-process trainer's checkpoints, the
    trainer node's bookkeeping), the learning curve and, with the run's ``identity`` (run_dir.run_identity), the best
    evaluated policy in checkpoints/best.pt; files only with an ``out_dir``. ``iteration`` and ``agent_steps``: where
    the run starts (a resumed run appends)."""
    hooks: list[Hook] = []
    stop = early_stop(config, out_dir, agent_steps)
    if stop is not None:
        hooks.append(EarlyStopHook(stop, announce=announce))
    log = evaluation = None
    if out_dir is not None:
        log = open_run_log(config, out_dir, run_metric_columns(config), space_names, iteration)
        hooks.append(RunLogHook(log))
    hooks += after_log
    if out_dir is not None:
        evaluation = periodic_evaluation(config, out_dir, iteration)
        if evaluation is not None:
            best = (None if identity is None else
                    BestPolicy(out_dir / CHECKPOINTS / BEST_POLICY, identity, config.to_dict()))
            hooks.append(EvaluationHook(evaluation, best))
    return StandardHooks(hooks, log, evaluation)


def open_run_log(config: TrainConfig, out_dir: Path, columns: tuple[str, ...], space_names: list[str],
                 start_iteration: int) -> RunLog:
    """The run's config.yaml and its log files (appended to from ``start_iteration`` on a resumed run)."""
    prepare_run_dir(out_dir)
    config.to_yaml(out_dir / "config.yaml")
    return RunLog(out_dir, columns, space_names, tensorboard=config.tensorboard, start_iteration=start_iteration)
