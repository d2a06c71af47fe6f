"""Console scripts ``adr-evaluate`` (sweep one trained policy) and ``adr-report`` (evaluate runs, build the report)."""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from ..cli_types import at_least, writable_dir
from ..randomization import RandomizationError
from ..training.checkpoint import CheckpointError
from .grids import DEFAULT_POINTS, GridKind, default_settings, sweep_grid
from .policies import CHECKPOINTS, load_policy, resolve_checkpoint
from .report_evaluations import RUN_SWEEP_DIR, EvaluationOptions
from .run_data import RunDataError
from .settings import SCORE_FIELDS, SettingScore, evaluate
from .sweeps import DEFAULT_EPISODES, DEFAULT_SEEDS, sweep

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

REPORT_DESCRIPTION = """\
Evaluate the final policies of one or more runs and regenerate the paper's figures: generalization curve
(mean +- std across seeds, "solved" line) or, for 2-D spaces, the heat map with the sampling histogram overlaid;
learning curves on the reference and hard settings (from the run's evaluation.csv, else from its kept
checkpoints); training curves from metrics.csv; sampling histograms per training stage ("adaptive sampling");
discriminator reward and proposal spread over time. PNG + SVG, a one-page summary.md + summary.html with a table
of the numbers, and a flag for ranges where ADR's sampler concentrates while the policy never solves them
(paper appendix: likely degenerate ranges).

RUN_DIR: run directories (adr-train or node graph; method, seed and env are read from each config.yaml), or
folders holding run directories (e.g. runs/). Runs are grouped by environment, then by method
(ADR, UDR, oracle, baseline). All evaluation episodes of all runs share one pool of --workers processes."""


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--grid", choices=("auto", "per_dimension", "grid_2d"), default="auto",
                        help="sweep layout; auto: grid_2d for 2-D spaces, per_dimension otherwise [auto]")
    parser.add_argument("--points", type=at_least(2), default=None, metavar="N",
                        help=f"grid points per dimension [{DEFAULT_POINTS['per_dimension']} per-dimension, "
                             f"{DEFAULT_POINTS['grid_2d']} for a 2-D grid]")
    parser.add_argument("--episodes", type=at_least(1), default=DEFAULT_EPISODES, metavar="K",
                        help=f"episodes per point and evaluation seed [{DEFAULT_EPISODES}]")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS), metavar="S",
                        help=f"evaluation seeds (each gives --episodes different start states) "
                             f"[{' '.join(map(str, DEFAULT_SEEDS))}]")
    parser.add_argument("--workers", type=at_least(1), default=None, metavar="N",
                        help="worker processes (1 torch thread each); 1 = this process [number of CPUs]")


def _kind(value: str) -> GridKind | None:
    return None if value == "auto" else cast(GridKind, value)  # argparse's choices: per_dimension or grid_2d


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="adr-evaluate", description=EVALUATE_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example: adr-evaluate runs/ll_adr_s0 --points 25 --seeds 0 1 2 3 4")
    parser.add_argument("run", metavar="RUN", help="run directory, checkpoints/ folder, latest.json or .pt file")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory [<run>/{RUN_SWEEP_DIR}]")
    parser.add_argument("--max-episode-steps", type=int, default=None, metavar="N",
                        help="episode limit [the run's max_episode_steps, else the env's own]")
    _common_options(parser)
    args = parser.parse_args(argv)
    try:
        started = time.perf_counter()
        policy = load_policy(args.run)
        out = writable_dir(args.out or _run_dir_of(resolve_checkpoint(args.run)) / RUN_SWEEP_DIR)
        grid = sweep_grid(policy.space, _kind(args.grid), args.points)
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


def report_main(argv: Sequence[str] | None = None) -> int:
    from .report import ReportOptions, build_report

    parser = argparse.ArgumentParser(prog="adr-report", description=REPORT_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="examples:\n  adr-report runs/ll_adr_s0 --out runs/ll_adr_s0/report\n"
                                            "  adr-report runs/ --out report/ --seeds 0 1 2 3 4")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories or folders of run directories")
    parser.add_argument("--out", type=Path, required=True, help="output directory of the report")
    _common_options(parser)
    parser.add_argument("--curve-episodes", type=int, default=5, metavar="K",
                        help="episodes per setting point for each checkpoint of a learning curve [5]")
    parser.add_argument("--reference-episodes", type=at_least(1), default=100, metavar="N",
                        help="at least N episodes of the final policy at the reference setting, spread over the "
                             "evaluation seeds: the outcome line's figure and its 95%% interval [100]")
    parser.add_argument("--curve-seeds", type=int, nargs="+", default=[0], metavar="S",
                        help="evaluation seeds of the learning-curve points [0]")
    parser.add_argument("--max-checkpoints", type=int, default=10, metavar="N",
                        help="at most N kept checkpoints per run are evaluated for learning curves [10]")
    parser.add_argument("--no-checkpoint-curves", action="store_true",
                        help="do not evaluate kept checkpoints (learning curves only from evaluation.csv)")
    parser.add_argument("--stages", type=int, default=4, help="training stages of the sampling histograms [4]")
    parser.add_argument("--bins", type=int, default=20, help="bins of the sampling histograms [20]")
    parser.add_argument("--formats", nargs="+", default=["png", "svg"], help="figure formats [png svg]")
    args = parser.parse_args(argv)
    try:
        writable_dir(args.out)
    except ValueError as error:
        parser.error(str(error))
    evaluation = EvaluationOptions(episodes=args.episodes, seeds=tuple(args.seeds), curve_episodes=args.curve_episodes,
                                   reference_episodes=args.reference_episodes,
                                   curve_seeds=tuple(args.curve_seeds), checkpoint_curves=not args.no_checkpoint_curves,
                                   max_checkpoints=args.max_checkpoints, workers=args.workers)
    options = ReportOptions(evaluation=evaluation, grid_kind=_kind(args.grid), points=args.points, stages=args.stages,
                            bins=args.bins, formats=tuple(args.formats))
    try:
        build_report(args.runs, args.out, options, log=lambda line: print(line, flush=True))
    except (RunDataError, CheckpointError, RandomizationError, ValueError) as error:
        print(f"adr-report: error: {error}", file=sys.stderr)
        return 2
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
