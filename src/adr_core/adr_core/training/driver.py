"""Algorithm 1's outer loop and the bookkeeping around each iteration, written once.

A runner supplies one iteration (``adr_core.iteration.run_iteration`` in-process; ``remote.RemoteRun`` when the
node graph's processes do the steps) and its run state (``RunState``); ``finish_iteration`` then does what every
runner does after an iteration, through hooks in the spirit of stable-baselines3's callbacks::

    for hook in hooks: hook.after_update(run, result)        # the early stop: its check is training time
    row = metrics row of the iteration (result.metrics() + the run's counters)
    for hook in hooks: hook.after_row(run, result, row)      # metrics.csv, checkpoints, the learning curve, progress

and ``drive`` loops ``iterate`` + ``finish_iteration`` until the run is done (budget or early stop), asked to stop,
or ``max_iterations`` more have run; each hook's ``on_end`` runs also when an iteration raised. The hooks are in
hooks.py; the in-process ``Trainer``, the ``Probe`` and ``RemoteRun`` (the trainer node) use them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..iteration import IterationResult

if TYPE_CHECKING:
    from ..agents import OffPolicyAgent
    from .config import TrainConfig


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


class AgentRun:
    """The parts of ``RunState`` a run's own agent answers, and when such a run is done (its budget or the early
    stop): shared by the in-process ``Trainer`` and ``remote.RemoteRun``."""

    agent: OffPolicyAgent
    config: TrainConfig
    solved: bool

    @property
    def agent_steps(self) -> int:
        return self.agent.transitions_seen

    @property
    def agent_updates(self) -> int:
        return self.agent.updates_done

    def actor_state_dict(self) -> dict[str, torch.Tensor]:
        return self.agent.actor_state_dict()

    @property
    def done(self) -> bool:
        return self.solved or self.agent.transitions_seen >= self.config.total_agent_steps


class Hook:
    """A callback of the driver; every method does nothing unless overridden."""

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


def drive(run: RunState, iterate: Callable[[], IterationResult], hooks: Sequence[Hook], *,
          done: Callable[[], bool], stop_requested: Callable[[], bool] = lambda: False,
          max_iterations: int | None = None) -> list[dict[str, Any]]:
    """Iterate until ``done()``, ``stop_requested()`` or ``max_iterations`` more iterations; returns the rows."""
    rows: list[dict[str, Any]] = []
    for hook in hooks:
        hook.on_start(run)
    error: BaseException | None = None
    try:
        while not done() and not stop_requested() and (max_iterations is None or len(rows) < max_iterations):
            rows.append(finish_iteration(run, iterate(), hooks))
    except BaseException as raised:
        error = raised
        raise
    finally:
        for hook in hooks:
            hook.on_end(run, len(rows), error)
    return rows
