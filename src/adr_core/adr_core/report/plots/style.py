"""Shared look of the report's figures (matplotlib's object API: no pyplot, no global backend state)."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ...evaluation.solved import SolvedCriterion
from ...randomization import RandomizationSpace

METHOD_COLORS = {"ADR": "#d62728", "UDR": "#1f77b4", "oracle": "#2ca02c", "baseline": "#7f7f7f",
                 "boundary ADR": "#9467bd"}
EXTRA_COLORS = ("#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
SOLVED_LABEL_STYLE: dict[str, Any] = dict(color="black", linestyle="--", linewidth=1.0)
FORMATS = ("png", "svg")


def method_color(method: str, index: int = 0) -> str:
    return METHOD_COLORS.get(method, EXTRA_COLORS[index % len(EXTRA_COLORS)])


MIN_WIDTH = 7.0  # inches: room for the title of a one-panel figure


def new_figure(panels: int, columns: int = 4,
               panel_size: tuple[float, float] = (4.6, 3.4)) -> tuple[Figure, list[Axes]]:
    columns = max(1, min(columns, panels))
    rows = -(-panels // columns)
    width = max(MIN_WIDTH, panel_size[0] * columns)
    figure = Figure(figsize=(width, panel_size[1] * rows + 0.4), layout="constrained")
    axes = [figure.add_subplot(rows, columns, i + 1) for i in range(panels)]
    return figure, axes


def set_title(figure: Figure, text: str) -> None:
    width_chars = int(figure.get_figwidth() * 13)
    figure.suptitle(textwrap.fill(text, width_chars), fontsize=10)


def steps_axis(ax: Axes) -> None:
    """Agent steps as 0, 5k, 10k, ... 1M."""
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: _short_number(value)))
    ax.set_xlabel("agent steps")


def _short_number(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def solved_line(ax: Axes, criterion: SolvedCriterion) -> None:
    ax.axhline(criterion.threshold, label=criterion.label, **SOLVED_LABEL_STYLE)


def dimension_label(space: RandomizationSpace, d: int) -> str:
    dim = space.dims[d]
    unit = dim.unit.split(" (")[0] if dim.unit else ""
    return f"{dim.name}" + (f" [{unit}]" if unit and len(unit) <= 8 else "")


def save_figure(figure: Figure, directory: str | Path, name: str, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = directory / f"{name}.{fmt}"
        figure.savefig(path, dpi=110 if fmt == "png" else None)
        paths.append(path)
    return paths
