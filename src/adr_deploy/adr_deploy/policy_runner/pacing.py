"""Fixed-rate ticking on the monotonic clock, and the timing statistics of a run of ticks."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Protocol

from .errors import Stopped


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep_until(self, deadline: float) -> None:
        """Returns at ``deadline`` (or at once if it has passed); raises ``Stopped`` when asked to stop."""


class MonotonicClock:
    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, deadline: float) -> None:
        if self._stop.wait(max(0.0, deadline - time.monotonic())) or self._stop.is_set():
            raise Stopped()


class Pacer:
    """Ticks at ``start + k * period``. A tick missed by more than a whole period is skipped (counted in ``skipped``),
    so a stall never causes a burst of commands."""

    def __init__(self, clock: Clock, period: float) -> None:
        self._clock, self.period = clock, period
        self.next_tick = clock.now()
        self.skipped = 0

    def wait(self) -> None:
        self.next_tick += self.period
        now = self._clock.now()
        if now > self.next_tick + self.period:
            self.skipped += int((now - self.next_tick) // self.period)
            self.next_tick = now
        self._clock.sleep_until(self.next_tick)


@dataclass(frozen=True)
class TickTiming:
    rate_hz: float  # (ticks - 1) / (last - first)
    max_period_s: float
    late_ticks: int  # periods longer than 1.5 x the nominal one

    @classmethod
    def of(cls, times: list[float], period: float) -> TickTiming:
        if len(times) < 2:
            return cls(0.0, 0.0, 0)
        gaps = [b - a for a, b in zip(times[:-1], times[1:])]
        return cls((len(times) - 1) / (times[-1] - times[0]), max(gaps), sum(g > 1.5 * period for g in gaps))
