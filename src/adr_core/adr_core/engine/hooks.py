"""The engine's hooks: what runners do around an iteration, each written once, in the spirit of stable-baselines3's
callbacks (``Hook``: every method does nothing unless overridden; ``finish_iteration`` calls them, loop.py).

``EarlyStopHook`` (the early-stop check; its time is training time), ``RunLogHook`` (metrics.csv,
sampled_parameters.csv, TensorBoard), ``EvaluationHook`` (the learning curve: evaluation.csv, its time excluded),
``CheckpointHook`` (latest checkpoint on a schedule, kept snapshots, a final one), ``ProgressHook`` (a tqdm bar).
Which of them a training run has, built from its config: ``adr_core.training.run_hooks.standard_hooks``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..iteration import IterationResult
from .best_policy import BestPolicy
from .run_log import RunLog

if TYPE_CHECKING:
    from ..base.checkpoint import CheckpointSchedule
    from ..evaluation.early_stop import EarlyStop
    from ..evaluation.periodic import PeriodicEvaluation


class RunState(Protocol):
    """What hooks read of (and tell) a run."""

    iteration: int  # iterations completed
    wall_time: float  # training seconds so far (wall_time_s)
    solved: bool  # the early-stop rule was met

    @property
    def agent_steps(self) -> int: ...

    @property
    def agent_updates(self) -> int: ...

    def actor_state_dict(self) -> Mapping[str, torch.Tensor]: ...

    def count_training_time(self, seconds: float) -> None:
        """``seconds`` of work done for the run since its clock was last read (the early stop's check)."""


class Hook:
    """A callback of the engine; every method does nothing unless overridden."""

    def on_start(self, run: RunState) -> None:
        """Before the first iteration of this process."""

    def after_update(self, run: RunState, result: IterationResult) -> None:
        """After the iteration's updates, before its metrics row (time spent here is training time)."""

    def after_row(self, run: RunState, result: IterationResult, row: dict[str, Any]) -> None:
        """After the iteration's metrics row was made."""

    def on_end(self, run: RunState, completed: int, error: BaseException | None) -> None:
        """When the loop ends; ``completed``: iterations this process finished; ``error``: what ended it, if an
        exception did (the state may then be half-way through an iteration: nothing to save)."""


def metrics_row(run: RunState, result: IterationResult) -> dict[str, Any]:
    """The iteration's metrics.csv row: its own metrics and the run's counters."""
    return {**result.metrics(), "agent_steps": run.agent_steps, "agent_updates": run.agent_updates,
            "wall_time_s": run.wall_time}


def finish_iteration(run: RunState, result: IterationResult, hooks: Sequence[Hook]) -> dict[str, Any]:
    """The bookkeeping after one iteration (module docstring); returns its metrics row."""
    for hook in hooks:
        hook.after_update(run, result)
    row = metrics_row(run, result)
    for hook in hooks:
        hook.after_row(run, result, row)
    return row


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
