"""Learning curves (paper: hard-env and reference learning curves): one panel per setting, per method the mean +- std
across its runs on a common agent-step grid, with the "solved" line. Runs of different lengths: a run that ended
earlier holds its last value (``curves.aggregate``); the legend counts them."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from ...evaluation.solved import SolvedCriterion
from ..curves import Curve, aggregate, ended_early
from .style import method_color, new_figure, set_title, solved_line, steps_axis


def learning_curves_figure(curves: Mapping[str, Sequence[Curve]], criterion: SolvedCriterion, title: str) -> Figure:
    """``curves``: panel title (setting) -> curves of every run; grouped by method inside each panel."""
    panels = {name: group for name, group in curves.items() if group}
    figure, axes = new_figure(max(1, len(panels)), columns=3)
    for ax, (setting, group) in zip(axes, panels.items()):
        methods: dict[str, list[Curve]] = {}
        for curve in group:
            methods.setdefault(curve.method, []).append(curve)
        for i, (method, runs) in enumerate(methods.items()):
            steps, mean, std = aggregate(runs)
            color = method_color(method, i)
            label = f"{method} ({len(runs)} run{'s' if len(runs) > 1 else ''}"
            shorter = len(ended_early(runs))
            label += f"; {shorter} ended earlier, held at their last value)" if shorter else ")"
            ax.plot(steps, mean, color=color, marker="o" if len(steps) < 15 else None, markersize=3, label=label,
                    gid=f"mean:{method}")
            if len(runs) > 1:
                ax.fill_between(steps, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        solved_line(ax, criterion)
        sources = sorted({c.source for c in group})
        ax.set_title(f"{setting}  [{', '.join(sources)}]", fontsize=9)
        steps_axis(ax)
        ax.set_ylabel(criterion.axis_label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    set_title(figure, title)
    return figure
