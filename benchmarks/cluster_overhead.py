"""What Ray costs per job: the same small grid through the local pool and through Ray on this machine.

    python -m benchmarks.cluster_overhead                          # 2 methods x 3 seeds, tiny runs, 2 repetitions
    python -m benchmarks.cluster_overhead --repeats 3 --json runs/bench/cluster_overhead.json

Each repetition runs ``experiments.reproduce`` twice into fresh folders, as a user would: ``--backend local
--parallel N`` and ``--backend ray`` (a Ray instance of this command on this machine: all its CPUs, one per run), in
alternating order. Reported: the wall time of each command, the time its runs' trainers took (the sum of
``attempts.jsonl`` wall times / N slots), and the overhead per job = (Ray command - local command) / jobs x N (Ray's
start and stop, scheduling, the worker processes). Jobs are independent, so on a cluster of C CPUs a grid takes about
core-hours / C + this overhead per job.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from experiments.runner import module_command, root_env

TINY = ["agent.hidden_sizes=[16,16]", "agent.batch_size=16", "agent.learning_starts=50", "agent.buffer_capacity=4000",
        "svpg.num_particles=2", "discriminator.hidden_size=16", "discriminator.steps_per_transition=0.05",
        "max_episode_steps=40", "evaluate_every=0", "tensorboard=false"]


def grid(out: Path, backend: str, slots: int, budget: int) -> dict[str, float]:
    command = module_command("experiments.reproduce", "--methods", "adr", "udr", "--seeds", "0", "1", "2",
                             "--budget", str(budget), "--out", str(out), "--no-report", "--backend", backend,
                             "--parallel", str(slots), *(f"--set={item}" for item in TINY))
    started = time.perf_counter()
    done = subprocess.run(command, env=root_env(), capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{backend} grid failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    trainers = sum(json.loads(line)["wall_s"] for attempts in (out / "runs").glob("*/attempts.jsonl")
                   for line in attempts.read_text().splitlines())
    return {"command_s": wall, "trainer_s": trainers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--slots", type=int, default=2, help="runs at a time (local --parallel; Ray CPUs)")
    parser.add_argument("--budget", type=int, default=2400, help="agent steps per run")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    jobs = 6
    rows: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="cluster_overhead_") as scratch:
        for repeat in range(args.repeats):
            for backend in (("local", "ray") if repeat % 2 == 0 else ("ray", "local")):
                row = grid(Path(scratch) / f"{backend}{repeat}", backend, args.slots, args.budget)
                rows[backend].append(row)
                print(f"[{repeat}] {backend:5s}: command {row['command_s']:.1f} s, trainers {row['trainer_s']:.1f} s "
                      f"({jobs} runs)", flush=True)
    local = statistics.median(r["command_s"] for r in rows["local"])
    ray = statistics.median(r["command_s"] for r in rows["ray"])
    per_job = (ray - local) / jobs * args.slots
    summary = {"jobs": jobs, "slots": args.slots, "budget": args.budget, "local_command_s": local,
               "ray_command_s": ray, "overhead_per_job_s": per_job, "ratio": ray / local, "rows": rows,
               "cpu": _cpu(), "load_before": os.getloadavg()[0]}
    print(f"median over {args.repeats}: local {local:.1f} s, Ray {ray:.1f} s (x{ray / local:.2f}); overhead per job "
          f"{per_job:.1f} s of a {args.slots}-slot machine")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


def _cpu() -> str:
    try:
        return next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
