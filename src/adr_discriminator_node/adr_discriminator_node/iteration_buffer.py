"""Trajectories of the iterations not scored yet, handed out one complete iteration at a time, in order.

One acceptance rule for the graph: the trainer decides which trajectory counts for each slot (awaited
iteration and slot, the setting it dispatched, a policy version it published, plausible values) and says so on
``adr/accepted_trajectories`` with each one's digest. Until that word comes, the buffer keeps up to
``MAX_COPIES`` distinct trajectories per (iteration, slot, kind); then it keeps only the accepted ones and hands
the iteration out once all of them are here. So a trajectory the trainer refused, e.g. a forged copy that came
before the real rollout, is scored by nobody. A reference slot the trainer's acceptance does not name (its
reference rollout did not reach the trainer in time) is filled with the first copy that reached this node.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from adr_core.rollout import Trajectory

KINDS = ("randomized", "reference")
MAX_COPIES = 4


class TrajectoryRefused(ValueError):
    """A well-formed trajectory (or acceptance) that does not fit the buffer; ``reason`` is the diagnostics counter."""

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
    # kind -> slot -> digest -> trajectory (insertion order: the first copy first)
    copies: dict[str, dict[int, dict[str, Trajectory]]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS})
    accepted: dict[tuple[str, int], str] | None = None  # (kind, slot) -> digest, once the trainer said


class IterationBuffer:
    """Accepts slots ``0..slots-1`` of both kinds for iterations ``next_iteration .. next_iteration + max_ahead``."""

    def __init__(self, slots: int, next_iteration: int, max_ahead: int) -> None:
        self.slots = slots
        self.next_iteration = next_iteration
        self.max_ahead = max_ahead
        self._pending: dict[int, _Pending] = {}

    @property
    def buffered(self) -> int:
        return sum(len(copies) for pending in self._pending.values() for by_slot in pending.copies.values()
                   for copies in by_slot.values())

    def _window(self, k: int, where: str) -> None:
        if k < self.next_iteration:
            raise TrajectoryRefused("stale", f"{where}: iterations before {self.next_iteration} are done")
        if k > self.next_iteration + self.max_ahead:
            raise TrajectoryRefused("too_far_ahead", f"{where}: only iterations up to "
                                                     f"{self.next_iteration + self.max_ahead} are buffered")

    def add(self, trajectory: Trajectory, digest: str) -> None:
        k, slot, kind = trajectory.iteration, trajectory.slot, trajectory.kind
        where = f"iteration {k} slot {slot} ({kind})"
        self._window(k, where)
        if not 0 <= slot < self.slots:
            raise TrajectoryRefused("slot", f"{where}: an iteration has slots 0..{self.slots - 1}")
        pending = self._pending.setdefault(k, _Pending())
        copies = pending.copies[kind].setdefault(slot, {})
        if digest in copies:
            raise TrajectoryRefused("duplicate", f"{where} arrived twice (the same trajectory); keeping one")
        if pending.accepted is not None:
            wanted = pending.accepted.get((kind, slot))
            if wanted is not None and digest != wanted:
                raise TrajectoryRefused("not_accepted", f"{where}: not the trajectory the trainer accepted")
            if wanted is None and kind == "reference" and copies:
                raise TrajectoryRefused("duplicate", f"{where}: a reference copy is already here")
        if len(copies) >= MAX_COPIES:
            raise TrajectoryRefused("too_many_copies", f"{where}: {MAX_COPIES} different copies already wait for "
                                                       f"the trainer's acceptance")
        copies[digest] = trajectory

    def accept(self, iteration: int, entries: list[tuple[str, int, str]]) -> None:
        """The trainer's acceptance of ``iteration``: (kind, slot, digest), every randomized slot exactly once."""
        where = f"the trainer's acceptance of iteration {iteration}"
        self._window(iteration, where)
        accepted: dict[tuple[str, int], str] = {}
        for kind, slot, digest in entries:
            if kind not in KINDS or not 0 <= slot < self.slots or (kind, slot) in accepted:
                raise TrajectoryRefused("acceptance", f"{where}: {kind} slot {slot} is out of range or repeated")
            accepted[(kind, slot)] = digest
        if {s for kind, s in accepted if kind == "randomized"} != set(range(self.slots)):
            raise TrajectoryRefused("acceptance", f"{where} does not name every randomized slot "
                                                  f"0..{self.slots - 1} once")
        pending = self._pending.setdefault(iteration, _Pending())
        if pending.accepted is not None:
            if pending.accepted == accepted:
                raise TrajectoryRefused("duplicate", f"{where} arrived twice")
            raise TrajectoryRefused("acceptance", f"{where} contradicts the one already received")
        pending.accepted = accepted
        for kind, by_slot in pending.copies.items():  # only the accepted copies stay
            for slot, copies in by_slot.items():
                wanted = accepted.get((kind, slot))
                if wanted is not None:
                    by_slot[slot] = {wanted: copies[wanted]} if wanted in copies else {}
                elif copies:  # a reference slot the trainer did not receive: the first copy here
                    first = next(iter(copies))
                    by_slot[slot] = {first: copies[first]}

    def pop_complete(self) -> CompleteIteration | None:
        """The next iteration once the trainer's acceptance and every trajectory it names are in; None before."""
        pending = self._pending.get(self.next_iteration)
        if pending is None or pending.accepted is None:
            return None
        chosen: dict[str, list[Trajectory]] = {kind: [] for kind in KINDS}
        for kind in KINDS:
            for slot in range(self.slots):
                copies = pending.copies[kind].get(slot, {})
                wanted = pending.accepted.get((kind, slot))
                trajectory = copies.get(wanted) if wanted is not None else next(iter(copies.values()), None)
                if trajectory is None:
                    return None
                chosen[kind].append(trajectory)
        del self._pending[self.next_iteration]
        complete = CompleteIteration(self.next_iteration, chosen["randomized"], chosen["reference"])
        self.next_iteration += 1
        return complete
