"""2-D heat map (paper Fig. Pusher-3DOF): the final policy's mean metric over a 2-D grid of the randomization space,
with the sampler's proposal histogram overlaid as contour lines and the training and hard ranges outlined."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...evaluation.sweeps import SweepResult
from ...randomization import RandomizationSpace
from .style import dimension_label


def cell_edges(values: np.ndarray) -> np.ndarray:
    """Edges of cells centred on equally spaced grid values."""
    step = values[1] - values[0]
    return np.concatenate([values - step / 2, [values[-1] + step / 2]])


def heatmap_data(runs: Sequence[SweepResult]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x values, y values, mean metric (nx, ny))``, averaged over the runs."""
    grid = runs[0].grid
    nx, ny = grid.shape
    x, y = grid.points[::ny, 0], grid.points[:ny, 1]
    return x, y, np.mean([r.mean().reshape(nx, ny) for r in runs], axis=0)


def sampling_share(samples: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Share of the proposals ``(N, 2)`` physical falling in each heat-map cell, ``(nx, ny)``."""
    counts, _, _ = np.histogram2d(samples[:, 0], samples[:, 1], bins=[cell_edges(x), cell_edges(y)])
    share: np.ndarray = counts / max(len(samples), 1)
    return share


def heatmap_figure(runs: Sequence[SweepResult], samples: np.ndarray, space: RandomizationSpace, title: str) -> Figure:
    x, y, data = heatmap_data(runs)
    criterion = runs[0].criterion
    figure = Figure(figsize=(6.4, 5.2), layout="constrained")
    ax = figure.add_subplot()
    ex, ey = cell_edges(x), cell_edges(y)
    image = ax.imshow(data.T, origin="lower", extent=(ex[0], ex[-1], ey[0], ey[-1]), aspect="auto",
                      cmap="viridis" if criterion.higher_is_better else "viridis_r", interpolation="nearest")
    figure.colorbar(image, ax=ax, label=f"mean {criterion.axis_label} ({criterion.label})")
    share = sampling_share(samples, x, y)
    if share.max() > 0:
        levels = np.linspace(share.max() / 5, share.max(), 4)
        contours = ax.contour(x, y, share.T, levels=levels, colors="white", linewidths=1.2)
        ax.clabel(contours, fmt=lambda v: f"{100 * v:.0f}%", fontsize=7)
    for name, style in (("train", dict(edgecolor="black", linewidth=2.0)),
                        ("hard", dict(edgecolor="magenta", linewidth=1.5, linestyle="--"))):
        if name in space.range_names:
            low, high = space.range_box(name)
            ax.add_patch(Rectangle((low[0], low[1]), high[0] - low[0], high[1] - low[1], fill=False,
                                   label=f"{name} range", **cast("dict[str, Any]", style)))
    ax.plot(*space.reference(), marker="*", color="white", markeredgecolor="black", markersize=12, linestyle="none",
            label="reference")
    ax.set_xlabel(dimension_label(space, 0))
    ax.set_ylabel(dimension_label(space, 1))
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title(f"{title}\ncontours: share of proposals per cell", fontsize=9)
    return figure
