"""What a claims grid costs on a machine: agent steps per second of real training runs, per process and in total,
alone and with many at once, on the CPU and on CUDA; and the wall time of a grid that follows from them.

    python -m benchmarks.grid_cost --concurrency 1 2 --seconds 120 --out runs/grid_cost          # here
    python -m benchmarks.grid_cost --devices cpu cuda --concurrency 1 16 --seconds 90 --out DIR   # a GPU machine

Each cell starts ``concurrency`` real ``adr-train`` processes of ``--config`` (seeds 300, 301, ...; methods in turn
adr, udr, baseline, oracle, as in the grid; early stop off; ``--budget`` sets the learning-rate schedule only),
lets them train for ``--seconds``, then kills them. A process's rate is measured from its ``metrics.csv``: agent
steps over training time (``wall_time_s``) between its first iteration at or past ``--from-steps`` (after
``learning_starts``: the gradient steps are the cost) and its last iteration, so start-up is not counted. A grid of
``--runs`` runs of ``--budget`` steps then takes about ``ceil(runs / concurrency) * budget / rate`` at that
concurrency (the estimate assumes the rate stays what it was; it ignores the evaluation that follows).

The cells run one after another, each on an otherwise idle machine (it says how many CPUs it sees). Output: a table
on stdout and ``<out>/grid_cost.json``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

METHODS = (("adr", []), ("udr", []), ("baseline", []), ("oracle", ["--fixed_range", "hard"]))
SAMPLER = {"adr": "adr", "udr": "udr", "baseline": "baseline", "oracle": "fixed"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="lunar_lander_adr_fast")
    parser.add_argument("--devices", nargs="+", default=["cpu"], choices=("cpu", "cuda"))
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1])
    parser.add_argument("--seconds", type=float, default=120.0, help="training time per cell [120]")
    parser.add_argument("--budget", type=int, default=200_000, help="agent steps of a grid run [200000]")
    parser.add_argument("--runs", type=int, default=20, help="runs of the grid to estimate [20]")
    parser.add_argument("--from-steps", type=int, default=10_000, help="rate measured from here on [10000]")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def rate_of(run_dir: Path, from_steps: int) -> tuple[float, int]:
    """(agent steps per training second after ``from_steps``, last agent steps); NaN when too few iterations."""
    try:
        with (run_dir / "metrics.csv").open(newline="") as handle:
            rows = [(float(r["agent_steps"]), float(r["wall_time_s"])) for r in csv.DictReader(handle)]
    except (OSError, KeyError, ValueError):
        return math.nan, 0
    after = [row for row in rows if row[0] >= from_steps]
    if len(after) < 2 or after[-1][1] <= after[0][1]:
        return math.nan, int(rows[-1][0]) if rows else 0
    return (after[-1][0] - after[0][0]) / (after[-1][1] - after[0][1]), int(rows[-1][0])


def run_cell(args: argparse.Namespace, device: str, concurrency: int) -> dict:
    cell = args.out / f"{device}_x{concurrency}"
    cell.mkdir(parents=True, exist_ok=True)
    processes = []
    for i in range(concurrency):
        method, extra = METHODS[i % len(METHODS)]
        run_dir = cell / f"{method}_s{300 + i}"
        command = [sys.executable, "-m", "adr_core.training.cli", "--config", args.config, "--out", str(run_dir),
                   "--sampler", SAMPLER[method], *extra, "--seed", str(300 + i), "--device", device,
                   "--total_agent_steps", str(args.budget), "--torch_threads", "1", "--progress", "false",
                   "--set=early_stop_every_steps=0", "--set=checkpoint_every_s=1000000000"]
        with open(cell / f"{method}_s{300 + i}.log", "wb") as log:
            processes.append((run_dir, method, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                                start_new_session=True)))
    started = time.perf_counter()
    while time.perf_counter() - started < args.seconds and any(p.poll() is None for _, _, p in processes):
        time.sleep(1.0)
    for _, _, process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    rates = []
    for run_dir, method, process in processes:
        rate, steps = rate_of(run_dir, args.from_steps)
        rates.append({"run": run_dir.name, "method": method, "steps": steps, "rate": rate,
                      "returncode": process.returncode})
    finite = [r["rate"] for r in rates if math.isfinite(r["rate"])]
    per_process = float(sum(finite) / len(finite)) if finite else math.nan
    rounds = math.ceil(args.runs / concurrency)
    return {"device": device, "concurrency": concurrency, "seconds": args.seconds, "per_process": per_process,
            "total": per_process * concurrency, "grid_s": rounds * args.budget / per_process if finite else math.nan,
            "runs": rates}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    cells = []
    print(f"{os.cpu_count()} CPUs; {args.config}; {args.seconds:.0f} s per cell; grid = {args.runs} runs x "
          f"{args.budget} agent steps", flush=True)
    for device in args.devices:
        for concurrency in args.concurrency:
            cell = run_cell(args, device, concurrency)
            cells.append(cell)
            per_run = ", ".join(f"{r['rate']:.0f}" for r in cell["runs"])
            print(f"{device} x{concurrency}: {cell['per_process']:.0f} agent steps/s per process, "
                  f"{cell['total']:.0f} in total; the grid would take {cell['grid_s'] / 60:.0f} min "
                  f"(per run: {per_run})", flush=True)
    (args.out / "grid_cost.json").write_text(json.dumps({"cpus": os.cpu_count(), "config": args.config,
                                                         "budget": args.budget, "runs": args.runs,
                                                         "cells": cells}, indent=1))
    print("\n| device | processes at once | agent steps/s per process | in total | grid of "
          f"{args.runs} x {args.budget} steps |\n|---|---|---|---|---|")
    for c in cells:
        print(f"| {c['device']} | {c['concurrency']} | {c['per_process']:.0f} | {c['total']:.0f} | "
              f"{c['grid_s'] / 60:.0f} min |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
