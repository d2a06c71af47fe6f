"""Generalization curve (paper Fig. "LunarLander generalization"): metric vs each randomized dimension, per method,
mean +- std across seeds (one run: +- std across its episodes), with the "solved" line and the training/hard ranges.
``solved=True``: the share of solved episodes instead (mean +- std across seeds; one run: no band)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ...evaluation.sweeps import SweepResult
from ...randomization import RandomizationSpace
from .style import dimension_label, method_color, new_figure, set_title, solved_line


def generalization_series(runs: Sequence[SweepResult], dimension: int,
                          solved: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, mean, std)`` of one method along ``dimension``: across runs if several, else across episodes (the
    solved share of a single run has no band)."""
    index = runs[0].indices_of(dimension)
    x = runs[0].grid.points[index, dimension]
    per_run = np.stack([(100.0 * r.solved_fraction() if solved else r.mean())[r.indices_of(dimension)] for r in runs])
    if len(runs) > 1:
        return x, per_run.mean(axis=0), per_run.std(axis=0)
    return x, per_run[0], np.zeros_like(per_run[0]) if solved else runs[0].std()[index]


def generalization_figure(groups: Mapping[str, Sequence[SweepResult]], space: RandomizationSpace,
                          solved: bool = False) -> Figure:
    """One panel per swept dimension; ``groups``: method -> the per-dimension sweeps of its runs (one per seed).
    ``solved``: the solved share (%) instead of the task metric."""
    first = next(iter(groups.values()))[0]
    dimensions = [int(d) for d in dict.fromkeys(first.grid.swept.tolist())]
    figure, axes = new_figure(len(dimensions))
    train_low, train_high = space.range_box("train")
    hard = space.range_box("hard") if "hard" in space.range_names else None
    for ax, d in zip(axes, dimensions):
        ax.axvspan(train_low[d], train_high[d], color="0.92", label="training range", zorder=0)
        if hard is not None and (hard[0][d], hard[1][d]) != (train_low[d], train_high[d]):
            ax.axvspan(hard[0][d], hard[1][d], facecolor="none", edgecolor="0.5", hatch="//", label="hard range",
                       zorder=0)
        for i, (method, runs) in enumerate(groups.items()):
            x, mean, std = generalization_series(runs, d, solved)
            band = f"{len(runs)} seeds" if len(runs) > 1 else "1 run" if solved else "1 run, band: episodes"
            color = method_color(method, i)
            ax.plot(x, mean, marker="o", markersize=3, color=color, label=f"{method} ({band})", gid=f"mean:{method}")
            ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        if solved:
            ax.set_ylim(-3, 103)
        else:
            solved_line(ax, first.criterion)
        ax.axvline(space.reference()[d], color="0.3", linewidth=0.8, linestyle=":", label="reference")
        ax.set_xlabel(dimension_label(space, d))
        ax.set_ylabel(f"solved (%, {first.criterion.label})" if solved else first.criterion.axis_label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="best")
    set_title(figure, f"{'Solved share' if solved else 'Generalization'} of the final policy, {space.env_id} "
                      f"({first.episodes} episodes x {len(first.seeds)} evaluation seeds per point)")
    return figure
