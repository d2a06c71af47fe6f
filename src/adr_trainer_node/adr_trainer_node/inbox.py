"""Trajectories arriving from simulator instances, validated and keyed by (iteration, slot, kind)."""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from adr_core import plausibility
from adr_core.rollout import Trajectory
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import run_ids, trajectories


@dataclass(frozen=True)
class Expected:
    """The iteration being collected: what its trajectories must match."""

    iteration: int
    parameters: np.ndarray  # (slots, d): the physical settings dispatched, one row per slot
    reference: np.ndarray  # (d,): the reference setting (reference trajectories)
    min_version: int  # the oldest policy version the episodes may have run with (the newest: the last published)


class TrajectoryInbox:
    """Thread-safe store: executor threads ``offer`` messages, the training loop ``take``s whole iterations.

    Only the iteration announced with ``expect`` is accepted, so at most slots x kinds trajectories are held. A
    message is refused (with a reason for the caller to log and count) when it is another run's (``run_id``),
    malformed or empty, holds values no simulator of the run produces (``adr_core.plausibility``: a reward beyond the
    run's per-step bound), belongs to another iteration or to a slot that does not exist, ran under another setting
    than the one dispatched for its slot, names a policy version the trainer never published for this iteration, or
    repeats a (iteration, slot, kind) already accepted — e.g. a slow instance finishing a rollout that was
    re-assigned. Accepted trajectories are never dropped.
    """

    def __init__(self, obs_dim: int, act_dim: int, kinds: tuple[str, ...] = ("randomized",), run_id: str = "",
                 reward_bound: float = plausibility.DEFAULT_REWARD_PER_STEP) -> None:
        self._obs_dim, self._act_dim, self._kinds, self._run_id = obs_dim, act_dim, kinds, run_id
        self._reward_bound = reward_bound
        self._items: dict[tuple[int, int, str], Trajectory] = {}
        self._oldest_open_iteration = 0
        self._expected: Expected | None = None
        self._published_version = 0  # the newest policy version the trainer has published
        self._changed = threading.Condition()
        self._transport_s: defaultdict[int, float] = defaultdict(float)  # iteration -> summed publish->receive time

    def offer(self, msg: TrajectoryMsg, received_ns: int | None = None) -> str | None:
        """None when accepted, else why not ("run_id: ...", "malformed: ...", "implausible: ...", "stale: ...",
        "duplicate: ...", "ignored: ...").

        ``received_ns`` (this host's clock) minus the header stamp the instance set when publishing is added up
        per iteration as the transport time (meaningful when publisher and trainer share a clock).
        """
        foreign = run_ids.foreign_trajectory(msg, self._run_id, "trajectory")
        if foreign is not None:
            return f"run_id: {foreign}"
        try:
            trajectory = trajectories.from_msg(msg, obs_dim=self._obs_dim, act_dim=self._act_dim)
        except trajectories.MalformedTrajectory as error:
            return f"malformed: {error}"
        if trajectory.kind not in self._kinds:
            return f"ignored: {trajectory.kind} trajectories are not used here"
        if trajectory.length == 0:
            return "malformed: empty trajectory (length 0)"
        implausible = plausibility.implausible(trajectory, self._reward_bound)
        if implausible is not None:
            return f"implausible: {implausible}"
        key = (trajectory.iteration, trajectory.slot, trajectory.kind)
        with self._changed:
            if trajectory.iteration < self._oldest_open_iteration:
                return f"stale: iteration {trajectory.iteration} was already consumed"
            refusal = self._mismatch(trajectory)
            if refusal is not None:
                return refusal
            if key in self._items:
                return f"duplicate: iteration {key[0]} slot {key[1]} {key[2]} already received"
            self._items[key] = trajectory
            sent_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            if received_ns is not None and sent_ns > 0:
                self._transport_s[trajectory.iteration] += max(0, received_ns - sent_ns) * 1e-9
            self._changed.notify_all()
        return None

    def expect(self, expected: Expected) -> None:
        """Open ``expected.iteration`` (before its rollouts are dispatched); nothing else is accepted until then."""
        with self._changed:
            self._expected = expected

    @property
    def published_version(self) -> int:
        with self._changed:
            return self._published_version

    def note_published(self, version: int) -> None:
        """The trainer published policy ``version`` (episodes may run with it from now on)."""
        with self._changed:
            self._published_version = max(self._published_version, int(version))

    def _mismatch(self, trajectory: Trajectory) -> str | None:
        expected = self._expected
        if expected is None or trajectory.iteration != expected.iteration:
            waiting = "no iteration" if expected is None else f"iteration {expected.iteration}"
            return f"unexpected: iteration {trajectory.iteration} is not being collected (waiting for {waiting})"
        slots = len(expected.parameters)
        if not 0 <= trajectory.slot < slots:
            return f"unexpected: slot {trajectory.slot} does not exist (iteration {expected.iteration} has {slots})"
        setting = expected.reference if trajectory.kind == "reference" else expected.parameters[trajectory.slot]
        if trajectory.params.shape != setting.shape or not np.allclose(trajectory.params, setting, rtol=1e-9,
                                                                        atol=1e-9):
            return (f"mismatch: slot {trajectory.slot} ran under {trajectory.params.tolist()}, the setting "
                    f"dispatched is {setting.tolist()}")
        if not expected.min_version <= trajectory.policy_version <= self._published_version:
            return (f"mismatch: policy version {trajectory.policy_version} outside [{expected.min_version}, "
                    f"{self._published_version}], the versions published for iteration {expected.iteration}")
        return None

    def missing(self, iteration: int, slots: int, kind: str = "randomized") -> list[int]:
        with self._changed:
            return [s for s in range(slots) if (iteration, s, kind) not in self._items]

    def wait(self, timeout: float) -> None:
        with self._changed:
            self._changed.wait(timeout)

    def transport_seconds(self, iteration: int) -> float:
        with self._changed:
            return self._transport_s.pop(iteration, 0.0)

    def take(self, iteration: int, slots: int, kind: str = "randomized") -> list[Trajectory]:
        """The iteration's trajectories of ``kind`` in slot order; the iteration is closed (later copies are stale)."""
        return self.take_kinds(iteration, slots, (kind,))[kind]

    def take_kinds(self, iteration: int, slots: int, kinds: tuple[str, ...]) -> dict[str, list[Trajectory]]:
        """Every slot of each of ``kinds``; the iteration is then closed for all kinds."""
        with self._changed:
            taken = {kind: [self._items.pop((iteration, s, kind)) for s in range(slots)] for kind in kinds}
            self._oldest_open_iteration = max(self._oldest_open_iteration, iteration + 1)
            for key in [k for k in self._items if k[0] <= iteration]:
                del self._items[key]
        return taken

    def reopen_from(self, iteration: int) -> None:
        """After a resume: iterations before ``iteration`` are done."""
        with self._changed:
            self._oldest_open_iteration = iteration
