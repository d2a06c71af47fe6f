"""Algorithm 1 when other processes carry out its steps (the ROS 2 node graph): the loop and the learning step,
written once and without ROS.

The trainer node supplies the steps (``RemoteSteps``; its implementation over services, actions and topics is
``adr_trainer_node/graph_steps.py``) and the hooks that are the graph's own (progress topics, the graph's
checkpoint); ``RemoteRun`` runs them::

    k:  proposals = steps.propose(k)                     # the sampler's settings of iteration k
        randomized, reference = steps.roll_out(k, proposals, min_version)
        learn(k): store + update (iteration.update_agent); steps.publish_weights()
                  feedback = steps.feedback(k)           # the discriminator's rewards, the sampler's update statistics
                  IterationResult -> driver.finish_iteration(hooks)

``overlap=False`` (the graph's ``sync`` mode, Algorithm 1 as the in-process trainer runs it): iteration k+1 is
proposed after k was learned from, with rollouts of the newest policy only. ``overlap=True`` (``async``): the update
of iteration k runs in a thread while iteration k+1 is rolled out with the latest published weights.

A step raises ``StopRequested`` when the run is asked to stop (Ctrl-C); the loop then ends between two steps. An
iteration whose feedback never came while the run stops did not complete: the agent goes back to its state after
the previous iteration, so that the final checkpoint ties it to the other nodes' states of that iteration. In sync
mode the same holds when the feedback did not come within the steps' wait (lost on the wire, a helper that hangs):
the iteration is undone, the loop ends and ``failure`` says why; the caller checkpoints the last completed
iteration, and a resumed run redoes the failed one (no row of it was written).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from ..agents import OffPolicyAgent
from ..iteration import Feedback, IterationResult, Proposals, update_agent
from ..rollout import Trajectory
from .config import TrainConfig
from .driver import AgentRun, Hook, finish_iteration


class StopRequested(Exception):
    """The run was asked to stop (Ctrl-C, or the launcher stopping the graph) between two steps."""


class RemoteSteps(Protocol):
    """The steps of one iteration that other processes carry out."""

    @property
    def sampler_learns(self) -> bool:
        """Whether the sampler learns from each iteration's rewards (its feedback is part of the iteration)."""

    def propose(self, k: int) -> Proposals:
        """The sampler's settings for iteration k."""

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> tuple[list[Trajectory], list[Trajectory]]:
        """Every slot of iteration k rolled out with a policy of version >= ``min_version``: the randomized
        trajectories in slot order, and the reference ones (ADR; else none)."""

    def publish_weights(self) -> None:
        """Send the agent's current actor to the rollout workers."""

    def feedback(self, k: int) -> Feedback:
        """The rewards and update statistics of iteration k (waiting for them as the mode requires)."""

    def transport_seconds(self, k: int) -> float:
        """Seconds the trajectories of iteration k spent on the wire."""


class RemoteRun(AgentRun):
    """A training run whose rollouts, rewards and sampler updates happen elsewhere; the agent learns here. It is the
    ``RunState`` the driver's hooks read (``iteration``, ``wall_time``, ``solved``, the agent's counters)."""

    def __init__(self, agent: OffPolicyAgent, config: TrainConfig, steps: RemoteSteps, *, overlap: bool,
                 stop_requested: threading.Event, iteration: int = 0, wall_time: float = 0.0,
                 warn: Callable[[str], None] = print) -> None:
        self.agent, self.config, self.steps, self.overlap = agent, config, steps, overlap
        self.stop_requested, self.warn = stop_requested, warn
        self.iteration, self.wall_time = iteration, wall_time
        self.solved = False  # the early-stop rule was met: the run is done before its budget
        self.failure: str | None = None  # sync: an iteration that could not complete (its feedback never came)
        self.last_completed: int | None = iteration - 1 if iteration > 0 else None
        self.last_learning_s = 0.0  # the last agent update block (the Ctrl-C message says how long a stop may take)
        self.hooks: Sequence[Hook] = ()
        self._clock_start = (time.perf_counter(), wall_time)
        self._excluded: Callable[[], float] = lambda: 0.0

    # ------------------------------------------------------------------ RunState (with AgentRun)
    def count_training_time(self, seconds: float) -> None:
        self.wall_time = self.training_seconds()  # real time since the start: it includes those seconds

    def training_seconds(self) -> float:
        """Real time since the run started, minus ``excluded`` (periodic evaluations); async iterations overlap,
        so this is not a sum of iteration times."""
        started, wall_before = self._clock_start
        return wall_before + time.perf_counter() - started - self._excluded()

    # ------------------------------------------------------------------ the loop
    def start(self, hooks: Sequence[Hook], excluded_seconds: Callable[[], float] = lambda: 0.0) -> None:
        """Before the first iteration of this process: the hooks' ``on_start`` (a resumed run whose last early-stop
        check met the rule is done), then the training clock starts."""
        self.hooks, self._excluded = hooks, excluded_seconds
        for hook in hooks:
            hook.on_start(self)
        self._clock_start = (time.perf_counter(), self.wall_time)

    def run(self) -> None:
        """Iterations until the budget, the early stop or a stop request (``StopRequested`` from a step)."""
        self.steps.publish_weights()
        learning: threading.Thread | None = None
        try:
            while not self.done and not self.stop_requested.is_set() and self.failure is None:
                t0 = time.perf_counter()
                k = self.iteration
                proposals = self.steps.propose(k)
                min_version = 0 if self.overlap else self.agent.policy_version
                randomized, reference = self.steps.roll_out(k, proposals, min_version)
                t_rollouts = time.perf_counter() - t0
                self.iteration += 1
                if not self.overlap:
                    self.learn(k, proposals, randomized, reference, t0, t_rollouts)
                    continue
                if learning is not None:
                    learning.join()
                stored = [*randomized, *reference] if self.config.learn_from_reference else randomized
                # read before the block starts: it adds to transitions_seen while this thread goes on
                steps_after = self.agent.transitions_seen + sum(t.length for t in stored)
                learning = threading.Thread(target=self.learn, daemon=True,
                                            args=(k, proposals, randomized, reference, t0, t_rollouts))
                learning.start()
                if steps_after >= self.config.total_agent_steps:
                    break
        finally:
            if learning is not None:
                learning.join()

    def learn(self, k: int, proposals: Proposals, randomized: list[Trajectory], reference: list[Trajectory],
              t0: float, t_rollouts: float) -> None:
        """Iteration k's agent update, then its row (``finish_iteration``) once the sampler's side has answered."""
        t1 = time.perf_counter()
        extra = reference if self.config.learn_from_reference else None
        undo = self.agent.undo_point(sum(t.length for t in [*randomized, *(extra or [])]))  # networks + rows: cheap
        n_updates, losses = update_agent(self.agent, randomized, self.config.total_agent_steps, extra)
        t_agent = self.last_learning_s = time.perf_counter() - t1
        self.steps.publish_weights()
        feedback = self.steps.feedback(k)
        incomplete = self.steps.sampler_learns and (feedback.rewards is None or feedback.sampler_metrics is None)
        if incomplete and (self.stop_requested.is_set() or not self.overlap):
            # a helper died, the graph stops, or (sync) the feedback was lost on the wire: no consistent state of k
            self.agent.undo(undo)
            missing = "the discriminator's rewards" if feedback.rewards is None else "the sampler's update"
            if not self.overlap:
                self.iteration = k
            if self.stop_requested.is_set():
                self.warn(f"iteration {k} did not complete ({missing} never came): the agent is back at its state "
                          f"after iteration {k - 1}; resume:=true redoes iteration {k}")
            else:
                self.failure = (f"iteration {k} did not complete: {missing} did not arrive within the wait; the "
                                f"agent is back at its state after iteration {k - 1}")
            return
        result = IterationResult.assemble(
            k, proposals, min(t.policy_version for t in randomized), randomized, reference, feedback, n_updates,
            losses, {"time_rollouts_s": t_rollouts, "time_agent_s": t_agent,
                     "time_iteration_s": time.perf_counter() - t0, "time_transport_s": self.steps.transport_seconds(k)})
        self.wall_time = self.training_seconds()
        finish_iteration(self, result, self.hooks)  # early stop, files, progress, learning curve, checkpoint
