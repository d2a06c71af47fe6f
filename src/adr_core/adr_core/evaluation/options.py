"""The options adr-evaluate and adr-report share: the grid, its points, episodes, evaluation seeds, workers."""
from __future__ import annotations

import argparse
from typing import cast

from ..cli_types import at_least, seed
from .grids import DEFAULT_POINTS, GridKind
from .sweeps import DEFAULT_EPISODES, DEFAULT_SEEDS


def common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--grid", choices=("auto", "per_dimension", "grid_2d"), default="auto",
                        help="sweep layout; auto: grid_2d for 2-D spaces, per_dimension otherwise [auto]")
    parser.add_argument("--points", type=at_least(2), default=None, metavar="N",
                        help=f"grid points per dimension [{DEFAULT_POINTS['per_dimension']} per-dimension, "
                             f"{DEFAULT_POINTS['grid_2d']} for a 2-D grid]")
    parser.add_argument("--episodes", type=at_least(1), default=DEFAULT_EPISODES, metavar="K",
                        help=f"episodes per point and evaluation seed [{DEFAULT_EPISODES}]")
    parser.add_argument("--seeds", type=seed, nargs="+", default=list(DEFAULT_SEEDS), metavar="S",
                        help=f"evaluation seeds (each gives --episodes different start states) "
                             f"[{' '.join(map(str, DEFAULT_SEEDS))}]")
    parser.add_argument("--workers", type=at_least(1), default=None, metavar="N",
                        help="worker processes (1 torch thread each); 1 = this process [number of CPUs]")


def grid_kind(value: str) -> GridKind | None:
    return None if value == "auto" else cast(GridKind, value)  # argparse's choices: per_dimension or grid_2d
