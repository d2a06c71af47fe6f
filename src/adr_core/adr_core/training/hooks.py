"""The driver's hooks (driver.py): what runners do around an iteration, each written once.

``EarlyStopHook`` (the early-stop check; its time is training time), ``RunLogHook`` (metrics.csv,
sampled_parameters.csv, TensorBoard), ``EvaluationHook`` (the learning curve: evaluation.csv, its time excluded),
``CheckpointHook`` (latest checkpoint on a schedule, kept snapshots, a final one), ``ProgressHook`` (a tqdm bar).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..iteration import IterationResult
from ..run_dir import prepare_run_dir
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
    """The learning curve: the periodic evaluation of the policy after the iteration (its time is excluded)."""

    def __init__(self, evaluation: PeriodicEvaluation) -> None:
        self.evaluation = evaluation

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        self.evaluation.maybe_run(result.iteration + 1, run.agent_steps, run.actor_state_dict(), run.wall_time)


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
