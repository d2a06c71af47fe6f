"""What the page shows, kept up to date by the node's callbacks and read by the HTTP thread (no ROS types here)."""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Histogram:
    method: str
    iteration: int
    names: list[str]
    bins: int
    counts: list[list[int]]  # per dimension
    total: int


@dataclass(frozen=True)
class Particles:
    method: str
    iteration: int
    names: list[str]
    points: list[list[float]]  # normalized, one row per particle
    spread: float


class LiveState:
    """Thread-safe latest values and bounded metric histories."""

    def __init__(self, history: int = 2000) -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._history = history
        self._histogram: Histogram | None = None
        self._particles: Particles | None = None
        self._metrics: dict[str, deque[tuple[float, float]]] = {}
        self._updates = 0

    def set_histogram(self, histogram: Histogram) -> None:
        with self._lock:
            self._histogram = histogram
            self._updates += 1

    def set_particles(self, particles: Particles) -> None:
        with self._lock:
            self._particles = particles
            self._updates += 1

    def add_metric(self, name: str, value: float) -> None:
        with self._lock:
            series = self._metrics.setdefault(name, deque(maxlen=self._history))
            series.append((round(time.monotonic() - self._started, 3), float(value)))
            self._updates += 1

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready: ``histogram``, ``particles`` (null until received), ``metrics`` {name: {t, v, last}}."""
        with self._lock:
            metrics = {name: {"t": [t for t, _ in series], "v": [_finite(v) for _, v in series],
                              "last": _finite(series[-1][1])}
                       for name, series in sorted(self._metrics.items())}
            return {"uptime_s": round(time.monotonic() - self._started, 3), "updates": self._updates,
                    "histogram": None if self._histogram is None else vars(self._histogram).copy(),
                    "particles": None if self._particles is None else
                    {**vars(self._particles), "spread": _finite(self._particles.spread)},
                    "metrics": metrics}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
