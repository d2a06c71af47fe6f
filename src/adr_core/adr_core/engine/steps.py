"""The steps of one iteration of Algorithm 1, as the engine (loop.py) asks an executor for them.

The iteration's data passes through the engine, from one step to the next: ``propose`` returns the ``Proposals``
that ``roll_out`` is given, ``roll_out`` the ``Rollouts`` that ``feedback`` is given (an executor may return its own
subclass of ``Proposals`` to carry what its ``roll_out`` needs of them), so that no executor keeps an iteration's
state between two calls.

Executors: this process (local_steps.py: the in-process trainer and probe), the ROS 2 node graph (the trainer node's
``GraphSteps``: sync and async, training and probe), and a learner that drives (``adr_loop.LearnerDrivenSteps``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..iteration import Feedback, Proposals, Rollouts


class StopRequested(Exception):
    """The run was asked to stop (Ctrl-C, or the launcher stopping the graph) between two steps."""


class Steps(Protocol):
    """The steps of one iteration, carried out by an executor (loop.py's docstring: the order the engine calls
    them in)."""

    @property
    def sampler_learns(self) -> bool:
        """Whether the sampler learns after each iteration (``feedback_path`` not 'none': discriminator rewards or
        task outcomes), so that its feedback is part of the iteration."""

    def propose(self, k: int) -> Proposals:
        """The sampler's settings for iteration k."""

    def roll_out(self, k: int, proposals: Proposals, min_version: int) -> Rollouts:
        """Every slot of iteration k rolled out with a policy of version >= ``min_version``: the randomized
        trajectories in slot order, and the reference ones (ADR; else none), with any work on them begun here."""

    def publish_weights(self) -> None:
        """Send the agent's current actor to the rollout workers (nothing to do where they read it directly)."""

    def feedback(self, k: int, rollouts: Rollouts) -> Feedback:
        """The rewards, update statistics and the executor's own timings of iteration k, whose rollouts ``roll_out``
        returned (waiting for them as the executor requires)."""
