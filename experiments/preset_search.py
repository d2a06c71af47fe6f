"""Search for a fast agent preset: every (variant x seed) trains in-process (ADR, Algorithm 1) and is scored on the
reference setting only (LunarLander: main engine 13), never on the hard/test ranges.

    python -m experiments.preset_search --variants td3_64_n3 sac_64_n3 --seeds 0 1 --parallel 2 --out runs/search.jsonl
    python -m experiments.preset_search --list                      # the variants of experiments/preset_variants.yaml
    python -m experiments.preset_search --variants-file experiments/robot_variants.yaml --variants er_sac_128 \
        --seeds 0 1 --max-train-seconds 600 --out runs/robot_search.jsonl     # the robot envs' variants

A run stops at ``--budget-steps`` agent steps or ``--max-train-seconds`` of training time (summed iteration time,
evaluation excluded), whichever comes first, or earlier at the variant's early stop (its ``early_stop_*`` keys, checked
as ``adr-train`` checks them; before 2026-11-25 this script ignored them, so every earlier search row ran its whole
budget, fast_stop and round 10 step 1 included). Every ``--eval-every`` agent steps the deterministic policy plays
``--eval-episodes`` reference episodes; the first evaluation with mean return >= 200 is the run's landing point. At
the end the final policy plays ``--final-episodes`` reference episodes (other initial states). One JSON line per run
(appended, so a repeated command skips the runs already in the file). Each run uses one torch thread; ``--parallel``
runs several at once (on a machine with that many free cores). ``--run-dirs DIR`` keeps each run's final checkpoint
(``DIR/<variant>_s<seed>/checkpoints/latest.pt``); the training is the same with or without it.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from experiments import cluster, landing, runner

VARIANTS_FILE = Path(__file__).resolve().with_name("preset_variants.yaml")


def passes(point: dict[str, Any]) -> bool:
    """An evaluation point that counts as the run's landing point (landing.passes; a point with a final distance is
    a robot env's)."""
    return landing.passes(point, landing.ENV_ID if point.get("final_distance_mean") is None else "robot")


def load_variants(path: Path = VARIANTS_FILE) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(path.read_text())
    return {name: {"description": v.get("description", ""), "set": dict(v.get("set", {})), "base": v.get("base")}
            for name, v in data["variants"].items()}


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    from adr_core.engine.hooks import EarlyStopHook, Hook
    from adr_core.evaluation.settings import evaluate
    from adr_core.randomization import space_of
    from adr_core.training.config import TrainConfig
    from adr_core.training.experiments import resolve_experiment
    from adr_core.training.run_hooks import early_stop
    from adr_core.training.trainer import LATEST, Trainer

    torch.set_num_threads(1)
    overrides = {"seed": job["seed"], "evaluate_every": 0,
                 "progress": False, "tensorboard": False, "torch_threads": 1, **job["set"]}
    config = TrainConfig.from_yaml(resolve_experiment(job["base"]))
    if job["budget_steps"]:  # else the base config's budget (which a linear learning-rate schedule is defined on)
        overrides["total_agent_steps"] = job["budget_steps"]
    config = config.with_overrides(overrides)
    run_dir = Path(job["run_dirs"]) / f"{job['variant']}_s{job['seed']}" if job.get("run_dirs") else None
    if run_dir is not None and run_dir.exists():  # an attempt that did not finish: the run starts over
        shutil.rmtree(run_dir)
    trainer = Trainer(config, run_dir)

    space = None if config.space is None else space_of(config.env_id, config.space)

    def score(episodes: int, seed: int) -> dict[str, float]:
        """The reference of the run's own space, at its own episode length (the env's packaged space and limit
        otherwise): a run trained on an identified arm is scored on that arm."""
        s = evaluate(trainer.agent.actor_state_dict(), config.env_id, ["reference"], episodes, (seed,),
                     space=space, max_episode_steps=config.max_episode_steps)["reference"]
        return s.summary()

    curve: list[dict[str, Any]] = []
    state: dict[str, Any] = {"landed": None, "next_eval": job["eval_every"], "eval_seconds": 0.0}

    class Curve(Hook):
        """Every eval_every agent steps: the reference score (its time excluded from train_s)."""

        def after_row(self, run: Any, result: Any, row: dict[str, Any]) -> None:
            if trainer.agent_steps < state["next_eval"]:
                return
            state["next_eval"] = (trainer.agent_steps // job["eval_every"] + 1) * job["eval_every"]
            start = time.perf_counter()
            summary = score(job["eval_episodes"], 0)
            state["eval_seconds"] += time.perf_counter() - start
            point = {"agent_steps": trainer.agent_steps, "train_s": round(trainer.wall_time, 2),
                     "return_mean": round(summary["return_mean"], 2), "solved": summary["solved_fraction"]}
            if summary["final_distance_mean"] == summary["final_distance_mean"]:  # a distance task (not NaN)
                point["final_distance_mean"] = round(summary["final_distance_mean"], 4)
            curve.append(point)
            print(f"[{job['variant']} s{job['seed']}] {point}", flush=True)
            if job["progress"]:
                runner.append(Path(job["progress"]), {"variant": job["variant"], "seed": job["seed"], **point})
            if state["landed"] is None and passes(point):
                state["landed"] = point

    class TimeCap(Hook):
        """The run ends at the first iteration boundary after ``max_train_seconds`` of training."""

        def after_row(self, run: Any, result: Any, row: dict[str, Any]) -> None:
            if trainer.wall_time >= job["max_train_seconds"]:
                trainer.stop_requested.set()

    stop = early_stop(config, None, trainer.agent_steps)  # the variant's early_stop_* keys, as Trainer.run runs them
    hooks: list[Hook] = ([EarlyStopHook(stop)] if stop is not None else []) + [Curve(), TimeCap()]
    trainer.run(hooks=hooks)
    if run_dir is not None:  # the final policy (the search's own hooks write no files during the run)
        trainer.save_checkpoint(trainer.checkpoint_dir / LATEST)
    landed, eval_seconds = state["landed"], state["eval_seconds"]
    final = score(job["final_episodes"], 1)
    return {"variant": job["variant"], "seed": job["seed"], "set": job["set"], "agent_steps": trainer.agent_steps,
            "train_s": round(trainer.wall_time, 2), "evaluation_s": round(eval_seconds, 2), "landed": landed,
            "stopped": "early stop" if trainer.solved else "budget" if trainer.done else "time",
            "final_return_mean": round(final["return_mean"], 2), "final_solved": final["solved_fraction"],
            "final_distance_mean": (round(final["final_distance_mean"], 4)
                                    if final["final_distance_mean"] == final["final_distance_mean"] else None),
            "updates": trainer.agent.updates_done, "curve": curve}


def report(paths: list[Path], variants: dict[str, dict[str, Any]]) -> str:
    """One row per (file, variant): per seed the landing point (steps, training s) and the final evaluation."""
    lines = ["| round | variant | seeds | landed at (k steps / s) per seed | final return (solved) per seed | "
             "steps, s per run |", "|---|---|---|---|---|---|"]
    for path in paths:
        runs = runner.load(path)
        if runs and "landed" not in runs[0]:  # a --progress file: evaluation points of runs that did not finish
            lines += progress_rows(path, runs, variants)
            continue
        for name in dict.fromkeys(r["variant"] for r in runs):
            group = sorted((r for r in runs if r["variant"] == name), key=lambda r: r["seed"])
            landed = ", ".join(f"s{r['seed']}: {r['landed']['agent_steps'] // 1000}k / {r['landed']['train_s']:.0f}"
                               if r["landed"] else f"s{r['seed']}: never" for r in group)
            final = ", ".join(f"{r['final_return_mean']:.0f} ({100 * r['final_solved']:.0f}%)"
                              if r.get("final_distance_mean") is None else
                              f"{r['final_distance_mean']:.3f} m ({100 * r['final_solved']:.0f}%)" for r in group)
            budget = ", ".join(f"{r['agent_steps'] // 1000}k/{r['train_s']:.0f}" for r in group)
            lines.append(f"| {path.stem} | {name} ({variants.get(name, {}).get('description', '?')}) | "
                         f"{len(group)} | {landed} | {final} | {budget} |")
    return "\n".join(lines)


def progress_rows(path: Path, points: list[dict[str, Any]], variants: dict[str, dict[str, Any]]) -> list[str]:
    """Rows for runs known only from their --progress points (stopped before the end): landing and last point."""
    rows = []
    for name in dict.fromkeys(p["variant"] for p in points):
        seeds = sorted({p["seed"] for p in points if p["variant"] == name})
        landed, last = [], []
        for seed in seeds:
            curve = [p for p in points if p["variant"] == name and p["seed"] == seed]
            first = next((p for p in curve if passes(p)), None)
            landed.append(f"s{seed}: {first['agent_steps'] // 1000}k / {first['train_s']:.0f}" if first
                          else f"s{seed}: not yet")
            last.append(f"s{seed}: {curve[-1]['return_mean']:.0f} at {curve[-1]['agent_steps'] // 1000}k")
        rows.append(f"| {path.stem} | {name} ({variants.get(name, {}).get('description', '?')}) | {len(seeds)} | "
                    f"{', '.join(landed)} | unfinished; last evaluation {', '.join(last)} | - |")
    return rows


def print_result(result: dict[str, Any]) -> None:
    landed = result["landed"]
    print(f"DONE {result['variant']} s{result['seed']}: landed "
          f"{'never' if landed is None else (landed['agent_steps'], landed['train_s'])}, final "
          f"{result['final_return_mean']} ({result['final_solved']:.2f} solved), {result['train_s']} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", help="variant names (default: all in the variants file)")
    parser.add_argument("--variants-file", type=Path, default=VARIANTS_FILE)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--base", default="lunar_lander_adr",
                        help="packaged experiment or YAML the variants modify, unless a variant names its own base")
    parser.add_argument("--budget-steps", type=int, default=0, help="agent steps (0: the base config's budget)")
    parser.add_argument("--max-train-seconds", type=float, default=720.0)
    parser.add_argument("--eval-every", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--final-episodes", type=int, default=30)
    runner.add_arguments(parser, parallel_help="runs at a time (one torch thread each)")
    parser.add_argument("--out", type=Path, help="JSON lines, appended (required to run)")
    parser.add_argument("--progress", type=Path, help="also append every evaluation point here as a JSON line")
    parser.add_argument("--run-dirs", type=Path, metavar="DIR",
                        help="keep each run's final checkpoint in DIR/<variant>_s<seed>/checkpoints/ (for adr-evaluate "
                             "or the pusher diagnosis); default: none kept")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--report", type=Path, nargs="+", metavar="JSONL",
                        help="only print the Markdown table of these result files (every variant and seed)")
    args = parser.parse_args(argv)
    variants = load_variants(args.variants_file)
    if args.report or args.report_only:
        if not (args.report or args.out):
            parser.error("--report-only needs --out")
        print(report(args.report or [args.out], variants))
        return 0
    if args.list:
        for name, v in variants.items():
            print(f"{name:24s} {v['description']}  {v['set']}")
        return 0
    names = args.variants or list(variants)
    unknown = [n for n in names if n not in variants]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; known: {list(variants)}")
    if not args.out:
        parser.error("--out is required to run (the results file, JSON lines)")
    jobs = [{"variant": n, "seed": s, "set": variants[n]["set"], "base": variants[n]["base"] or args.base,
             "budget_steps": args.budget_steps,
             "max_train_seconds": args.max_train_seconds, "eval_every": args.eval_every,
             "eval_episodes": args.eval_episodes, "final_episodes": args.final_episodes,
             "progress": str(args.progress) if args.progress else None,
             "run_dirs": str(args.run_dirs) if args.run_dirs else None}
            for s in args.seeds for n in names]
    key = lambda r: (r["variant"], r["seed"])  # noqa: E731
    runner.run(jobs, run_one, key=key, results=args.out, parallel=args.parallel, on_result=print_result,
               cluster=cluster.options(args))
    return runner.exit_code(jobs, key, args.out)


if __name__ == "__main__":
    sys.exit(main())
