"""The newest policy an instance has received, and a bounded wait for a given version."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from adr_core.agents import ActorPolicy


@dataclass(frozen=True)
class VersionedPolicy:
    policy: ActorPolicy
    version: int


class StaleWeights(ValueError):
    """Weights older than the ones already held."""


class LatestPolicy:
    """Written by the weights subscription, read by goal executions (another executor thread)."""

    def __init__(self) -> None:
        self._current: VersionedPolicy | None = None
        self._changed = threading.Condition()

    @property
    def current(self) -> VersionedPolicy | None:
        return self._current

    def offer(self, candidate: VersionedPolicy) -> None:
        """Keep ``candidate`` unless it is older than the held policy (same version: replaced)."""
        with self._changed:
            if self._current is not None and candidate.version < self._current.version:
                raise StaleWeights(f"weights version {candidate.version} is older than the held "
                                   f"{self._current.version}")
            self._current = candidate
            self._changed.notify_all()

    def wake_waiters(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, min_version: int, timeout: float, give_up: Callable[[], bool],
                 poll: float = 0.1) -> VersionedPolicy | None:
        """The held policy once its version is >= ``min_version``; None after ``timeout`` s or when ``give_up()``."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                held = self._current
                if held is not None and held.version >= min_version:
                    return held
                left = deadline - time.monotonic()
                if left <= 0 or give_up():
                    return None
                self._changed.wait(min(left, poll))
