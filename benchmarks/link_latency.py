"""Throughput of simulator instances on another host under link latency (issue 18), against everything on one host.

    sudo python -m benchmarks.link_latency                     # delays 1 10 50 ms, budget 2000, 2 instances
    sudo python -m benchmarks.link_latency --delays 10 --budget 1000 --out runs/link_latency

Hosts are network namespaces (graph_harness/netns_hosts.py; root and ``ip`` needed). The latency is a fixed
one-way delay on the link, as ``tc netem delay`` would add; this VM's kernel has no ``sch_netem``, so the link is two
TUN devices with graph_harness/delayed_link.py between them, holding every packet ``d`` ms each way. Every
configuration trains the same small run (the graph tests' tiny networks, LunarLander ADR, sync mode, seed 0), one
after the other:

- ``one host``: the whole graph (``role:=all``) inside one namespace: the baseline, measured in the same command;
- ``two hosts, veth``: sampler, discriminator and trainer in the head (``role:=head``), the instances in a worker
  (``role:=sims``), joined by a veth pair (no added latency);
- ``two hosts, d ms``: the same across the delayed link (round trip 2d; ``0`` shows the relay's own cost).

Reported per configuration, from the run's metrics.csv: agent steps per second of wall time (``wall_time_s``, start-up
excluded), the ratio to one host, the mean rollout phase per iteration (``time_rollouts_s``: proposals out,
trajectories in), and whether the run's metrics equal the one-host run's (sync mode: they must, latency or not).
Outputs: ``<out>/link_latency.json`` and a markdown table on stdout.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from graph_harness.graph_runs import COMPARED, finish
from graph_harness.netns_hosts import can_make_namespaces, hosts
from graph_harness.ros_processes import isolated_ros_env
from graph_harness.signing import run_key

RUN_ID = "link-latency-benchmark"


def read_run(run_dir: Path) -> dict:
    with open(run_dir / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    steps, wall = int(rows[-1]["agent_steps"]), float(rows[-1]["wall_time_s"])
    return {"agent_steps": steps, "wall_time_s": wall, "steps_per_s": steps / wall, "iterations": len(rows),
            "rollout_s_per_iteration": sum(float(r["time_rollouts_s"]) for r in rows) / len(rows),
            "compared": [{k: r[k] for k in COMPARED} for r in rows]}


def stop(process) -> None:  # noqa: ANN001
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    process.communicate(timeout=60)


def run_configuration(name: str, delay_ms: float | None, split: bool, args: argparse.Namespace,
                      env: dict[str, str], out: Path) -> dict:
    """One run: the whole graph in one namespace (``split`` False), or head and worker across a veth pair
    (``delay_ms`` None) or the delayed link."""
    run_dir = out / name.replace(",", "").replace(" ", "_")
    # the worker needs the head's start of the run (docs/node_graph.md): one new start per configuration
    extra = (f"instances:={args.instances}", f"run_id:={RUN_ID}", f"run_start:={secrets.token_hex(8)}")
    with hosts(workers=1, link_delay_ms=delay_ms) as made:
        head, worker = made["head"], made["worker1"]
        started = time.perf_counter()
        if not split:
            graph = head.launch(run_dir, env, args.budget, *extra)
            output = finish(graph, [], timeout=args.timeout)
        else:
            key = run_key(run_dir)  # the head's key; the worker gets it by path (one machine)
            sims = worker.launch(run_dir, env, args.budget, "role:=sims", f"key_file:={key}", *extra)
            graph = head.launch(run_dir, env, args.budget, "role:=head", *extra)
            try:
                output = finish(graph, [], timeout=args.timeout)
            finally:
                stop(sims)
        command_s = time.perf_counter() - started
    if graph.returncode != 0:
        raise RuntimeError(f"{name}: the graph exited with {graph.returncode}:\n{output[-3000:]}")
    return {"configuration": name, "delay_ms": delay_ms, "command_s": command_s, **read_run(run_dir)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delays", type=float, nargs="+", default=[1.0, 10.0, 50.0],
                        help="one-way latencies of the delayed link (ms); 0: the relay without added latency")
    parser.add_argument("--budget", type=int, default=2000, help="agent steps per run (default: %(default)s)")
    parser.add_argument("--instances", type=int, default=2, help="simulator instances (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run before it is stopped")
    parser.add_argument("--domain-id", type=int, default=200 + os.getpid() % 30)
    parser.add_argument("--out", type=Path, default=Path("runs/link_latency"))
    args = parser.parse_args(argv)
    if not can_make_namespaces():
        parser.error("needs root and ip: network namespaces stand in for the hosts")
    args.out.mkdir(parents=True, exist_ok=True)
    env = isolated_ros_env(args.domain_id)
    results = [run_configuration("one host", None, False, args, env, args.out),
               run_configuration("two hosts, veth", None, True, args, env, args.out)]
    for delay in args.delays:
        results.append(run_configuration(f"two hosts, {delay:g} ms", delay, True, args, env, args.out))
    base = results[0]
    print("| configuration | agent steps/s | vs one host | rollout phase per iteration (s) | "
          "metrics equal one host's |")
    print("|---|---|---|---|---|")
    for r in results:
        r["ratio"] = r["steps_per_s"] / base["steps_per_s"]
        r["same_metrics"] = r["compared"] == base["compared"]
        print(f"| {r['configuration']} | {r['steps_per_s']:.0f} | {r['ratio']:.2f} | "
              f"{r['rollout_s_per_iteration']:.2f} | {'yes' if r['same_metrics'] else 'NO'} |")
    (args.out / "link_latency.json").write_text(json.dumps(
        [{k: v for k, v in r.items() if k != "compared"} for r in results], indent=1))
    return 0 if all(r["same_metrics"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
