"""``adr-probe``: where does ADR's sampler look, for a policy that does not change?"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ..base.checkpoint import CheckpointError
from ..cli_types import ArgumentParser, at_least, env_modules_option, non_negative_number, output_dir, seed, text
from ..envs import allow_env_modules
from ..randomization import RandomizationError, space_of
from ..training.cli import config_from_args
from ..training.config import ConfigError, TrainConfig
from ..training.experiments import resolve_experiment
from .policies import PolicyLoadError, load_frozen_policy
from .probe import FOCUS_RATIO, Probe, Sweep

DESCRIPTION = f"""\
Algorithm 1 (ADR) without agent updates around a frozen policy: the SVPG particles propose settings, the policy rolls
out in them and in the reference setting, the discriminator scores then trains, the particles learn; the policy
never changes. Before the iterations, the policy's failure map: deterministic episodes along each dimension of the
training range (others at default); settings solved in fewer than half of their episodes form the failure region.

Writes to --out: probe_config.yaml, failure_map.csv, proposals.csv (every proposal with its reward and episode),
iterations.csv, focus.json (share of proposals in the failure region vs its uniform share, per half and last
quarter; focus holds when both the second-half and last-quarter ratios are >= {FOCUS_RATIO:g}), top_proposals.json
(highest-reward settings of the second half with their episodes) and probe.png (sampling density over iterations
beside the failure map).

POLICY: a run directory / checkpoint of this env and space, or module:callable (one observation -> one action),
e.g. adr_core.probe.controllers:lunar_lander_heuristic (gymnasium's hand-tuned lander: fails at main engine <= 10).
Sampler, discriminator and seed come from --config (a packaged experiment or YAML, default: the paper's LunarLander
ADR) and --set KEY=VALUE, as for adr-train."""


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="adr-probe",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: adr-probe --policy adr_core.probe.controllers:lunar_lander_heuristic"
        " --iterations 200 --out runs/probe_heuristic",
    )
    parser.add_argument(
        "--policy", required=True, metavar="POLICY", type=text("checkpoint, run directory or module:callable"),
        help="checkpoint / run directory, or module:callable"
    )
    parser.add_argument("--out", required=True, metavar="DIR", type=output_dir(),
                        help="output directory (must not hold a probe)")
    parser.add_argument("--config", metavar="YAML|NAME", default="lunar_lander_adr", type=text("experiment"),
                        help="experiment whose env, sampler, discriminator and seed are used [lunar_lander_adr]")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=text("KEY=VALUE"),
                        help="override a config key")
    parser.add_argument("--seed", type=seed, default=None, help="run seed (overrides the config's)")
    parser.add_argument("--iterations", type=at_least(1), default=200, help="ADR iterations [200]")
    parser.add_argument("--exploration-noise", type=non_negative_number("noise std"), default=0.0,
                        help="Gaussian action noise of the rollouts (the failure map uses none) [0]")
    parser.add_argument("--sweep-points", type=at_least(2), default=13, help="failure-map points per dimension [13]")
    parser.add_argument("--sweep-episodes", type=at_least(1), default=5, help="episodes per point and seed [5]")
    parser.add_argument("--sweep-seeds", type=seed, nargs="+", default=[0, 1], help="failure-map seeds [0 1]")
    parser.add_argument("--workers", type=at_least(1), default=None, help="failure-map worker processes [CPUs]")
    env_modules_option(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    allow_env_modules(args.env_modules)
    try:
        if args.iterations < 1:
            raise ConfigError(f"--iterations must be >= 1, got {args.iterations}")
        if args.exploration_noise < 0:
            raise ConfigError(f"--exploration-noise must be >= 0, got {args.exploration_noise}")
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} is a file, not a directory")
        if (out / "focus.json").exists() or (out / "proposals.csv").exists():
            raise ConfigError(f"{out} already holds a probe; choose another --out")
        config = _config(args)
        space = space_of(config.env_id, config.space)
        policy = load_frozen_policy(args.policy, config.env_id, space)
        probe = Probe.in_process(config, policy, out, exploration_noise=args.exploration_noise,
                                 sweep=Sweep(args.sweep_points, args.sweep_episodes, tuple(args.sweep_seeds),
                                             args.workers))
    except (ConfigError, CheckpointError, RandomizationError, PolicyLoadError, ValueError) as error:
        print(f"adr-probe: error: {error}", file=sys.stderr)
        return 2
    log: Callable[[str], None] = lambda line: print(line, flush=True)  # noqa: E731
    region = probe.measure_failures(log)
    if region.empty:
        log("adr-probe: warning: the policy fails nowhere on the sweep, so the focus ratio is undefined")
    result = probe.run(args.iterations, log)
    f = result.focus
    log(f"focus: share in the failure region / uniform = {f['ratio_first_half']:.2f} (first half), "
        f"{f['ratio_second_half']:.2f} (second half), {f['ratio_last_quarter']:.2f} (last quarter): "
        f"{'held' if f['focus_held'] else 'NOT held'} (>= {FOCUS_RATIO:g}); {result.seconds:.0f} s of iterations")
    log(f"wrote {out} (probe.png)")
    return 0


def _config(args: argparse.Namespace) -> TrainConfig:
    resolve_experiment(args.config)  # a clear error for an unknown name
    namespace = argparse.Namespace(out=args.out, config=args.config, resume=False, set=list(args.set))
    config = config_from_args(namespace)
    if args.seed is not None:
        config = config.with_overrides({"seed": args.seed})
    return config


if __name__ == "__main__":
    sys.exit(main())
