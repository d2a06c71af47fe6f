"""Each sampler's own statistics over training: one panel per metrics.csv column that a run's sampler record names
for it (``SamplerRecord.state_columns``: learnability's scores and focused share, ALP-GMM's progress and mixture size,
boundary ADR's ranges, a plug-in's own), every run that reports it a line. A sampler added as a plug-in appears here
without an edit."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ...samplers import SamplerError, sampler_record
from ..run_data import RunData
from .sampler_dynamics import SEED_MARKERS
from .style import method_color, new_figure, set_title, steps_axis

MAX_PANELS = 12


def sampler_columns(run: RunData) -> tuple[str, ...]:
    """The run's sampler's own metric columns that hold a finite value (none for a kind not registered here)."""
    try:
        columns = sampler_record(run.sampler).state_columns
    except SamplerError:
        return ()
    return tuple(c for c in columns if c in run.metrics and np.isfinite(run.metrics[c]).any())


def sampler_state_figure(runs: Sequence[RunData], title: str) -> Figure | None:
    """None when no run's sampler reports statistics of its own."""
    reported = [(run, sampler_columns(run)) for run in runs]
    columns = list(dict.fromkeys(c for _, own in reported for c in own))[:MAX_PANELS]
    if not columns:
        return None
    figure, axes = new_figure(len(columns), columns=3)
    methods = list(dict.fromkeys(r.method for r in runs))
    for ax, column in zip(axes, columns):
        seen: dict[str, int] = {}
        for run, own in reported:
            if column not in own:
                continue
            values = run.metrics[column]
            keep = np.isfinite(values)
            marker = SEED_MARKERS[seen.setdefault(run.method, 0) % len(SEED_MARKERS)]  # a method's seeds apart
            seen[run.method] += 1
            ax.plot(run.metrics["agent_steps"][keep], values[keep], color=method_color(run.method,
                    methods.index(run.method)), alpha=0.8, marker=marker, markersize=3, markevery=0.1,
                    label=run.label, gid=f"{column}:{run.label}")
        ax.set_title(column, fontsize=9)
        steps_axis(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    set_title(figure, title)
    return figure
