"""The policies an instance has received, and a bounded wait for a version in a goal's range."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from adr_core.agents import ActorPolicy
from adr_core.rollout import Policy

HELD_MAX = 8  # policies held at once; beyond that the highest version goes (a forged one, as no goal reached it)


@dataclass(frozen=True)
class VersionedPolicy:
    policy: ActorPolicy | Policy  # a frozen policy (mode:=probe) may be any obs -> action callable
    version: int


class StaleWeights(ValueError):
    """Weights older than a version a goal has already been served with."""


class LatestPolicy:
    """Written by the weights subscription, read by goal executions (another executor thread).

    Every received version is held (at most ``HELD_MAX``) until a goal is served with a newer one. A goal names the
    range of versions it may run with, [min_policy_version, newest_policy_version], the latter being the newest
    version its trainer has published; it gets the newest held version in that range. So a message claiming a
    version the trainer never published (e.g. 2**62) is held but never served, and does not block the real ones.
    """

    def __init__(self) -> None:
        self._held: dict[int, VersionedPolicy] = {}
        self._served: VersionedPolicy | None = None  # the newest version a goal was served with
        self._changed = threading.Condition()

    @property
    def current(self) -> VersionedPolicy | None:
        """The policy last served to a goal, else the newest received (for messages and diagnostics)."""
        with self._changed:
            if self._served is not None:
                return self._served
            return self._held[max(self._held)] if self._held else None

    def offer(self, candidate: VersionedPolicy) -> None:
        """Hold ``candidate`` (same version: replaced) unless a goal was already served with a newer version."""
        with self._changed:
            if self._served is not None and candidate.version < self._served.version:
                raise StaleWeights(f"weights version {candidate.version} is older than the held "
                                   f"{self._served.version}")
            self._held[candidate.version] = candidate
            while len(self._held) > HELD_MAX:
                del self._held[max(self._held)]
            self._changed.notify_all()

    def wake_waiters(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, min_version: int, timeout: float, give_up: Callable[[], bool], poll: float = 0.1,
                 newest_version: int | None = None) -> VersionedPolicy | None:
        """The newest held policy with ``min_version <= version <= newest_version`` (None: no upper bound), or the
        one last served if it is newer (a goal re-assigned after a newer one ran here), once there is one; None
        after ``timeout`` s or when ``give_up()``."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                eligible = {v: self._held[v] for v in self._held
                            if v >= min_version and (newest_version is None or v <= newest_version)}
                if self._served is not None and self._served.version >= min_version:
                    eligible[self._served.version] = self._served  # a version some goal's trainer published
                if eligible:
                    held = eligible[max(eligible)]
                    if self._served is None or held.version >= self._served.version:
                        self._served = held
                        for old in [v for v in self._held if v < held.version]:
                            del self._held[old]
                    return held
                left = deadline - time.monotonic()
                if left <= 0 or give_up():
                    return None
                self._changed.wait(min(left, poll))
