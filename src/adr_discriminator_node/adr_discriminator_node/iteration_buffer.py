"""Trajectories of the iterations not scored yet, handed out one complete iteration at a time, in order."""
from __future__ import annotations

from dataclasses import dataclass, field

from adr_core.rollout import Trajectory


class TrajectoryRefused(ValueError):
    """A well-formed trajectory that does not fit the buffer; ``reason`` is the diagnostics counter."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class CompleteIteration:
    iteration: int
    randomized: list[Trajectory]  # slot order
    reference: list[Trajectory]  # slot order


@dataclass
class _Pending:
    by_kind: dict[str, dict[int, Trajectory]] = field(default_factory=lambda: {"randomized": {}, "reference": {}})


class IterationBuffer:
    """Accepts slots ``0..slots-1`` of both kinds for iterations ``next_iteration .. next_iteration + max_ahead``."""

    def __init__(self, slots: int, next_iteration: int, max_ahead: int) -> None:
        self.slots = slots
        self.next_iteration = next_iteration
        self.max_ahead = max_ahead
        self._pending: dict[int, _Pending] = {}

    @property
    def buffered(self) -> int:
        return sum(len(kind) for pending in self._pending.values() for kind in pending.by_kind.values())

    def add(self, trajectory: Trajectory) -> None:
        k, slot, kind = trajectory.iteration, trajectory.slot, trajectory.kind
        where = f"iteration {k} slot {slot} ({kind})"
        if k < self.next_iteration:
            raise TrajectoryRefused("stale", f"{where}: iterations before {self.next_iteration} are done")
        if k > self.next_iteration + self.max_ahead:
            raise TrajectoryRefused("too_far_ahead", f"{where}: only iterations up to "
                                                     f"{self.next_iteration + self.max_ahead} are buffered")
        if not 0 <= slot < self.slots:
            raise TrajectoryRefused("slot", f"{where}: an iteration has slots 0..{self.slots - 1}")
        received = self._pending.setdefault(k, _Pending()).by_kind[kind]
        if slot in received:
            raise TrajectoryRefused("duplicate", f"{where} arrived twice (instance reassigned?); keeping the first")
        received[slot] = trajectory

    def pop_complete(self) -> CompleteIteration | None:
        """The next iteration once every slot of both kinds is in; None while something is missing."""
        pending = self._pending.get(self.next_iteration)
        if pending is None or any(len(kind) < self.slots for kind in pending.by_kind.values()):
            return None
        del self._pending[self.next_iteration]
        complete = CompleteIteration(self.next_iteration,
                                     [pending.by_kind["randomized"][s] for s in range(self.slots)],
                                     [pending.by_kind["reference"][s] for s in range(self.slots)])
        self.next_iteration += 1
        return complete
