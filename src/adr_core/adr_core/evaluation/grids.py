"""Where a policy is evaluated: sweep grids over the randomization space and named settings ("reference", "hard").

Sweeps span each dimension's *allowed* range (``space.limits()``: the hull of the default, the training range and
every named range such as the paper's test ranges), so points outside the training range are included.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..randomization import RandomizationError, RandomizationSpace

GridKind = Literal["per_dimension", "grid_2d"]
REFERENCE = "reference"
DEFAULT_POINTS = {"per_dimension": 13, "grid_2d": 9}  # LunarLander: main engine 8..20 in steps of 1


@dataclass(frozen=True)
class SweepGrid:
    """Physical points of a sweep. ``per_dimension``: ``swept[i]`` is the dimension point i varies (others at default);
    ``grid_2d``: point ``i0 * shape[1] + i1`` is (axis0 value i0, axis1 value i1), ``swept`` is -1."""

    kind: GridKind
    names: tuple[str, ...]
    points: np.ndarray  # (n, d) physical
    swept: np.ndarray  # (n,) int
    shape: tuple[int, ...]  # per_dimension: (points per dimension,); grid_2d: (n0, n1)

    def __len__(self) -> int:
        return len(self.points)


def choose_kind(space: RandomizationSpace) -> GridKind:
    """A 2-D grid for 2-D spaces (Pusher3DOF, ErgoPusher: the paper's heat map), per-dimension sweeps otherwise."""
    return "grid_2d" if space.ndim == 2 else "per_dimension"


def sweep_grid(space: RandomizationSpace, kind: GridKind | None = None, points: int | None = None) -> SweepGrid:
    kind = kind or choose_kind(space)
    n = points or DEFAULT_POINTS[kind]
    if n < 2:
        raise ValueError(f"a sweep needs at least 2 points per dimension, got {n}")
    low, high = space.limits()
    if kind == "grid_2d":
        if space.ndim != 2:
            raise ValueError(f"{space.env_id} has {space.ndim} dimensions; a 2-D grid needs exactly 2")
        axes = [np.linspace(low[d], high[d], n) for d in range(2)]
        grid = np.array(list(itertools.product(*axes)), dtype=np.float64)
        return SweepGrid(kind, tuple(space.names), space.validate(grid), np.full(len(grid), -1), (n, n))
    if kind != "per_dimension":
        raise ValueError(f"unknown sweep kind {kind!r}; use 'per_dimension' or 'grid_2d'")
    rows, swept = [], []
    for d in range(space.ndim):
        if low[d] == high[d]:
            continue
        block = np.tile(space.reference(), (n, 1))
        block[:, d] = np.linspace(low[d], high[d], n)
        rows.append(block)
        swept += [d] * n
    return SweepGrid(kind, tuple(space.names), space.validate(np.concatenate(rows)), np.array(swept), (n,))


def setting_points(space: RandomizationSpace, name: str, per_dim: int = 3) -> np.ndarray:
    """``(m, d)`` physical points standing for a named setting: ``reference`` = the defaults; a named range (``hard``,
    ``test``, ``train``, ...) = a grid of ``per_dim`` values on each of its (at most 2) varying dimensions, or, with
    more varying dimensions, its centre plus its low and high edge along each varying dimension."""
    if name == REFERENCE:
        return space.reference()[None, :]
    try:
        low, high = space.range_box(name)
    except RandomizationError as error:
        raise ValueError(f"unknown setting {name!r}: use {REFERENCE!r} or a named range ({error})") from None
    varying = [d for d in range(space.ndim) if low[d] != high[d]]
    centre = (low + high) / 2.0
    if not varying:
        return low[None, :]
    if len(varying) <= 2:
        values = [np.linspace(low[d], high[d], per_dim) for d in varying]
        points = np.tile(centre, (per_dim ** len(varying), 1))
        points[:, varying] = np.array(list(itertools.product(*values)))
        return space.validate(points)
    edge_points = [centre]
    for d in varying:
        for edge in (low[d], high[d]):
            point = centre.copy()
            point[d] = edge
            edge_points.append(point)
    return space.validate(np.array(edge_points))


def default_settings(space: RandomizationSpace) -> tuple[str, ...]:
    """``reference`` plus the paper's held-out ``hard`` range when the space defines one."""
    return (REFERENCE, "hard") if "hard" in space.range_names else (REFERENCE,)
