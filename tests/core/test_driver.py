"""The driver of Algorithm 1's loop (adr_core.training.driver): hooks run in order around each iteration, the loop
ends on done / stop / max_iterations, and an iteration that raises leaves no checkpoint of a half-done state."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from adr_core.base.checkpoint import CheckpointSchedule
from adr_core.iteration import IterationResult
from adr_core.training.driver import Hook, drive
from adr_core.training.hooks import CheckpointHook


@dataclass
class FakeRun:
    iteration: int = 0
    wall_time: float = 0.0
    solved: bool = False
    agent_steps: int = 0
    agent_updates: int = 0
    extra_seconds: list[float] = field(default_factory=list)

    def actor_state_dict(self) -> dict:
        return {}

    def count_training_time(self, seconds: float) -> None:
        self.extra_seconds.append(seconds)
        self.wall_time += seconds

    def iterate(self) -> IterationResult:
        k = self.iteration
        self.iteration += 1
        self.agent_steps += 100
        return IterationResult(k, np.zeros((2, 1)), np.zeros((2, 1)), 0, [], [], None, 0, {}, {}, {},
                               {"time_iteration_s": 1.0})


class Recorder(Hook):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def on_start(self, run) -> None:
        self.log.append(f"{self.name}:start")

    def after_update(self, run, result) -> None:
        self.log.append(f"{self.name}:update{result.iteration}")

    def after_row(self, run, result, row) -> None:
        assert row["agent_steps"] == run.agent_steps and row["iteration"] == result.iteration
        self.log.append(f"{self.name}:row{result.iteration}")

    def on_end(self, run, completed, error) -> None:
        self.log.append(f"{self.name}:end{completed}:{type(error).__name__ if error else None}")


def test_hooks_run_in_order_around_each_iteration_until_done() -> None:
    run, log = FakeRun(), []
    rows = drive(run, run.iterate, [Recorder("a", log), Recorder("b", log)], done=lambda: run.agent_steps >= 200)
    assert [r["iteration"] for r in rows] == [0, 1]
    assert log == ["a:start", "b:start", "a:update0", "b:update0", "a:row0", "b:row0", "a:update1", "b:update1",
                   "a:row1", "b:row1", "a:end2:None", "b:end2:None"]


def test_stop_request_and_max_iterations_end_the_loop_at_an_iteration_boundary() -> None:
    run = FakeRun()
    assert len(drive(run, run.iterate, [], done=lambda: False, max_iterations=3)) == 3
    run, calls = FakeRun(), []
    stop_after_two = lambda: len(calls.append(1) or calls) > 2  # asked before each iteration
    assert len(drive(run, run.iterate, [], done=lambda: False, stop_requested=stop_after_two)) == 2


def test_an_iteration_that_raises_ends_the_hooks_without_a_final_checkpoint() -> None:
    run, saved, log = FakeRun(), [], []

    def iterate() -> IterationResult:
        if run.iteration == 2:
            raise RuntimeError("simulator died")
        return run.iterate()

    checkpoint = CheckpointHook(lambda name: saved.append((name, run.iteration)),
                                CheckpointSchedule(every=100, every_s=0.0), "latest.pt")
    with pytest.raises(RuntimeError, match="simulator died"):
        drive(run, iterate, [checkpoint, Recorder("r", log)], done=lambda: False)
    # the schedule's save after the first completed iteration, and none at the end: iteration 2 was half done
    assert saved == [("latest.pt", 1)] and log[-1] == "r:end2:RuntimeError"
    run, saved[:] = FakeRun(), []
    checkpoint = CheckpointHook(lambda name: saved.append((name, run.iteration)),
                                CheckpointSchedule(every=100, every_s=0.0), "latest.pt")
    drive(run, run.iterate, [checkpoint], done=lambda: run.iteration >= 3)
    assert saved == [("latest.pt", 1), ("latest.pt", 3)]  # a normal end saves the last completed iteration
