"""Speed of the ROS 2 node graph next to the in-process trainer, same config, same run (issue: node graph).

    python -m benchmarks.graph                       # paper networks, LunarLander ADR, 5000 agent steps per run
    python -m benchmarks.graph --budget 3000 --instances 1 2 --modes sync
    python -m benchmarks.graph --quick               # tiny networks: a smoke test of the benchmark itself

Each configuration is one real training run (a fresh process tree, isolated ROS domain, localhost only); runs are
measured one after the other so they do not compete for the cores. Reported per run, from its metrics.csv:

- steps/s: agent steps / the run's wall_time_s (real time from its first iteration on, start-up excluded; async
  iterations overlap, so summed iteration times would understate it); the ratio column divides by the in-process run;
- total s: wall time of the whole command, start-up and shutdown included;
- iteration s: mean iteration time; transport %: summed publish->receive time of the randomized trajectories over
  the summed iteration time (graph runs only).

Targets: sync >= 0.95x in-process; transport <= 5% of iteration time. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"agent.hidden_sizes": "[32, 32]", "agent.batch_size": 64, "agent.learning_starts": 200,
         "discriminator.hidden_size": 32}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--method", default="adr", choices=("adr", "udr", "baseline", "oracle"))
    parser.add_argument("--budget", type=int, default=5000, help="agent steps per run (default: %(default)s)")
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--modes", nargs="+", default=["sync", "async"], choices=("sync", "async"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny networks (checks the benchmark, not the speed)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--domain-id", type=int, default=150 + os.getpid() % 50)
    return parser.parse_args()


def summarize(run_dir: Path, total_s: float) -> dict[str, float]:
    with open(run_dir / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise RuntimeError(f"{run_dir} has no iterations")
    iteration_s = sum(float(r["time_iteration_s"]) for r in rows)
    transport = [float(r["time_transport_s"]) for r in rows if r.get("time_transport_s")]
    steps = int(rows[-1]["agent_steps"])
    wall_s = float(rows[-1]["wall_time_s"])
    return {"steps": steps, "iterations": len(rows), "steps_per_s": steps / wall_s, "total_s": total_s,
            "iteration_s": iteration_s / len(rows),
            "transport_share": sum(transport) / iteration_s if transport else float("nan")}


def run(command: list[str], env: dict[str, str], log: Path) -> float:
    started = time.perf_counter()
    with open(log, "w") as out:
        result = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed ({result.returncode}); see {log}")
    return time.perf_counter() - started


def main() -> int:
    args = parse_args()
    overrides = {"checkpoint_every": 1000, "tensorboard": False, "progress": False, **(QUICK if args.quick else {})}
    env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    work = Path(tempfile.mkdtemp(prefix="adr_bench_graph_"))
    results: list[dict] = []

    method = {"oracle": "fixed"}.get(args.method, args.method)
    in_process = work / "in_process"
    command = ["adr-train", "--out", str(in_process), "--env_id", args.env, "--sampler", method,
               "--seed", str(args.seed), "--total_agent_steps", str(args.budget)]
    for key, value in overrides.items():
        command += [f"--{key}", str(value)]
    results.append({"name": "in-process", **summarize(in_process, run(command, env, work / "in_process.log"))})
    print(f"in-process: {results[-1]['steps_per_s']:.1f} steps/s", flush=True)

    override_yaml = "{" + ", ".join(f"{k}: {v}" for k, v in overrides.items()) + "}"
    for mode in args.modes:
        for instances in args.instances:
            name = f"graph {mode} x{instances}"
            run_dir = work / f"graph_{mode}_{instances}"
            command = ["adr_launch", "adr", "train_sim.launch.py", f"env:={args.env}", f"method:={args.method}",
                       f"seed:={args.seed}", f"budget:={args.budget}", f"instances:={instances}", f"mode:={mode}",
                       f"run_dir:={run_dir}", f"overrides:={override_yaml}"]
            results.append({"name": name, **summarize(run_dir, run(command, env, work / f"{run_dir.name}.log"))})
            print(f"{name}: {results[-1]['steps_per_s']:.1f} steps/s", flush=True)

    baseline = results[0]["steps_per_s"]
    print(f"\n{args.env} {args.method}, {args.budget} agent steps per run{' (quick)' if args.quick else ''}, "
          f"logs in {work}\n")
    print("| run | steps/s | ratio vs in-process | iteration s | transport % | total s |")
    print("|---|---|---|---|---|---|")
    for r in results:
        share = "" if r["transport_share"] != r["transport_share"] else f"{100 * r['transport_share']:.3f}"
        print(f"| {r['name']} | {r['steps_per_s']:.1f} | {r['steps_per_s'] / baseline:.2f} | {r['iteration_s']:.2f} "
              f"| {share} | {r['total_s']:.0f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
