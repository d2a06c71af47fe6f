"""Memory: peak RSS of every node of a graph run (and of an in-process run), and replay-buffer bytes per transition.

    python -m benchmarks.memory                             # LunarLander ADR graph, 2 instances, 3000 agent steps
    python -m benchmarks.memory --method udr --budget 20000 --instances 4 --in-process --json memory.json
    python -m benchmarks.memory --quick                     # tiny networks, 600 steps: a smoke test
    python -m benchmarks.memory --config lunar_lander_adr_fast --budget 30000 --in-process   # the fast preset

Peak RSS is each process's ``VmHWM`` (kernel high-water mark of its resident set) from ``/proc/<pid>/status``,
polled every ``--interval`` s for every descendant of the launcher; a process keeps the largest value seen (a
respawned instance is the same node). A rise in the last interval before a process exits (e.g. its final
checkpoint) can be missed. Replay bytes per transition come from ``adr_core.agents.ReplayBuffer`` itself (its
storage row: obs, action, reward, not_done, next obs; float32); the buffer is allocated zeroed for its whole
capacity, and pages become resident as rows are written.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adr_core.agents import ReplayBuffer
from adr_core.envs import ENV_IDS, make_env

# torch_threads 1: tiny ops on 2 threads of a busy machine can be 100x slower (OpenMP spin-waiting; docs/benchmarks.md)
QUICK = (
    "{agent.hidden_sizes: [32, 32], agent.batch_size: 64, agent.learning_starts: 200, discriminator.hidden_size: 32, "
    "torch_threads: 1}"
)
KIB = 1024


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--method", default="adr", choices=("adr", "udr", "baseline", "oracle"))
    parser.add_argument("--config", default="", help="experiment (packaged name or YAML) for both runs; default: "
                                                    "the paper's configuration")
    parser.add_argument("--budget", type=int, default=3000, help="agent steps of the run (default %(default)s)")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--mode", default="sync", choices=("sync", "async"))
    parser.add_argument("--in-process", action="store_true", help="also measure adr-train with the same settings")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between /proc polls")
    parser.add_argument("--quick", action="store_true", help="tiny networks, 600 agent steps")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--domain-id", type=int, default=200 + os.getpid() % 30)
    args = parser.parse_args(argv)
    if args.quick:
        args.budget = 600
    return args


# ---------------------------------------------------------------------------------------------- /proc
def children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state; comm may contain spaces
        children.setdefault(parent, []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    tree, found, todo = children_by_parent(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(tree.get(pid, []))
    return found


def process_name(pid: int) -> str:
    """The ROS node name (``__node:=...``) or the executable's name."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"pid {pid}"
    args = [a.decode(errors="replace") for a in argv if a]
    for arg in args:
        if arg.startswith("__node:="):
            return arg.split(":=", 1)[1]
    script = next((a for a in args[1:] if not a.startswith("-")), args[0] if args else str(pid))
    return Path(script).name


def status_kib(pid: int, field: str) -> int | None:
    """``VmHWM`` (peak resident) or ``VmRSS`` (resident now) of ``pid`` in KiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss_kib(pid: int) -> int | None:
    return status_kib(pid, "VmHWM")


def watch(command: list[str], env: dict[str, str], log: Path,
          interval: float) -> tuple[dict[str, int], int, float]:
    """Run ``command``; return {process name: peak RSS in KiB} over it and its descendants, the peak of their summed
    resident sets at one poll (what the machine had to hold at once), and the wall time."""
    peaks: dict[str, int] = {}
    peak_together = 0
    started = time.perf_counter()
    with open(log, "wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        while process.poll() is None:
            together = 0
            for pid in descendants(process.pid):
                peak = peak_rss_kib(pid)
                if peak is not None:
                    name = process_name(pid)
                    peaks[name] = max(peaks.get(name, 0), peak)
                together += status_kib(pid, "VmRSS") or 0
            peak_together = max(peak_together, together)
            time.sleep(interval)
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({process.returncode}); see {log}")
    return peaks, peak_together, time.perf_counter() - started


# ---------------------------------------------------------------------------------------------- replay
def replay_rows() -> list[dict]:
    rows = []
    for env_id in ENV_IDS:
        env = make_env(env_id)
        obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
        env.close()
        buffer = ReplayBuffer(obs_dim, act_dim, capacity=1)
        per_transition = buffer.storage.element_size() * buffer.storage.shape[1]
        rows.append({"env": env_id, "obs_dim": obs_dim, "act_dim": act_dim, "bytes_per_transition": per_transition,
                     "mib_per_million": per_transition * 1_000_000 / KIB**2})
    return rows


# ---------------------------------------------------------------------------------------------- main
def graph_command(args: argparse.Namespace, run_dir: Path) -> list[str]:
    overrides = QUICK if args.quick else "{}"
    overrides = overrides[:-1] + (", " if overrides != "{}" else "") + "tensorboard: false, progress: false}"
    return ["adr_launch", "adr", "train_sim.launch.py", f"env:={args.env}", f"method:={args.method}",
            f"budget:={args.budget}", f"instances:={args.instances}", f"mode:={args.mode}", f"run_dir:={run_dir}",
            f"overrides:={overrides}", *([f"config:={args.config}"] if args.config else [])]


def in_process_command(args: argparse.Namespace, run_dir: Path) -> list[str]:
    sampler = {"oracle": "fixed"}.get(args.method, args.method)
    command = ["adr-train", "--out", str(run_dir), "--env_id", args.env, "--sampler", sampler,
               "--total_agent_steps", str(args.budget), "--tensorboard", "false", "--progress", "false"]
    if args.config:
        command += ["--config", args.config]
    if args.quick:
        import yaml
        command += [f"--set={k}={json.dumps(v)}" for k, v in yaml.safe_load(QUICK).items()]
    return command


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    work = Path(tempfile.mkdtemp(prefix="adr_bench_memory_"))
    runs = {}
    peaks, together, seconds = watch(graph_command(args, work / "graph"), env, work / "graph.log", args.interval)
    runs[f"graph {args.mode} x{args.instances}"] = {"peaks_kib": peaks, "together_kib": together, "seconds": seconds}
    if args.in_process:
        peaks, together, seconds = watch(in_process_command(args, work / "in_process"), env,
                                         work / "in_process.log", args.interval)
        runs["adr-train"] = {"peaks_kib": peaks, "together_kib": together, "seconds": seconds}

    config = f" ({args.config})" if args.config else ""
    print(f"\n{args.env} {args.method}{config}, {args.budget} agent steps{' (quick)' if args.quick else ''}; "
          f"logs in {work}\n")
    print("| run | process | peak RSS MiB |")
    print("|---|---|---|")
    for run_name, result in runs.items():
        for name, kib in sorted(result["peaks_kib"].items(), key=lambda item: -item[1]):
            print(f"| {run_name} | {name} | {kib / KIB:.0f} |")
        print(f"| {run_name} | all processes, sum of their peaks (upper bound) | "
              f"{sum(result['peaks_kib'].values()) / KIB:.0f} |")
        print(f"| {run_name} | **all processes at once** (peak of the summed RSS) | "
              f"**{result['together_kib'] / KIB:.0f}** |")
    replay = replay_rows()
    print("\n| env | obs | act | replay bytes / transition | MiB per 1M transitions |")
    print("|---|---|---|---|---|")
    for r in replay:
        print(f"| {r['env']} | {r['obs_dim']} | {r['act_dim']} | {r['bytes_per_transition']} "
              f"| {r['mib_per_million']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()}, "runs": runs,
                                         "replay": replay}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
