"""Algorithm 1's loop, written once: every way of running it goes through ``Engine.run``.

Who carries out the steps of an iteration differs, the loop does not. An executor supplies them (``Steps``,
steps.py): this process (``local_steps.py``: the in-process trainer and probe), the ROS 2 node graph (the trainer node's
``GraphSteps``: sync and async, training and probe), or a learner that drives (``adr_loop.LearnerDrivenSteps``: the
user's learner owns the outer loop and learns outside the engine; each ``ADRLoop.update`` is one ``run_one`` with no
agent, whose rollouts are the learner's episodes). The engine runs::

    k:  collect(k): proposals = steps.propose(k)         # the sampler's settings of iteration k
                    rollouts = steps.roll_out(k, proposals, min_version)   # randomized and reference episodes
        learn(k):   the agent stores and updates (iteration.update_agent; none when a frozen policy is probed),
                    steps.publish_weights(), feedback = steps.feedback(k, rollouts)
                                                         # rewards, the sampler's update
                    IterationResult.assemble(...) -> finish_iteration(hooks)

and ``finish_iteration`` does what every runner does after an iteration, through hooks in the spirit of
stable-baselines3's callbacks::

    for hook in hooks: hook.after_update(run, result)        # the early stop: its check is training time
    row = metrics row of the iteration (result.metrics() + the run's counters)
    for hook in hooks: hook.after_row(run, result, row)      # metrics.csv, checkpoints, the learning curve, progress

``overlap=True`` (the graph's async mode): iteration k's ``learn`` runs in a thread while k+1 is collected with
the latest published weights; both modes go through the same ``collect`` and ``learn``. The run ends at its budget
or early stop, on a stop request (a step raising ``StopRequested``, or ``stop_requested`` set between iterations),
after ``max_iterations`` more, or when an iteration cannot complete (``failure``). An iteration whose feedback never
came did not complete: with ``undo_points`` the agent goes back to its state after the previous iteration, so that a
checkpoint ties it to the other processes' states of that iteration; a resumed run redoes it. The clock:
``real_clock`` (the graph: real time since the start, minus the periodic evaluations) or the sum of the iterations'
times (in-process). The hooks are in hooks.py.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..iteration import Feedback, IterationResult, Proposals, Rollouts, update_agent
from .hooks import Hook, finish_iteration
from .steps import Steps

if TYPE_CHECKING:
    from ..agents import OffPolicyAgent
    from ..rollout import Trajectory


class LoopConfig(Protocol):
    """What the loop reads of a run's config (``TrainConfig`` has both)."""

    @property
    def total_agent_steps(self) -> int:
        """The agent's budget: the run is done once it has taken that many steps."""

    @property
    def learn_from_reference(self) -> bool:
        """The agent also stores the reference rollouts."""


@dataclass(frozen=True)
class Collected:
    """Iteration k proposed and rolled out (``Engine.collect``), on its way to ``Engine.learn``."""

    k: int
    proposals: Proposals
    rollouts: Rollouts
    started: float  # time.perf_counter() when the iteration began
    rollout_s: float  # seconds of proposing and rolling out


class Engine:
    """A run of Algorithm 1 (module docstring): the ``RunState`` the hooks read, and the loop. ``agent`` None: a
    frozen policy is probed (no updates, nothing published, never done by a budget)."""

    def __init__(self, agent: OffPolicyAgent | None, config: LoopConfig, steps: Steps, *, overlap: bool = False,
                 stop_requested: threading.Event | None = None, iteration: int = 0, wall_time: float = 0.0,
                 real_clock: bool = False, undo_points: bool = False,
                 warn: Callable[[str], None] = print) -> None:
        self.agent, self.config, self.steps, self.overlap = agent, config, steps, overlap
        self.stop_requested = stop_requested if stop_requested is not None else threading.Event()
        self.real_clock, self.undo_points, self.warn = real_clock, undo_points, warn
        self.iteration, self.wall_time = iteration, wall_time
        self.solved = False  # the early-stop rule was met: the run is done before its budget
        self.failure: str | None = None  # an iteration that could not complete (its feedback never came)
        self.last_completed: int | None = iteration - 1 if iteration > 0 else None
        self.last_learning_s = 0.0  # the last agent update block (the Ctrl-C message says how long a stop may take)
        self.last_result: IterationResult | None = None
        self.hooks: Sequence[Hook] = ()
        self._rows: list[dict[str, Any]] = []
        self._clock_start = (time.perf_counter(), wall_time)
        self._excluded: Callable[[], float] = lambda: 0.0

    # ------------------------------------------------------------------ RunState
    @property
    def agent_steps(self) -> int:
        return 0 if self.agent is None else self.agent.transitions_seen

    @property
    def agent_updates(self) -> int:
        return 0 if self.agent is None else self.agent.updates_done

    def actor_state_dict(self) -> dict[str, torch.Tensor]:
        return {} if self.agent is None else self.agent.actor_state_dict()

    @property
    def done(self) -> bool:
        """The early stop was met, or the agent has taken its budget of steps."""
        return self.solved or (self.agent is not None and self.agent.transitions_seen >= self.config.total_agent_steps)

    def count_training_time(self, seconds: float) -> None:
        if self.real_clock:
            self.wall_time = self.training_seconds()  # real time since the start: it includes those seconds
        else:
            self.wall_time += seconds

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

    def run(self, max_iterations: int | None = None) -> list[dict[str, Any]]:
        """Iterations until the run is done, asked to stop, failed, or ``max_iterations`` more have run; returns
        their metrics rows. Each hook's ``on_end`` runs also when an iteration raised."""
        self._rows = []
        error: BaseException | None = None
        if self.agent is not None:
            self.steps.publish_weights()
        learning: threading.Thread | None = None
        started = 0
        try:
            while (not self.done and not self.stop_requested.is_set() and self.failure is None
                   and (max_iterations is None or started < max_iterations)):
                started += 1
                if not self.overlap or self.agent is None:
                    self.run_one()
                    continue
                collected = self.collect(0)  # async: rolled out with the latest weights
                if learning is not None:
                    learning.join()
                # read before the block starts: it adds to transitions_seen while this thread goes on
                steps_after = self.agent.transitions_seen + sum(t.length for t in self._stored(collected))
                learning = threading.Thread(target=self.learn, args=(collected,), daemon=True)
                learning.start()
                if steps_after >= self.config.total_agent_steps:
                    break
        except BaseException as raised:
            error = raised
            raise
        finally:
            if learning is not None:
                learning.join()
            for hook in self.hooks:
                hook.on_end(self, len(self._rows), error)
        return self._rows

    def run_one(self) -> IterationResult | None:
        """One synchronous iteration k = ``iteration`` (Algorithm 1: rolled out with the newest policy), with no
        check of the budget or of a stop request; its result (None when its feedback never came)."""
        collected = self.collect(0 if self.agent is None else self.agent.policy_version)
        self.last_result = None
        self.learn(collected)
        return self.last_result

    def collect(self, min_version: int) -> Collected:
        """Iteration k = ``iteration``: the sampler's proposals, rolled out with a policy of version >=
        ``min_version``; the iteration counter moves on to k+1."""
        t0 = time.perf_counter()
        k = self.iteration
        proposals = self.steps.propose(k)
        rollouts = self.steps.roll_out(k, proposals, min_version)
        collected = Collected(k, proposals, rollouts, t0, time.perf_counter() - t0)
        self.iteration += 1
        return collected

    def _stored(self, collected: Collected) -> list[Trajectory]:
        """What the agent stores of an iteration: its randomized rollouts (+ the reference ones:
        ``learn_from_reference``)."""
        rollouts = collected.rollouts
        return [*rollouts.randomized, *rollouts.reference] if self.config.learn_from_reference \
            else rollouts.randomized

    def learn(self, collected: Collected) -> None:
        """Iteration k's agent update, then its row (``finish_iteration``) once the sampler's side has answered."""
        k, randomized, reference = collected.k, collected.rollouts.randomized, collected.rollouts.reference
        t1 = time.perf_counter()
        n_updates, undo = 0, None
        losses: dict[str, float] = {}
        if self.agent is not None:
            if self.undo_points:  # networks + the rows the block overwrites: cheap next to a checkpoint
                undo = self.agent.undo_point(sum(t.length for t in self._stored(collected)))
            n_updates, losses = update_agent(self.agent, randomized, self.config.total_agent_steps,
                                             reference if self.config.learn_from_reference else None)
        t_agent = self.last_learning_s = time.perf_counter() - t1
        if self.agent is not None:
            self.steps.publish_weights()
        feedback = self.steps.feedback(k, collected.rollouts)
        incomplete = self.steps.sampler_learns and (feedback.rewards is None or feedback.sampler_metrics is None)
        if incomplete and (self.stop_requested.is_set() or not self.overlap):
            self._incomplete(k, feedback, undo)
            return
        timings = {"time_rollouts_s": collected.rollout_s, "time_agent_s": t_agent,
                   "time_iteration_s": time.perf_counter() - collected.started, **feedback.timings}
        result = IterationResult.assemble(
            k, collected.proposals, min((t.policy_version for t in randomized), default=0), randomized, reference,
            feedback, n_updates, losses, timings)
        if self.real_clock:
            self.wall_time = self.training_seconds()
        else:
            self.wall_time += result.timings["time_iteration_s"]
        self.last_result = result
        self._rows.append(finish_iteration(self, result, self.hooks))  # early stop, files, checkpoint, ...
        self.last_completed = k

    def _incomplete(self, k: int, feedback: Feedback, undo: dict[str, Any] | None) -> None:
        """Iteration k's feedback never came (a helper died, the graph stops, or it was lost on the wire): no
        consistent state of k exists. Sync: the agent goes back to its state after k-1 and the run ends (a stop
        request: with a warning; else with ``failure`` saying why)."""
        if self.agent is not None and undo is not None:
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
