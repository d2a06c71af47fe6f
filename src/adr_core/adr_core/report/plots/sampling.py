"""Adaptive sampling (paper Fig. "adaptive sampling"): per dimension, the share of proposals per bin of the training
range in each training stage, against the uniform share."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ...randomization import RandomizationSpace
from ..sampling_stats import StageHistograms
from .style import dimension_label, new_figure, set_title

STAGE_COLORMAP = "viridis"


def sampling_histograms_figure(histograms: StageHistograms, space: RandomizationSpace, title: str) -> Figure:
    from matplotlib import colormaps

    d_count = len(histograms.names)
    figure, axes = new_figure(d_count, columns=4)
    low, high = space.range_box("train")
    bins = histograms.frequency.shape[2]
    colors = colormaps[STAGE_COLORMAP](np.linspace(0.0, 0.9, len(histograms.stage_labels)))
    for d, ax in enumerate(axes):
        edges = low[d] + (high[d] - low[d]) * histograms.edges
        centres = (edges[:-1] + edges[1:]) / 2
        for s, label in enumerate(histograms.stage_labels):
            if histograms.counts[s] == 0:
                continue
            ax.plot(centres, histograms.frequency[s, d], drawstyle="steps-mid", color=colors[s],
                    label=f"{label} (n={int(histograms.counts[s])})", gid=f"stage:{s}")
        ax.axhline(1.0 / bins, color="black", linestyle=":", linewidth=1.0, label="uniform")
        ax.axvline(space.reference()[d], color="0.3", linewidth=0.8, linestyle="--", label="reference")
        ax.set_xlim(edges[0], edges[-1])
        ax.set_xlabel(dimension_label(space, d))
        ax.set_ylabel("share of proposals")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    set_title(figure, title)
    return figure
