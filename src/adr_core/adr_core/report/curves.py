"""Learning curves as data: from ``evaluation.csv`` (periodic evaluation hook), from evaluated checkpoints, or from
the training rollouts logged in ``metrics.csv``; and their mean +- std across runs."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..evaluation.solved import SolvedCriterion
from .run_data import RunData

FROM_EVALUATION, FROM_CHECKPOINTS, FROM_METRICS = "evaluation.csv", "checkpoints", "metrics.csv"


@dataclass(frozen=True)
class Curve:
    run: str  # run label
    method: str
    setting: str  # "reference", "hard", or a training-rollout series
    source: str  # FROM_EVALUATION, FROM_CHECKPOINTS or FROM_METRICS
    steps: np.ndarray  # agent steps
    values: np.ndarray


def metric_column(criterion: SolvedCriterion) -> str:
    return "return_mean" if criterion.metric == "return" else "final_distance_mean"


def evaluation_curve(run: RunData, setting: str, criterion: SolvedCriterion) -> Curve | None:
    """The periodic evaluation's curve of ``setting``, if the run recorded one."""
    column = f"{setting}_{metric_column(criterion)}"
    if run.evaluation is None or column not in run.evaluation or not len(run.evaluation[column]):
        return None
    return _curve(run, setting, FROM_EVALUATION, run.evaluation["agent_steps"], run.evaluation[column])


def training_curves(run: RunData, criterion: SolvedCriterion) -> list[Curve]:
    """Per-iteration means of the training rollouts: randomized (exploration noise on) and, for ADR, reference."""
    column = metric_column(criterion)
    out = []
    for name, series in (("randomized", column), ("reference", f"reference_{column}")):
        values = run.metrics.get(series)
        if values is not None and np.isfinite(values).any():
            out.append(_curve(run, f"training rollouts, {name}", FROM_METRICS, run.metrics["agent_steps"], values))
    return out


def checkpoint_curve(run: RunData, setting: str, steps: Sequence[int], values: Sequence[float]) -> Curve:
    return _curve(run, setting, FROM_CHECKPOINTS, np.asarray(steps, float), np.asarray(values, float))


def aggregate(curves: Sequence[Curve], points: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and std across curves on a common step grid from the earliest first point to the latest last point.

    Runs may have different lengths (an early stop, a shorter budget): past its last point a curve holds its last
    value (the policy it ended with, which is what the run delivers), before its first point it is left out. One
    curve: itself, std 0. Curves that all sit at one step: their mean and std there.
    """
    if len(curves) == 1:
        return curves[0].steps, curves[0].values, np.zeros_like(curves[0].values)
    start = min(c.steps.min() for c in curves)
    stop = max(c.steps.max() for c in curves)
    grid = np.linspace(start, stop, points) if stop > start else np.array([start], dtype=float)
    stacked = np.stack([np.where(grid < c.steps.min(), np.nan, np.interp(grid, c.steps, c.values)) for c in curves])
    counted = np.isfinite(stacked).any(axis=0)
    stacked = stacked[:, counted]
    return grid[counted], np.nanmean(stacked, axis=0), np.nanstd(stacked, axis=0)


def ended_early(curves: Sequence[Curve]) -> list[str]:
    """Labels of the runs whose curve ends before the longest one (held at their last value by ``aggregate``)."""
    if len(curves) < 2:
        return []
    stop = max(c.steps.max() for c in curves)
    return [c.run for c in curves if c.steps.max() < stop]


def _curve(run: RunData, setting: str, source: str, steps: np.ndarray, values: np.ndarray) -> Curve:
    keep = np.isfinite(steps) & np.isfinite(values)
    order = np.argsort(steps[keep], kind="stable")
    return Curve(run.label, run.method, setting, source, steps[keep][order], values[keep][order])
