"""Console script ``adr-report``: evaluate the final policies of runs and build the paper's figures and a summary."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..base.checkpoint import CheckpointError
from ..cli_types import ArgumentParser, at_least, env_modules_option, existing_dir, output_dir, seed
from ..envs import allow_env_modules
from ..evaluation.options import common_options, grid_kind
from ..randomization import RandomizationError
from .build import ReportOptions, build_report
from .evaluations import EvaluationOptions
from .run_data import RunDataError, method_order

FIGURE_FORMATS = ("png", "svg", "pdf")  # what matplotlib's Agg/SVG/PDF backends write here

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
({methods}). All evaluation episodes of all runs share one pool of --workers processes."""



def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    allow_env_modules(args.env_modules)
    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="adr-report", description=REPORT_DESCRIPTION.format(methods=", ".join(method_order())),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="examples:\n  adr-report runs/ll_adr_s0 --out runs/ll_adr_s0/report\n"
                                            "  adr-report runs/ --out report/ --seeds 0 1 2 3 4")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", type=existing_dir("run folder"),
                        help="run directories or folders of run directories")
    parser.add_argument("--out", type=output_dir(), required=True, help="output directory of the report")
    common_options(parser)
    parser.add_argument("--curve-episodes", type=at_least(1), default=5, metavar="K",
                        help="episodes per setting point for each checkpoint of a learning curve [5]")
    parser.add_argument("--reference-episodes", type=at_least(1), default=100, metavar="N",
                        help="at least N episodes of the final policy at the reference setting, spread over the "
                             "evaluation seeds: the outcome line's figure and its 95%% interval [100]")
    parser.add_argument("--curve-seeds", type=seed, nargs="+", default=[0], metavar="S",
                        help="evaluation seeds of the learning-curve points [0]")
    parser.add_argument("--max-checkpoints", type=at_least(1), default=10, metavar="N",
                        help="at most N kept checkpoints per run are evaluated for learning curves [10]")
    parser.add_argument("--no-checkpoint-curves", action="store_true",
                        help="do not evaluate kept checkpoints (learning curves only from evaluation.csv)")
    parser.add_argument("--stages", type=at_least(1), default=4, help="training stages of the sampling histograms [4]")
    parser.add_argument("--bins", type=at_least(1), default=20, help="bins of the sampling histograms [20]")
    parser.add_argument("--formats", nargs="+", default=["png", "svg"], choices=FIGURE_FORMATS,
                        help="figure formats [png svg]")
    env_modules_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    evaluation = EvaluationOptions(episodes=args.episodes, seeds=tuple(args.seeds), curve_episodes=args.curve_episodes,
                                   reference_episodes=args.reference_episodes,
                                   curve_seeds=tuple(args.curve_seeds), checkpoint_curves=not args.no_checkpoint_curves,
                                   max_checkpoints=args.max_checkpoints, workers=args.workers)
    options = ReportOptions(evaluation=evaluation, grid_kind=grid_kind(args.grid), points=args.points,
                            stages=args.stages, bins=args.bins, formats=tuple(args.formats))
    try:
        build_report(args.runs, args.out, options, log=lambda line: print(line, flush=True))
    except (RunDataError, CheckpointError, RandomizationError, ValueError) as error:
        print(f"adr-report: error: {error}", file=sys.stderr)
        return 2
    return 0
