"""Command watchdog: no fresh command for ``timeout`` -> hold; ``compliant_after`` later -> let go (0: never)."""
from __future__ import annotations

from enum import Enum


class WatchdogState(Enum):
    IDLE = "idle"  # nothing streamed yet, or a service-initiated motion: nothing to time out
    ACTIVE = "active"  # commands are fresh
    HOLDING = "holding"  # commands went stale: holding the position where the arm was
    COMPLIANT = "compliant"  # stale for long enough that the motors were let go


class WatchdogAction(Enum):
    NONE = "none"
    HOLD = "hold"
    GO_COMPLIANT = "go compliant"


class CommandWatchdog:
    def __init__(self, timeout: float, compliant_after: float) -> None:
        self.timeout = timeout
        self.compliant_after = compliant_after
        self.state = WatchdogState.IDLE
        self._fresh_until = 0.0
        self._holding_since = 0.0

    def feed(self, now: float, valid_until: float | None = None) -> None:
        """A fresh command at ``now``; a trajectory stays fresh until it ends (``valid_until``)."""
        self.state = WatchdogState.ACTIVE
        self._fresh_until = max(now, valid_until or now)

    def disarm(self) -> None:
        self.state = WatchdogState.IDLE

    def update(self, now: float) -> WatchdogAction:
        if self.state is WatchdogState.ACTIVE and now - self._fresh_until > self.timeout:
            self.state, self._holding_since = WatchdogState.HOLDING, now
            return WatchdogAction.HOLD
        if (self.state is WatchdogState.HOLDING and self.compliant_after > 0
                and now - self._holding_since >= self.compliant_after):
            self.state = WatchdogState.COMPLIANT
            return WatchdogAction.GO_COMPLIANT
        return WatchdogAction.NONE
