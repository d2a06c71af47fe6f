"""Does ADR's sampler focus where a frozen policy fails? adr-probe over seeds and sampler variants, one table.

    python -m experiments.probe_focus --seeds 0 1 2 3 4 --parallel 2 --out runs/probe_focus            # LunarLander
    python -m experiments.probe_focus --env ergo --variants paper state_inputs --out runs/probe_focus_ergo
    python -m experiments.probe_focus --out runs/probe_focus --report-only

Each (variant, seed) is one ``adr-probe`` run around a controller whose failure region is known by construction
(adr_core/probe/controllers.py): LunarLander: gymnasium's heuristic lander (fails at weak main engines); ergo:
the ErgoReacher controller that times its shoulder move for the default servo (fails at low m2 gain). A variant
changes one thing of the paper's configuration (``VARIANTS``). Per run: the share of proposals inside the failure
region in the second half of the iterations and in the last quarter, over the region's uniform share
(adr_core/probe/focus.py: focus holds when both are >= 2). Per variant: those ratios across seeds and the number of
seeds where focus holds (target: >= 4 of 5). A second table says what the discriminator rewards: the second half's
mean reward per sixth of the range, for failing vs solved episodes, and the share of proposals at the cube's faces.
Every run measures the failure map with the same deterministic sweep
(fixed evaluation seeds), so every run of an env sees the same region. Runs already in --out are skipped.
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from adr_core.cli_types import ArgumentParser
from adr_core.envs import env_record
from experiments import cluster, runner

# the frozen policies whose failure region is known: each env record's probe controller
ENVS = {
    "lunar": {"config": "lunar_lander_adr", "policy": env_record("adr/LunarLander-v0").probe_controller,
              "iterations": 200},
    "ergo": {"config": "ergo_reacher_adr", "policy": env_record("adr/ErgoReacher-v0").probe_controller,
             "iterations": 200},
}
# one change each, from the paper's configuration (docs/algorithm.md "Where the sampler looks")
VARIANTS: dict[str, dict[str, object]] = {
    "paper": {},
    "restart_when_stuck": {"svpg.restart_when_stuck": True},
    "rollout_length_5": {"svpg.rollout_length": 5},  # 5x the proposals per iteration: run for 1/5 the iterations
    "discriminator_lr_3e-3": {"discriminator.learning_rate": 0.003},
    "reward_log_mean_d": {"discriminator.reward": "log_mean_d_minus_log_half"},
    "temperature_1": {"svpg.temperature": 1.0},
    "state_inputs": {"discriminator.inputs": "state"},
    "published_code": {"svpg.restart_when_stuck": True, "svpg.rollout_length": 5, "svpg.horizon": 25,
                       "discriminator.learning_rate": 0.003, "discriminator.reward": "log_mean_d_minus_log_half"},
    # beyond the paper (issue 32; results/paper_claims/paper_claims.md "Beyond the paper"): the failure-aware reward,
    # boundary ADR
    "failure_bonus_0.1": {"discriminator.failure_bonus": 0.1},
    "failure_bonus_1": {"discriminator.failure_bonus": 1.0},
    "boundary_adr": {"sampler": "boundary_adr"},
    # issue 44's samplers from the field, and uniform randomization as the floor every focus ratio is read against
    "learnability": {"sampler": "learnability"},
    "alp_gmm": {"sampler": "alp_gmm"},
    "udr": {"sampler": "udr"},
}


# the variants of the protocol (docs/algorithm.md "Where the sampler looks"); the others can be run by name
PROTOCOL = ("paper", "restart_when_stuck", "state_inputs", "temperature_1", "published_code")
BEYOND = ("failure_bonus_0.1", "failure_bonus_1", "boundary_adr")  # issue 32's samplers, judged by the same rule
SAMPLERS = ("paper", "udr", "boundary_adr", "learnability", "alp_gmm")  # issue 44: every sampler, both regions


def key(result: dict) -> tuple[str, str, int]:
    return result["env"], result["variant"], result["seed"]


def probe(job: dict) -> dict:
    """One adr-probe run in ``<out>/<env>_<variant>_s<seed>/``; its focus.json merged into the job."""
    directory = Path(job["out"]) / job["dir"]
    setup = ENVS[job["env"]]
    overrides = VARIANTS[job["variant"]]
    iterations = setup["iterations"] // int(overrides.get("svpg.rollout_length", 1))
    command = [sys.executable, "-m", "adr_core.probe.cli", "--policy", setup["policy"], "--config", setup["config"],
               "--seed", str(job["seed"]), "--iterations", str(iterations), "--out", str(directory),
               "--workers", "1"]
    for name, value in overrides.items():
        command += ["--set", f"{name}={json.dumps(value)}"]
    with open(f"{directory}.log", "w") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode
    record = {k: v for k, v in job.items() if k != "out"}
    if code != 0:
        return {**record, "error": f"adr-probe exited {code}; see {directory}.log"}
    return {**record, **json.loads((directory / "focus.json").read_text())}


def table(results: list[dict]) -> str:
    lines = ["| env | variant | seeds | ratio, second half (per seed) | ratio, last quarter (per seed) | focus held | "
             "probe s (median) |", "|---|---|---|---|---|---|---|"]
    for env in ENVS:
        for variant in VARIANTS:
            runs = sorted((r for r in results if r["env"] == env and r["variant"] == variant and "error" not in r),
                          key=lambda r: r["seed"])
            if not runs:
                continue
            second = [r["ratio_second_half"] for r in runs]
            last = [r["ratio_last_quarter"] for r in runs]
            lines.append(
                f"| {env} | {variant} | {len(runs)} | {np.mean(second):.2f} ({', '.join(f'{x:.2f}' for x in second)}) "
                f"| {np.mean(last):.2f} ({', '.join(f'{x:.2f}' for x in last)}) | "
                f"{sum(r['focus_held'] for r in runs)}/{len(runs)} | "
                f"{np.median([r['probe_seconds'] for r in runs]):.0f} |"
            )
    errors = [r for r in results if "error" in r]
    return "\n".join(lines + [f"- {r['env']} {r['variant']} seed {r['seed']}: {r['error']}" for r in errors]) + "\n"


def learnable_table(results: list[dict]) -> str:
    """The same focus rule on the learnable region (the sweep points the frozen policy solves 20-80 % of the time:
    results/samplers/rules.md), for the probes whose focus.json has it."""
    lines = ["| env | variant | seeds | learnable share of uniform | ratio, second half (per seed) | "
             "ratio, last quarter (per seed) | focus held |", "|---|---|---|---|---|---|---|"]
    for env in ENVS:
        for variant in VARIANTS:
            runs = sorted((r for r in results if r["env"] == env and r["variant"] == variant and "error" not in r
                           and "learnable" in r), key=lambda r: r["seed"])
            if not runs:
                continue
            second = [r["learnable"]["ratio_second_half"] for r in runs]
            last = [r["learnable"]["ratio_last_quarter"] for r in runs]
            lines.append(
                f"| {env} | {variant} | {len(runs)} | {runs[0]['learnable'].get('uniform_share', float('nan')):.2f} | "
                f"{np.mean(second):.2f} ({', '.join(f'{x:.2f}' for x in second)}) | "
                f"{np.mean(last):.2f} ({', '.join(f'{x:.2f}' for x in last)}) | "
                f"{sum(bool(r['learnable']['focus_held']) for r in runs)}/{len(runs)} |")
    return "\n".join(lines) + "\n"


def detects(results: list[dict], out: Path) -> str:
    """What the discriminator rewards: second-half proposals' mean reward per sixth of the (first) dimension's range,
    for failing vs solved episodes, and the share of proposals within 1/24 of a face of the cube (uniform: 1/12)."""
    lines = ["| env | variant | seeds | mean reward per sixth of the range (low -> high) | failing / solved episodes | "
             "share at the faces (uniform 0.08) |", "|---|---|---|---|---|---|"]
    for env in ENVS:
        for variant in VARIANTS:
            runs = [r for r in results if r["env"] == env and r["variant"] == variant and "error" not in r
                    and (out / r["dir"] / "proposals.csv").is_file()]  # records keep focus.json, not proposals
            if not runs:
                continue
            u, reward, solved = [], [], []
            for r in runs:
                with open(out / r["dir"] / "proposals.csv", newline="") as handle:
                    rows = list(csv.DictReader(handle))
                last = max(int(row["iteration"]) for row in rows)
                column = next(k for k in rows[0] if k.startswith("u_"))
                for row in rows:
                    if int(row["iteration"]) >= last / 2 and row["reward"] not in ("", "nan"):
                        u.append(float(row[column]))
                        reward.append(float(row["reward"]))
                        solved.append(int(row["solved"]))
            u_, r_, s_ = np.array(u), np.array(reward), np.array(solved)
            sixth = np.minimum((u_ * 6).astype(int), 5)
            per_bin = " ".join(f"{r_[sixth == b].mean():+.2f}" if (sixth == b).any() else "-" for b in range(6))
            faces = np.mean((u_ < 1 / 24) | (u_ > 23 / 24))
            lines.append(f"| {env} | {variant} | {len(runs)} | {per_bin} | {r_[s_ == 0].mean():+.2f} / "
                         f"{r_[s_ == 1].mean():+.2f} | {faces:.2f} |")
    return "\n".join(lines) + "\n"


def print_result(result: dict) -> None:
    status = result.get("error") or (f"second half {result['ratio_second_half']:.2f}, last quarter "
                                     f"{result['ratio_last_quarter']:.2f}")
    print(f"{result['env']} {result['variant']} seed {result['seed']}: {status}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", choices=sorted(ENVS), default="lunar")
    parser.add_argument("--variants", nargs="+", default=list(PROTOCOL), choices=list(VARIANTS),
                        help=f"default: the protocol's {list(PROTOCOL)}; issue 32's samplers: {list(BEYOND)}; "
                             f"issue 44's comparison of every sampler: {list(SAMPLERS)}")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    runner.add_arguments(parser, parallel_help="probes at a time (each one process, one thread)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    where = cluster.options(args, parser)  # checked before anything is written (--out included)
    args.out.mkdir(parents=True, exist_ok=True)  # the runs write their logs into it
    jobs = [{"env": args.env, "variant": v, "seed": s, "out": str(args.out), "dir": f"{args.env}_{v}_s{s}"}
            for s in args.seeds for v in args.variants]
    results_file = args.out / "runs.jsonl"
    if args.report_only:
        results = runner.finished(results_file, key)
    else:
        results = runner.run(jobs, probe, key=key, results=results_file, parallel=args.parallel, threads=True,
                             on_result=print_result, cluster=where)
    text = (table(results) + "\n## The learnable region (success 20-80 %)\n\n" + learnable_table(results) + "\n"
            + detects(results, args.out))
    (args.out / "focus_table.md").write_text(text)
    print(text)
    return 0 if args.report_only else runner.exit_code(jobs, key, results_file)


if __name__ == "__main__":
    sys.exit(main())
