"""The sampler over time: mean reward of the proposals (ADR: the discriminator's; boundary ADR: their solved share)
and the spread of the proposals in the normalized space (for ADR: the particles; for boundary ADR also its ranges'
mean width, dashed)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ..run_data import RunData
from ..sampling_stats import spread_over_time
from .style import method_color, new_figure, set_title, steps_axis

SEED_MARKERS = ("o", "s", "^", "v", "D", "P", "X")


def sampler_dynamics_figure(runs: Sequence[RunData], title: str) -> Figure:
    figure, (reward_ax, spread_ax) = new_figure(2, columns=2)
    methods = list(dict.fromkeys(r.method for r in runs))
    seen: dict[str, int] = {}
    for run in runs:
        color = method_color(run.method, methods.index(run.method))
        # runs of one method share its colour; a marker per run tells its seeds apart
        marker = SEED_MARKERS[seen.setdefault(run.method, 0) % len(SEED_MARKERS)]
        seen[run.method] += 1
        style: dict[str, Any] = {"color": color, "alpha": 0.8, "marker": marker, "markersize": 3, "markevery": 0.1}
        reward = run.metrics.get("sampler_reward_mean")
        if reward is not None and np.isfinite(reward).any():
            keep = np.isfinite(reward)
            reward_ax.plot(run.metrics["agent_steps"][keep], reward[keep], **style, label=run.label,
                           gid=f"reward:{run.label}")
        width = run.metrics.get("boundary_width_mean")
        if width is not None and np.isfinite(width).any():  # boundary ADR: how wide its ranges are
            keep = np.isfinite(width)
            spread_ax.plot(run.metrics["agent_steps"][keep], width[keep], **style, linestyle="--",
                           label=f"{run.label} range width", gid=f"width:{run.label}")
        if run.method != "baseline":
            steps, spread = spread_over_time(run)
            keep = np.isfinite(steps) & np.isfinite(spread)
            if keep.any():
                spread_ax.plot(steps[keep], spread[keep], **style, label=run.label,
                               gid=f"spread:{run.label}")
    reward_ax.set_title("reward of the proposals\n(ADR: discriminator; boundary ADR: solved share)", fontsize=9)
    reward_ax.set_ylabel("mean reward")
    spread_ax.set_title("spread of the proposals (mean pairwise distance)\nboundary ADR: range width (dashed)",
                        fontsize=9)
    spread_ax.set_ylabel("spread")
    for ax in (reward_ax, spread_ax):
        steps_axis(ax)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no data (no learning sampler)", ha="center", va="center", transform=ax.transAxes)
    set_title(figure, title)
    return figure
