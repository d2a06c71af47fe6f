"""Trajectories arriving from simulator instances, validated and keyed by (iteration, slot, kind)."""
from __future__ import annotations

import threading

from adr_core.rollout import Trajectory
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import trajectories


class TrajectoryInbox:
    """Thread-safe store: executor threads ``offer`` messages, the training loop ``take``s whole iterations.

    A message is refused (with a reason for the caller to log and count) when it is malformed, belongs to an
    iteration already consumed, or repeats a (iteration, slot, kind) already accepted — e.g. a slow instance
    finishing a rollout that was re-assigned. Accepted trajectories are never dropped.
    """

    def __init__(self, obs_dim: int, act_dim: int, kinds: tuple[str, ...] = ("randomized",)) -> None:
        self._obs_dim, self._act_dim, self._kinds = obs_dim, act_dim, kinds
        self._items: dict[tuple[int, int, str], Trajectory] = {}
        self._oldest_open_iteration = 0
        self._changed = threading.Condition()

    def offer(self, msg: TrajectoryMsg) -> str | None:
        """None when accepted, else why not ("malformed: ...", "stale: ...", "duplicate: ...", "ignored: ...")."""
        try:
            trajectory = trajectories.from_msg(msg, obs_dim=self._obs_dim, act_dim=self._act_dim)
        except trajectories.MalformedTrajectory as error:
            return f"malformed: {error}"
        if trajectory.kind not in self._kinds:
            return f"ignored: {trajectory.kind} trajectories are not used here"
        key = (trajectory.iteration, trajectory.slot, trajectory.kind)
        with self._changed:
            if trajectory.iteration < self._oldest_open_iteration:
                return f"stale: iteration {trajectory.iteration} was already consumed"
            if key in self._items:
                return f"duplicate: iteration {key[0]} slot {key[1]} {key[2]} already received"
            self._items[key] = trajectory
            self._changed.notify_all()
        return None

    def has(self, iteration: int, slot: int, kind: str = "randomized") -> bool:
        with self._changed:
            return (iteration, slot, kind) in self._items

    def missing(self, iteration: int, slots: int, kind: str = "randomized") -> list[int]:
        with self._changed:
            return [s for s in range(slots) if (iteration, s, kind) not in self._items]

    def wait(self, timeout: float) -> None:
        with self._changed:
            self._changed.wait(timeout)

    def take(self, iteration: int, slots: int, kind: str = "randomized") -> list[Trajectory]:
        """The iteration's trajectories in slot order; the iteration is closed (later copies are stale)."""
        with self._changed:
            taken = [self._items.pop((iteration, s, kind)) for s in range(slots)]
            self._oldest_open_iteration = max(self._oldest_open_iteration, iteration + 1)
            for key in [k for k in self._items if k[0] <= iteration]:
                del self._items[key]
        return taken

    def reopen_from(self, iteration: int) -> None:
        """After a resume: iterations before ``iteration`` are done."""
        with self._changed:
            self._oldest_open_iteration = iteration
