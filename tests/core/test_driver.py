"""The engine of Algorithm 1's loop (adr_core.engine.loop.Engine): hooks run in order around each iteration, the
loop ends on the early stop / a stop request / max_iterations, an iteration that raises leaves no checkpoint of a
half-done state, and an iteration whose feedback never came ends a sync run with the iteration to redo."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from adr_core.base.checkpoint import CheckpointSchedule
from adr_core.engine.hooks import CheckpointHook, Hook
from adr_core.engine.loop import Engine
from adr_core.iteration import Feedback, Proposals, Rollouts
from adr_core.training.config import TrainConfig


class FakeSteps:
    """Two particles per iteration, no trajectories; ``fail_at``: roll_out raises there; ``lose_feedback_at``: the
    sampler's update of that iteration never comes."""

    sampler_learns = True

    def __init__(self, fail_at: int | None = None, lose_feedback_at: int | None = None) -> None:
        self.fail_at, self.lose_feedback_at = fail_at, lose_feedback_at
        self.calls: list[str] = []

    def propose(self, k: int) -> Proposals:
        self.calls.append(f"propose{k}")
        return Proposals(np.zeros((2, 1)), np.zeros((2, 1)))

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        if k == self.fail_at:
            raise RuntimeError("simulator died")
        self.calls.append(f"roll_out{k}")
        return Rollouts([], [])

    def publish_weights(self) -> None:
        self.calls.append("publish")

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        self.calls.append(f"feedback{k}")
        lost = k == self.lose_feedback_at
        return Feedback(np.zeros(2), None if lost else {"sampler_loss": 0.0}, timings={"time_transport_s": 0.5})


class Recorder(Hook):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def on_start(self, run) -> None:
        self.log.append(f"{self.name}:start")

    def after_update(self, run, result) -> None:
        self.log.append(f"{self.name}:update{result.iteration}")

    def after_row(self, run, result, row) -> None:
        assert row["iteration"] == result.iteration and row["agent_steps"] == run.agent_steps
        assert row["time_transport_s"] == 0.5  # the executor's own timing columns reach the row
        self.log.append(f"{self.name}:row{result.iteration}")

    def on_end(self, run, completed, error) -> None:
        self.log.append(f"{self.name}:end{completed}:{type(error).__name__ if error else None}")


class EarlyStopAt(Hook):
    def __init__(self, iteration: int) -> None:
        self.iteration = iteration

    def after_update(self, run, result) -> None:
        run.solved = result.iteration >= self.iteration


def engine(steps: FakeSteps, **kwargs) -> Engine:
    return Engine(None, TrainConfig(), steps, warn=lambda _: None, **kwargs)


def test_hooks_run_in_order_around_each_iteration_until_the_early_stop() -> None:
    log: list[str] = []
    run = engine(steps := FakeSteps())
    run.start([EarlyStopAt(1), Recorder("a", log), Recorder("b", log)])
    rows = run.run()
    assert [r["iteration"] for r in rows] == [0, 1] and run.iteration == 2 and run.last_completed == 1
    assert log == ["a:start", "b:start", "a:update0", "b:update0", "a:row0", "b:row0", "a:update1", "b:update1",
                   "a:row1", "b:row1", "a:end2:None", "b:end2:None"]
    # no agent (a probe): nothing is published; each iteration proposes, rolls out, then takes its feedback
    assert steps.calls == ["propose0", "roll_out0", "feedback0", "propose1", "roll_out1", "feedback1"]


def test_stop_request_and_max_iterations_end_the_loop_at_an_iteration_boundary() -> None:
    run = engine(FakeSteps())
    run.start([])
    assert len(run.run(max_iterations=3)) == 3 and len(run.run(max_iterations=2)) == 2 and run.iteration == 5

    class StopAfter(Hook):
        def after_row(self, run, result, row) -> None:
            if result.iteration == 1:
                stop.set()

    stop = threading.Event()
    run = engine(FakeSteps(), stop_requested=stop)
    run.start([StopAfter()])
    assert len(run.run()) == 2 and run.failure is None


def test_an_iteration_that_raises_ends_the_hooks_without_a_final_checkpoint() -> None:
    saved: list[tuple[str, int]] = []
    log: list[str] = []
    run = engine(FakeSteps(fail_at=2))
    checkpoint = CheckpointHook(lambda name: saved.append((name, run.iteration)),
                                CheckpointSchedule(every=100, every_s=0.0), "latest.pt")
    run.start([checkpoint, Recorder("r", log)])
    with pytest.raises(RuntimeError, match="simulator died"):
        run.run()
    # the schedule's save after the first completed iteration, and none at the end: iteration 2 was half done
    assert saved == [("latest.pt", 1)] and log[-1] == "r:end2:RuntimeError" and run.last_completed == 1
    saved.clear()
    run = engine(FakeSteps())
    checkpoint = CheckpointHook(lambda name: saved.append((name, run.iteration)),
                                CheckpointSchedule(every=100, every_s=0.0), "latest.pt")
    run.start([checkpoint])
    run.run(max_iterations=3)
    assert saved == [("latest.pt", 1), ("latest.pt", 3)]  # a normal end saves the last completed iteration


def test_a_sync_iteration_whose_feedback_never_came_ends_the_run_to_be_redone() -> None:
    run = engine(FakeSteps(lose_feedback_at=1))
    run.start([])
    rows = run.run()
    assert [r["iteration"] for r in rows] == [0]
    assert run.failure is not None and "iteration 1 did not complete: the sampler's update" in run.failure
    assert run.iteration == 1 and run.last_completed == 0  # a resumed run redoes iteration 1
