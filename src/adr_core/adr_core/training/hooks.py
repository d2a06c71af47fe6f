"""The driver's hooks (driver.py): what runners do around an iteration, each written once.

``EarlyStopHook`` (the early-stop check; its time is training time), ``RunLogHook`` (metrics.csv,
sampled_parameters.csv, TensorBoard), ``EvaluationHook`` (the learning curve: evaluation.csv, its time excluded),
``CheckpointHook`` (latest checkpoint on a schedule, kept snapshots, a final one), ``ProgressHook`` (a tqdm bar).
``standard_hooks`` builds the ones every training run has, in their order, for the in-process trainer and the
trainer node alike.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..iteration import IterationResult
from ..run_dir import CHECKPOINTS, prepare_run_dir
from .best_policy import BEST_POLICY, BestPolicy
from .driver import Hook, RunState
from .run_log import RunLog

if TYPE_CHECKING:
    from ..base.checkpoint import CheckpointSchedule
    from ..evaluation.early_stop import EarlyStop
    from ..evaluation.periodic import PeriodicEvaluation
    from .config import TrainConfig


class EarlyStopHook(Hook):
    """When due, the early-stop check of the policy after the iteration's update; sets ``run.solved``."""

    def __init__(self, stop: EarlyStop, announce: Callable[[str], None] | None = None) -> None:
        self.stop, self.announce = stop, announce

    def on_start(self, run: RunState) -> None:
        run.solved = self.stop.met  # a resumed run whose last kept check met the rule is done

    def after_update(self, run: RunState, result: IterationResult) -> None:
        run.solved = self.stop.maybe_check(run.agent_steps, run.actor_state_dict(), run.wall_time)
        run.count_training_time(self.stop.last_seconds)
        if run.solved and self.announce is not None:
            self.announce(f"stopping early at {run.agent_steps} agent steps: {self.stop.describe()} met")


class RunLogHook(Hook):
    """The iteration's row and its proposals into the run's files."""

    def __init__(self, log: RunLog) -> None:
        self.log = log

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        self.log.log_iteration(row)
        self.log.log_samples(result.iteration, result.proposals, result.parameters)

    def on_end(self, run: RunState, completed: int, error: BaseException | None) -> None:
        self.log.close()


def open_run_log(config: TrainConfig, out_dir: Path, columns: tuple[str, ...], space_names: list[str],
                 start_iteration: int) -> RunLog:
    """The run's config.yaml and its log files (appended to from ``start_iteration`` on a resumed run)."""
    prepare_run_dir(out_dir)
    config.to_yaml(out_dir / "config.yaml")
    return RunLog(out_dir, columns, space_names, tensorboard=config.tensorboard, start_iteration=start_iteration)


class EvaluationHook(Hook):
    """The learning curve: the periodic evaluation of the policy after the iteration (its time is excluded); with
    ``best``, the actor of each evaluation that beats the best so far is kept (best_policy.py)."""

    def __init__(self, evaluation: PeriodicEvaluation, best: BestPolicy | None = None) -> None:
        self.evaluation, self.best = evaluation, best

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        actor = run.actor_state_dict()
        evaluated = self.evaluation.maybe_run(result.iteration + 1, run.agent_steps, actor, run.wall_time)
        if evaluated is not None and self.best is not None:
            self.best.offer(evaluated, actor)


class CheckpointHook(Hook):
    """``save(name)`` writes the run's state to the checkpoint file ``name`` (a name in the run's checkpoints/):
    ``latest`` when the schedule says so and at the end (unless just written), a kept snapshot every
    ``keep_every`` iterations."""

    def __init__(self, save: Callable[[str], None], schedule: CheckpointSchedule, latest: str,
                 keep_every: int = 0, snapshot_name: Callable[[int], str] | None = None) -> None:
        self.save, self.schedule, self.latest = save, schedule, latest
        self.keep_every, self.snapshot_name = keep_every, snapshot_name
        self.saved_at: int | None = None  # the iteration count of the last ``latest`` this process wrote

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        if self.schedule.due(run.iteration):
            self.save(self.latest)
            self.schedule.written()
            self.saved_at = run.iteration
        if self.keep_every and self.snapshot_name is not None and run.iteration % self.keep_every == 0:
            self.save(self.snapshot_name(run.iteration))

    def on_end(self, run: RunState, completed: int, error: BaseException | None) -> None:
        if error is None and completed and self.saved_at != run.iteration:
            self.save(self.latest)
            self.saved_at = run.iteration


class ProgressHook(Hook):
    """A tqdm bar over the agent-step budget with the iteration's main numbers."""

    LABELS = (("reference_return_mean", "ref"), ("sampler_reward_mean", "rD"), ("discriminator_loss", "LD"),
              ("critic_loss", "LQ"))

    def __init__(self, total: int, description: str, enabled: bool) -> None:
        self.total, self.description, self.enabled = total, description, enabled
        self.bar: Any = None
        self.shown = 0

    def on_start(self, run: RunState) -> None:
        from tqdm.auto import tqdm

        self.shown = min(run.agent_steps, self.total)
        self.bar = tqdm(total=self.total, initial=self.shown, unit="step", desc=self.description,
                        disable=not self.enabled, dynamic_ncols=True)

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        now = min(run.agent_steps, self.total)
        self.bar.update(now - self.shown)
        self.shown = now
        self.bar.set_postfix_str(self.postfix(row), refresh=False)

    def on_end(self, run: RunState, completed: int, error: BaseException | None) -> None:
        self.bar.close()

    @classmethod
    def postfix(cls, row: dict[str, Any]) -> str:
        parts = [f"it {row['iteration']}", f"ret {row['return_mean']:.1f}"]
        for key, label in cls.LABELS:
            value = row.get(key, float("nan"))
            if not math.isnan(value):
                parts.append(f"{label} {value:.3g}")
        return " ".join(parts)


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
