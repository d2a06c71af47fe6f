"""Where a sampler spent its proposals: histograms per training stage, and the particles' spread over time."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .run_data import RunData


@dataclass(frozen=True)
class StageHistograms:
    """``frequency[s, d, b]``: share of stage s's proposals whose dimension d falls in bin b of the training range."""

    names: tuple[str, ...]
    edges: np.ndarray  # (bins + 1,) normalized coordinates, 0..1 = the training range
    frequency: np.ndarray  # (stages, d, bins)
    counts: np.ndarray  # (stages,) proposals per stage
    stage_labels: tuple[str, ...]


def sample_progress(run: RunData) -> np.ndarray:
    """Fraction of the run's agent steps reached at the end of the iteration of each proposal (0..1)."""
    steps = run.agent_steps_of_iterations(run.samples.iteration)
    total = np.nanmax(steps) if steps.size and np.isfinite(steps).any() else np.nan
    if not np.isfinite(total) or total <= 0:  # no metrics: fall back on the iteration index
        last = max(int(run.samples.iteration.max(initial=0)), 1)
        return (run.samples.iteration + 1) / (last + 1)
    return np.where(np.isfinite(steps), steps / total, 1.0)


def stage_histograms(runs: Sequence[RunData], stages: int = 4, bins: int = 20) -> StageHistograms:
    """Proposals of all ``runs`` (e.g. the seeds of one method) pooled, split into ``stages`` equal shares of each
    run's agent steps. Bins cover the training range in normalized coordinates (what the sampler moves in)."""
    if not runs:
        raise ValueError("no runs")
    names = runs[0].samples.names
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts = np.zeros((stages, len(names), bins))
    for run in runs:
        stage = np.minimum((sample_progress(run) * stages - 1e-9).astype(int), stages - 1).clip(0)
        index = np.clip((run.samples.normalized * bins).astype(int), 0, bins - 1)
        for s in range(stages):
            for d in range(len(names)):
                counts[s, d] += np.bincount(index[stage == s, d], minlength=bins)[:bins]
    per_stage = counts[:, 0, :].sum(axis=1)
    frequency = counts / np.maximum(per_stage, 1)[:, None, None]
    total = _total_steps(runs)
    labels = tuple(f"{_steps(total * s / stages)}-{_steps(total * (s + 1) / stages)} steps" for s in range(stages))
    return StageHistograms(tuple(names), edges, frequency, per_stage, labels)


def late_samples(runs: Sequence[RunData], share: float = 0.5) -> np.ndarray:
    """Normalized proposals from the last ``share`` of each run (where a learned sampler has settled)."""
    parts = [run.samples.normalized[sample_progress(run) > 1.0 - share] for run in runs]
    return np.concatenate(parts) if parts else np.zeros((0, 0))


def spread_over_time(run: RunData) -> tuple[np.ndarray, np.ndarray]:
    """``(agent_steps, spread)`` per iteration: mean pairwise distance of the iteration's proposals in normalized
    coordinates (for ADR with one proposal per particle: the particles' spread, as ``adr/sampler_state``)."""
    iterations = np.unique(run.samples.iteration)
    spread = np.array([mean_pairwise_distance(run.samples.normalized[run.samples.iteration == i]) for i in iterations])
    return run.agent_steps_of_iterations(iterations), spread


def mean_pairwise_distance(points: np.ndarray) -> float:
    """Mean Euclidean distance over ordered pairs of distinct rows of ``points`` (NaN for fewer than two)."""
    if len(points) < 2:
        return float("nan")
    differences = points[:, None, :] - points[None, :, :]
    distances = np.sqrt((differences ** 2).sum(-1))
    return float(distances.sum() / (len(points) * (len(points) - 1)))


def _total_steps(runs: Sequence[RunData]) -> float:
    finals = [np.nanmax(r.metrics["agent_steps"]) for r in runs if len(r.metrics.get("agent_steps", []))]
    return float(np.mean(finals)) if finals else float("nan")


def _steps(value: float) -> str:
    if not np.isfinite(value):
        return "?"
    return f"{value / 1e6:.2g}M" if value >= 1e6 else f"{value / 1e3:.3g}k" if value >= 1e3 else f"{value:.0f}"
