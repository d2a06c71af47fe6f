"""A thread that runs one control cycle per period and measures the rate it actually achieves."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ControlLoop(Generic[T]):
    """Calls ``cycle(now)`` every ``1/rate_hz`` s (monotonic clock) and hands non-None results to ``deliver``.

    A late cycle is not made up for: the next one is scheduled from now, so a stalled bus never causes a burst.
    An exception in a cycle is logged with its traceback and the loop goes on.
    """

    def __init__(self, cycle: Callable[[float], T | None], deliver: Callable[[T], None], rate_hz: float,
                 log: logging.Logger | None = None) -> None:
        self._cycle = cycle
        self._deliver = deliver
        self.period = 1.0 / rate_hz
        self._log = log or logging.getLogger("poppy_driver.loop")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._window_start = 0.0
        self._window_samples = 0
        self.achieved_rate_hz = 0.0  # delivered samples per second over the last ~second
        self.cycles = 0

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="poppy-control-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        next_time = self._window_start = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            try:
                sample = self._cycle(now)
                if sample is not None:
                    self._deliver(sample)
                    self._window_samples += 1
            except Exception:  # noqa: BLE001 - a bug must not silently stop the arm's safety loop
                self._log.exception("control cycle failed")
            self.cycles += 1
            self._measure(time.monotonic())
            next_time = max(next_time + self.period, time.monotonic())
            self._stop.wait(max(0.0, next_time - time.monotonic()))

    def _measure(self, now: float) -> None:
        elapsed = now - self._window_start
        if elapsed >= 1.0:
            self.achieved_rate_hz = self._window_samples / elapsed
            self._window_start, self._window_samples = now, 0
