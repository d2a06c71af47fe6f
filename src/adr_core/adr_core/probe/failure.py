"""Where a frozen policy fails: a sweep of the training range, and the region it defines.

The sweep varies one dimension at a time over its training range (the sampler's whole cube; the others at their
defaults), ``points`` values per dimension, ``episodes`` deterministic episodes per point and seed. A point fails
when the policy solves fewer than half of its episodes. Along each dimension the failing points' cells (half-way to
their neighbours) form failing intervals; the failure region is every setting with at least one coordinate in a
failing interval of its dimension. For a 1-D space that is exact up to the grid spacing; for more dimensions it
assumes failures along the axes (each controller of controllers.py fails along one).

The uniform share of the region is its volume in the normalized cube: 1 - prod_d (1 - failing length_d).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..evaluation.episodes import PolicySpec
from ..evaluation.points import PointOutcomes, PointsRequest, evaluate_points
from ..randomization import RandomizationSpace

FAILING_BELOW = 0.5  # solved fraction under which a sweep point fails
LEARNABLE = (0.2, 0.8)  # solved fraction a sweep point of the learnable region has (focus rule)


@dataclass(frozen=True)
class FailureMap:
    """The sweep: ``normalized`` (n, d) points, ``swept[i]`` the dimension point i varies; outcomes per point."""

    space: RandomizationSpace
    normalized: np.ndarray
    swept: np.ndarray
    outcomes: PointOutcomes

    @property
    def physical(self) -> np.ndarray:
        return self.space.from_normalized(self.normalized)

    def solved_fraction(self) -> np.ndarray:
        fraction: np.ndarray = self.outcomes.solved.reshape(len(self.normalized), -1).mean(axis=1)
        return fraction

    def mean_return(self) -> np.ndarray:
        means: np.ndarray = self.outcomes.returns.reshape(len(self.normalized), -1).mean(axis=1)
        return means

    def mean_final_distance(self) -> np.ndarray:
        means: np.ndarray = self.outcomes.final_distance.reshape(len(self.normalized), -1).mean(axis=1)
        return means


@dataclass(frozen=True)
class FailureRegion:
    """Failing intervals per dimension, in normalized coordinates: ``intervals[d]`` = [(low, high), ...]."""

    names: tuple[str, ...]
    intervals: tuple[tuple[tuple[float, float], ...], ...]

    def contains(self, normalized: np.ndarray) -> np.ndarray:
        """(n, d) normalized points -> (n,) bool."""
        points = np.atleast_2d(np.asarray(normalized, dtype=np.float64))
        inside = np.zeros(len(points), dtype=bool)
        for d, spans in enumerate(self.intervals):
            for low, high in spans:
                inside |= (points[:, d] >= low) & (points[:, d] <= high)
        return inside

    @property
    def uniform_share(self) -> float:
        keep = 1.0
        for spans in self.intervals:
            keep *= 1.0 - sum(high - low for low, high in spans)
        return 1.0 - keep

    @property
    def empty(self) -> bool:
        return not any(self.intervals)

    def describe(self, space: RandomizationSpace) -> str:
        parts = []
        for d, spans in enumerate(self.intervals):
            for low, high in spans:
                lo, hi = space.from_normalized(_at(space, d, low))[d], space.from_normalized(_at(space, d, high))[d]
                parts.append(f"{self.names[d]} in [{lo:.4g}, {hi:.4g}]")
        return " or ".join(parts) if parts else "nowhere (the policy solves every swept setting)"

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "intervals": [[list(s) for s in spans] for spans in self.intervals],
                "uniform_share": self.uniform_share}


def _at(space: RandomizationSpace, d: int, u: float) -> np.ndarray:
    point = space.reference_normalized().copy()
    point[d] = u
    return point


def sweep_training_range(spec: PolicySpec, space: RandomizationSpace, points: int, episodes: int,
                         seeds: tuple[int, ...], workers: int | None = 1) -> FailureMap:
    """Deterministic episodes at ``points`` values of each dimension over its training range."""
    rows, swept = [], []
    values = np.linspace(0.0, 1.0, points)
    for d in range(space.ndim):
        block = np.tile(space.reference_normalized(), (points, 1))
        block[:, d] = values
        rows.append(block)
        swept += [d] * points
    normalized = np.concatenate(rows)
    request = PointsRequest("probe", space.from_normalized(normalized), tuple(seeds), episodes)
    (outcomes,) = evaluate_points({"probe": spec}, [request], workers)
    return FailureMap(space, normalized, np.array(swept), outcomes)


def failure_region(failure_map: FailureMap, failing_below: float = FAILING_BELOW) -> FailureRegion:
    """The region of the sweep points the policy solves fewer than half of the episodes of."""
    return band_region(failure_map, lambda solved: solved < failing_below)


def learnable_region(failure_map: FailureMap, band: tuple[float, float] = LEARNABLE) -> FailureRegion:
    """The region of the sweep points the policy solves 20-80 % of the episodes of: where it sometimes succeeds."""
    return band_region(failure_map, lambda solved: (solved >= band[0]) & (solved <= band[1]))


def band_region(failure_map: FailureMap, selects: Any) -> FailureRegion:
    """The cells (half-way to their neighbours) of the sweep points whose solved fraction ``selects(solved)`` picks,
    per dimension (the module doc's construction)."""
    space, solved = failure_map.space, failure_map.solved_fraction()
    intervals = []
    for d in range(space.ndim):
        idx = np.flatnonzero(failure_map.swept == d)
        u = failure_map.normalized[idx, d]
        order = np.argsort(u)
        u, failing = u[order], np.asarray(selects(solved[idx][order]), dtype=bool)
        edges = np.concatenate([[0.0], (u[1:] + u[:-1]) / 2.0, [1.0]])  # cell i = [edges[i], edges[i + 1]]
        spans: list[tuple[float, float]] = []
        for i in np.flatnonzero(failing):
            low, high = float(edges[i]), float(edges[i + 1])
            if spans and abs(spans[-1][1] - low) < 1e-12:
                spans[-1] = (spans[-1][0], high)
            else:
                spans.append((low, high))
        intervals.append(tuple(spans))
    return FailureRegion(tuple(space.names), tuple(intervals))
