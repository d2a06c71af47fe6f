"""Evaluate policies at sets of points: ``points x seeds x episodes`` outcome arrays, all requests in one pool."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .episodes import EpisodeJob, EpisodeOutcomes, PolicySpec, run_jobs


@dataclass(frozen=True)
class PointsRequest:
    policy: str  # key into the policy specs
    points: np.ndarray  # (n, d) physical
    seeds: tuple[int, ...]
    episodes: int

    def jobs(self) -> list[EpisodeJob]:
        return [EpisodeJob(self.policy, tuple(float(v) for v in point), int(seed), int(self.episodes))
                for point in np.asarray(self.points, dtype=np.float64) for seed in self.seeds]


@dataclass(frozen=True)
class PointOutcomes:
    """Per-episode results, each ``(n points, seeds, episodes)``."""

    returns: np.ndarray
    final_distance: np.ndarray
    solved: np.ndarray
    lengths: np.ndarray

    @classmethod
    def stack(cls, outcomes: Sequence[EpisodeOutcomes], n_points: int, n_seeds: int) -> PointOutcomes:
        def gather(name: str) -> np.ndarray:
            values = np.stack([getattr(o, name) for o in outcomes])
            return values.reshape(n_points, n_seeds, -1)

        return cls(gather("returns"), gather("final_distance"), gather("solved"), gather("lengths"))


def evaluate_points(specs: Mapping[str, PolicySpec], requests: Sequence[PointsRequest], workers: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> list[PointOutcomes]:
    """One ``PointOutcomes`` per request, in order; every episode of every request shares one worker pool."""
    for request in requests:
        if request.episodes < 1 or not request.seeds:
            raise ValueError(f"need at least one episode and one seed, got {request.episodes} episodes, "
                             f"seeds {request.seeds}")
        if request.policy not in specs:
            raise KeyError(f"no policy {request.policy!r}; known: {sorted(specs)}")
    all_jobs: list[EpisodeJob] = []
    bounds: list[tuple[int, int]] = []
    for request in requests:
        jobs = request.jobs()
        bounds.append((len(all_jobs), len(all_jobs) + len(jobs)))
        all_jobs += jobs
    outcomes = run_jobs(specs, all_jobs, workers, progress)
    return [PointOutcomes.stack(outcomes[a:b], len(r.points), len(r.seeds)) for r, (a, b) in zip(requests, bounds)]
