"""Console script ``adr-evaluate``: sweep one trained policy (``adr-report`` is ``adr_core.report.cli``)."""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..base.checkpoint import CheckpointError
from ..cli_types import ArgumentParser, at_least, env_modules_option, existing_path, output_dir, writable_dir
from ..envs import allow_env_modules
from ..randomization import RandomizationError
from .grids import DEFAULT_POINTS, default_settings, sweep_grid
from .options import common_options, grid_kind
from .policies import CHECKPOINTS, load_policy, resolve_checkpoint
from .settings import SCORE_FIELDS, SettingScore, evaluate
from .sweeps import DEFAULT_EPISODES, RUN_SWEEP_DIR, sweep

SETTINGS_CSV = "settings.csv"
_LINE_POINTS, _GRID_POINTS = DEFAULT_POINTS["per_dimension"], DEFAULT_POINTS["grid_2d"]

EVALUATE_DESCRIPTION = f"""\
Generalization sweep of one trained policy (paper: "generalization" figures): the deterministic policy (no
exploration noise) over a grid of the randomization space, {DEFAULT_EPISODES} episodes per point and evaluation seed
by default (as the published code), in parallel worker processes; plus its scores on the named settings
(reference, and the held-out 'hard' range where the space defines one).

RUN is a run directory of adr-train (checkpoints/latest.pt) or of the node graph (checkpoints/latest.json ->
agent-<k>.pt), or a checkpoint file. The grid spans each dimension's allowed range (the hull of the training
range, the default and the named test ranges, e.g. LunarLander main engine 8..20, Pusher 0.5x..1.0x), so it
includes points outside the training range. Default grid: per-dimension sweeps with {_LINE_POINTS} points
(others at default), or a {_GRID_POINTS}x{_GRID_POINTS} grid for 2-D spaces (Pusher3DOF, ErgoPusher). Episode e of
evaluation seed s starts from the same state at every point; results do not depend on --workers.

Writes to --out (default <run>/{RUN_SWEEP_DIR}): sweep.npz, sweep_points.csv (mean/std per point, solved fraction,
the solved threshold), sweep_episodes.csv (every episode), {SETTINGS_CSV}. adr-report reuses this sweep when its
options match."""

def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr-evaluate", description=EVALUATE_DESCRIPTION,
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="example: adr-evaluate runs/ll_adr_s0 --points 25 --seeds 0 1 2 3 4")
    parser.add_argument("run", metavar="RUN", type=existing_path("run"),
                        help="run directory, checkpoints/ folder, latest.json or .pt file")
    parser.add_argument("--out", type=output_dir(), default=None, help=f"output directory [<run>/{RUN_SWEEP_DIR}]")
    parser.add_argument("--max-episode-steps", type=at_least(1), default=None, metavar="N",
                        help="episode limit [the run's max_episode_steps, else the env's own]")
    common_options(parser)
    env_modules_option(parser)
    return parser


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    allow_env_modules(args.env_modules)
    try:
        started = time.perf_counter()
        policy = load_policy(args.run)
        out = writable_dir(args.out or _run_dir_of(resolve_checkpoint(args.run)) / RUN_SWEEP_DIR)
        grid = sweep_grid(policy.space, grid_kind(args.grid), args.points)
        print(f"{policy.env_id}: {policy.path} (iteration {policy.iteration}, {policy.agent_steps} agent steps); "
              f"{len(grid)} points x {len(args.seeds)} seeds x {args.episodes} episodes", flush=True)
        result = sweep(policy, grid, episodes=args.episodes, seeds=args.seeds, workers=args.workers,
                       max_episode_steps=args.max_episode_steps)
        result.save(out)
        scores = evaluate(policy, policy.env_id, default_settings(policy.space), args.episodes, args.seeds,
                          max_episode_steps=args.max_episode_steps, workers=args.workers)
        _write_settings(out / SETTINGS_CSV, scores)
    except (CheckpointError, RandomizationError, ValueError) as error:
        print(f"adr-evaluate: error: {error}", file=sys.stderr)
        return 2
    print(f"{result.criterion.label}; sweep mean {result.mean().mean():.4g}, solved at "
          f"{100 * result.solved_fraction().mean():.0f}% of episodes")
    for name, score in scores.items():
        summary = score.summary()
        print(f"  {name:>10}: return {summary['return_mean']:.4g} +- {summary['return_std']:.3g}, solved "
              f"{100 * summary['solved_fraction']:.0f}%, final distance {summary['final_distance_mean']:.4g}")
    print(f"wrote {out} ({time.perf_counter() - started:.1f} s)")
    return 0


def _run_dir_of(checkpoint: Path) -> Path:
    return checkpoint.parent.parent if checkpoint.parent.name == CHECKPOINTS else checkpoint.parent


def _write_settings(path: Path, scores: dict[str, SettingScore]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["setting", "points", "episodes", *SCORE_FIELDS])
        for name, score in scores.items():
            summary = score.summary()
            writer.writerow([name, len(score.points), score.outcomes.returns.size,
                             *("" if math.isnan(summary[k]) else repr(summary[k]) for k in SCORE_FIELDS)])
