"""Interpretability helper (paper appendix "Interpretability Benefits of ADR"): regions where a learned sampler
concentrates its proposals while the agent never solves them, a sign of a degenerate randomization range (the paper's
LunarLander with main engine strength below ~8).

Per dimension, the training range is cut into ``bins`` bins; a bin is *concentrated* when the late-training share of
proposals in it is at least ``concentration`` times the uniform share; it is *never solved* when every sweep point of
that dimension inside the bin has a solved fraction of 0 (all runs, seeds and episodes). Adjacent flagged bins merge.
The check only means something for a policy that reliably solves part of the space (some point solved in at least
half of its episodes): ``applicable`` says whether it does.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..evaluation.sweeps import SweepResult
from ..randomization import RandomizationSpace


@dataclass(frozen=True)
class DegenerateRegion:
    dimension: str
    low: float  # physical
    high: float
    sampling_ratio: float  # share of late proposals in the region / uniform share
    solved_fraction: float  # over the sweep points inside the region
    metric_mean: float  # mean return or final distance there
    points: int  # sweep points inside

    def describe(self, unit_metric: str) -> str:
        return (f"{self.dimension} in [{self.low:.4g}, {self.high:.4g}]: sampled {self.sampling_ratio:.1f}x "
                f"the uniform rate, never solved at {self.points} evaluated point(s) "
                f"(mean {unit_metric} {self.metric_mean:.3g})")


APPLICABLE_SOLVED_FRACTION = 0.5


def applicable(sweeps: Sequence[SweepResult]) -> bool:
    """True when some sweep point is solved in at least half of its episodes (an untrained policy 'never solves'
    anywhere, which says nothing about the ranges)."""
    return any(result.solved_fraction().max(initial=0.0) >= APPLICABLE_SOLVED_FRACTION for result in sweeps)


def degenerate_regions(space: RandomizationSpace, late_normalized: np.ndarray, sweeps: Sequence[SweepResult],
                       bins: int = 10, concentration: float = 1.5) -> list[DegenerateRegion]:
    if late_normalized.size == 0 or not applicable(sweeps):
        return []
    low, high = space.range_box("train")
    regions: list[DegenerateRegion] = []
    for d, name in enumerate(space.names):
        if low[d] == high[d]:
            continue
        index = np.clip((late_normalized[:, d] * bins).astype(int), 0, bins - 1)
        ratio = np.bincount(index, minlength=bins)[:bins] / len(late_normalized) * bins
        flagged = []
        for b in range(bins):
            lo, hi = low[d] + (high[d] - low[d]) * b / bins, low[d] + (high[d] - low[d]) * (b + 1) / bins
            solved, _ = _at(sweeps, d, lo, hi)
            flagged.append(bool(ratio[b] >= concentration and solved.size > 0 and not solved.any()))
        for start, stop in _runs_of_true(flagged):
            lo = low[d] + (high[d] - low[d]) * start / bins
            hi = low[d] + (high[d] - low[d]) * stop / bins
            solved, metric = _at(sweeps, d, lo, hi)
            regions.append(DegenerateRegion(name, float(lo), float(hi), float(ratio[start:stop].mean()),
                                            float(solved.mean()), float(np.nanmean(metric)), int(solved.size)))
    return regions


def _at(sweeps: Sequence[SweepResult], d: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per sweep point of dimension ``d`` inside [lo, hi] (every run): solved fraction and mean metric."""
    solved, metric = [], []
    for result in sweeps:
        along = result.grid.swept == d if result.grid.kind == "per_dimension" else np.ones(len(result.grid), bool)
        inside = along & (result.grid.points[:, d] >= lo - 1e-12) & (result.grid.points[:, d] <= hi + 1e-12)
        solved.append(result.solved_fraction()[inside])
        metric.append(result.mean()[inside])
    return np.concatenate(solved), np.concatenate(metric)


def _runs_of_true(flags: Sequence[bool]) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i))
            start = None
    return runs
