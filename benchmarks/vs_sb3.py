"""End-to-end agent env steps/s on LunarLander: stable-baselines3 DDPG/TD3 with uniform DR vs this project's
in-process trainer (adr-train) and node graph, same networks, batch, update ratio and learning_starts, one command.

    make bench-setup                                   # once: stable-baselines3==2.9.2 into .venv
    python -m benchmarks.vs_sb3                        # paper sizes (400-300, batch 1000), 5000 steps per run
    python -m benchmarks.vs_sb3 --batch 256 --budget 3000 --instances 1 --modes sync
    python -m benchmarks.vs_sb3 --quick                # tiny networks: checks the benchmark, not the speed

Runs, one after the other (each a fresh process, so they do not compete for the cores):
  SB3 DDPG, SB3 TD3        experiments/sb3_uniform_dr.py: make_env + a wrapper drawing the main engine strength
                           uniformly in [8, 20] at each reset; steps/s = steps / time inside learn()
  in-process udr, adr      adr-train (sampler udr / adr); steps/s = agent steps / summed iteration time
  graph <mode> x<n> udr    adr_launch train_sim.launch.py (graph.py's measurement, transport % included)

Equal learning work: one gradient step of the same batch on the same 400-300 networks per env step after
learning_starts (1000). UDR and SB3 do exactly that. ADR also rolls out a reference episode per proposal and
trains the discriminator: more work per agent step, shown for completeness. Periodic evaluation and TensorBoard are
off in our runs (SB3 does neither). Target (issue 8): graph >= 1.3x SB3 DDPG. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.graph import run, summarize  # one training run, its metrics.csv summary
from experiments.runner import root_env

HERE = Path(__file__).resolve().parent
PAPER = {"hidden": [400, 300], "learning_starts": 1000}
QUICK = {"hidden": [32, 32], "learning_starts": 200, "batch": 64, "budget": 600}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=5000, help="agent env steps per run (default %(default)s)")
    parser.add_argument("--batch", type=int, default=1000, help="replay batch of every learner (paper: 1000)")
    parser.add_argument("--algorithm", choices=("ddpg", "td3"), default="ddpg", help="our agent (paper: ddpg)")
    parser.add_argument("--methods", nargs="+", default=["udr", "adr"], choices=("udr", "adr"),
                        help="in-process trainer runs")
    parser.add_argument("--graph-methods", nargs="*", default=["udr"], choices=("udr", "adr"), help="graph runs")
    parser.add_argument("--modes", nargs="+", default=["sync", "async"], choices=("sync", "async"))
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads of every learner, SB3 and ours (default: the CPU count; --quick: 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny networks, 600 steps: a smoke test of the command")
    parser.add_argument("--json", type=Path, help="also write every result as JSON here")
    parser.add_argument("--domain-id", type=int, default=150 + os.getpid() % 50)
    args = parser.parse_args(argv)
    sizes = {**PAPER, **(QUICK if args.quick else {})}
    args.hidden, args.learning_starts = sizes["hidden"], sizes["learning_starts"]
    if args.quick:
        args.batch, args.budget = QUICK["batch"], QUICK["budget"]
    if args.threads is None:  # tiny ops on 2 threads of a busy machine can run 40x slower (OpenMP spinning)
        args.threads = 1 if args.quick else os.cpu_count() or 1
    return args


def our_overrides(args: argparse.Namespace) -> dict[str, object]:
    return {"agent.algorithm": args.algorithm, "agent.hidden_sizes": args.hidden, "agent.batch_size": args.batch,
            "agent.learning_starts": args.learning_starts, "torch_threads": args.threads, "evaluate_every": 0,
            "checkpoint_every": 100_000, "tensorboard": False, "progress": False}


def sb3_result(args: argparse.Namespace, algorithm: str, work: Path) -> dict:
    out = work / f"sb3_{algorithm}.json"
    command = [sys.executable, "-m", "experiments.sb3_uniform_dr", "--algorithm", algorithm,
               "--steps", str(args.budget), "--batch", str(args.batch), "--hidden", *map(str, args.hidden),
               "--learning-starts", str(args.learning_starts), "--threads", str(args.threads), "--seed", str(args.seed),
               "--json", str(out)]
    env = root_env()
    total_s = run(command, env, work / f"sb3_{algorithm}.log")
    result = json.loads(out.read_text())
    return {"name": f"SB3 {algorithm.upper()} + uniform DR", "kind": "sb3", "algorithm": algorithm,
            "steps": result["steps"], "steps_per_s": result["steps_per_s"], "total_s": total_s,
            "transport_share": float("nan")}


def in_process_result(args: argparse.Namespace, method: str, work: Path, env: dict[str, str]) -> dict:
    run_dir = work / f"in_process_{method}"
    command = ["adr-train", "--out", str(run_dir), "--env_id", "adr/LunarLander-v0", "--sampler", method,
               "--seed", str(args.seed), "--total_agent_steps", str(args.budget)]
    command += [f"--set={key}={json.dumps(value)}" for key, value in our_overrides(args).items()]
    total_s = run(command, env, work / f"{run_dir.name}.log")
    return {"name": f"adr-train {method}", "kind": "in-process", "method": method, "algorithm": args.algorithm,
            **summarize(run_dir, total_s)}


def graph_result(args: argparse.Namespace, method: str, mode: str, instances: int, work: Path,
                 env: dict[str, str]) -> dict:
    run_dir = work / f"graph_{method}_{mode}_{instances}"
    overrides = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in our_overrides(args).items()) + "}"
    command = ["adr_launch", "adr", "train_sim.launch.py", "env:=adr/LunarLander-v0", f"method:={method}",
               f"seed:={args.seed}", f"budget:={args.budget}", f"instances:={instances}", f"mode:={mode}",
               f"run_dir:={run_dir}", f"overrides:={overrides}"]
    total_s = run(command, env, work / f"{run_dir.name}.log")
    return {"name": f"graph {mode} x{instances} {method}", "kind": "graph", "method": method,
            "algorithm": args.algorithm, **summarize(run_dir, total_s)}


def print_table(results: list[dict], args: argparse.Namespace, work: Path) -> None:
    sb3 = {r["algorithm"]: r["steps_per_s"] for r in results if r["kind"] == "sb3"}
    print(f"\nadr/LunarLander-v0, {args.budget} agent steps per run, batch {args.batch}, hidden {args.hidden}, "
          f"learning_starts {args.learning_starts}, {args.threads} torch threads{' (quick)' if args.quick else ''}; "
          f"logs in {work}\n")
    print("| run | learning work per env step | steps/s | x SB3 DDPG | x SB3 TD3 | transport % | total s |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        work_note = "1 update" if r.get("method", "udr") == "udr" else "1 update + reference episode + discriminator"
        ratios = [f"{r['steps_per_s'] / sb3[a]:.2f}" if a in sb3 else "" for a in ("ddpg", "td3")]
        share = r["transport_share"]
        share_text = "" if share != share else f"{100 * share:.3f}"
        print(f"| {r['name']} | {work_note} ({r['algorithm'].upper()}) | {r['steps_per_s']:.1f} | {ratios[0]} "
              f"| {ratios[1]} | {share_text} | {r['total_s']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        print("vs_sb3: stable-baselines3 is not installed; run `make bench-setup` "
              "(pip install -r requirements/benchmarks.txt -c requirements/constraints.txt)", file=sys.stderr)
        return 2
    env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    work = Path(tempfile.mkdtemp(prefix="adr_bench_sb3_"))
    results: list[dict] = []

    def record(result: dict) -> None:
        results.append(result)
        print(f"{result['name']}: {result['steps_per_s']:.1f} steps/s ({result['total_s']:.0f} s)", flush=True)

    started = time.perf_counter()
    for algorithm in ("ddpg", "td3"):
        record(sb3_result(args, algorithm, work))
    for method in args.methods:
        record(in_process_result(args, method, work, env))
    for method in args.graph_methods:
        for mode in args.modes:
            for instances in args.instances:
                record(graph_result(args, method, mode, instances, work, env))
    print_table(results, args, work)
    print(f"\nwhole benchmark: {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"settings": {k: v for k, v in vars(args).items() if k != "json"},
                                         "results": results}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
