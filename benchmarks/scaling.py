"""Rollout throughput of 1, 2, 4, 8 simulator instance nodes with the learner paused (issue 8: >= 0.8x linear up to
the number of cores), next to the same rollouts in one plain process.

    python -m benchmarks.scaling                                  # LunarLander, 400-300 actor, 1 2 4 8 instances
    python -m benchmarks.scaling --instances 1 2 --episodes 48 --with-reference --json scaling.json
    python -m benchmarks.scaling --quick                          # 1 and 2 instances, 16 episodes: a smoke test

For each instance count N: start N ``sim_node`` processes exactly as adr_launch does (same executable, same
parameters, 1 torch thread each, isolated ROS domain, localhost only), publish one latched actor (random weights of
the given sizes, version 1), and have a small rclpy client (rollout_client.py) send the same ``--episodes``
RollOut goals (settings uniform over the training range, the same sequence for every N), ``--in-flight`` per
instance at a time. The client also subscribes to adr/trajectories and decodes every message, as the trainer does.
Throughput = env steps of the finished goals / time from the first goal sent to the last result.

Columns: steps/s; speed-up over 1 instance; efficiency = steps/s / (N x steps/s of 1 instance) (target >= 0.8 for
N <= cores); node overhead = in-process rate / 1-instance rate - 1 (the same rollouts in this process with
adr_core.rollout, 1 torch thread); transport ms = mean publish -> receive time of one trajectory message.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import torch

from adr.graph import NodeSpec
from adr.launcher import node_command
from adr_core.agents import ActorPolicy
from adr_core.envs import make_env
from adr_core.rollout import rollout
from adr_ros import parameter_sets, policy_weights
from benchmarks.rollout_client import RolloutClient, random_actor_weights, settings


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--episodes", type=int, default=96, help="RollOut goals per instance count (default 96)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[400, 300], help="actor hidden sizes (paper)")
    parser.add_argument("--with-reference", action="store_true", help="ADR goals: a reference episode per goal too")
    parser.add_argument("--max-episode-steps", type=int, default=None, help="episode limit (default: the env's)")
    parser.add_argument("--in-flight", type=int, default=2, help="goals queued per instance (default 2)")
    parser.add_argument("--quick", action="store_true", help="1 and 2 instances, 16 episodes, 32-32 actor")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--domain-id", type=int, default=100 + os.getpid() % 50)
    args = parser.parse_args(argv)
    if args.quick:
        args.instances, args.episodes, args.hidden = [1, 2], 16, [32, 32]
    return args


def run_config_overrides(args: argparse.Namespace) -> str:
    extra = "" if args.max_episode_steps is None else f", max_episode_steps: {args.max_episode_steps}"
    return f"{{env_id: {args.env}, seed: 0{extra}}}"


@contextmanager
def sim_instances(count: int, args: argparse.Namespace, work: Path, env: dict[str, str]):
    names = [f"adr_sim_{i}" for i in range(count)]
    parameters = {"config_file": "", "overrides": run_config_overrides(args), "run_dir": str(work / "run"),
                  "trajectory_consumers": 1}
    processes = []
    try:
        for name in names:
            log = open(work / f"{name}_{count}.log", "wb")
            processes.append(subprocess.Popen(node_command(NodeSpec("adr_sim_node", "sim_node", name, parameters)),
                                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        yield names
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def in_process_rate(args: argparse.Namespace) -> float:
    """The same rollouts in this process (1 torch thread): the cost of the episodes without any node around them."""
    torch.set_num_threads(1)
    kwargs = {} if args.max_episode_steps is None else {"max_episode_steps": args.max_episode_steps}
    env, reference_env = make_env(args.env, **kwargs), make_env(args.env, **kwargs)
    space = env.unwrapped.randomization_space
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    policy = ActorPolicy.from_state_dict(policy_weights.from_msg(random_actor_weights(obs_dim, act_dim, args.hidden)))
    steps, started = 0, time.perf_counter()
    for msg in settings(space, args.episodes):
        proposal = parameter_sets.from_msg(msg)
        common = dict(iteration=proposal.iteration, slot=proposal.slot, run_seed=0, policy_version=1,
                      exploration_noise=0.1)
        steps += rollout(env, policy, params=proposal.values, params_normalized=proposal.normalized,
                         kind="randomized", **common).length
        if args.with_reference:
            steps += rollout(reference_env, policy, params=space.reference(),
                             params_normalized=space.reference_normalized(), kind="reference", **common).length
    return steps / (time.perf_counter() - started)


def measure(count: int, args: argparse.Namespace, work: Path, env: dict[str, str]) -> dict:
    space = make_env(args.env).unwrapped.randomization_space
    probe_env = make_env(args.env)
    obs_dim, act_dim = probe_env.observation_space.shape[0], probe_env.action_space.shape[0]
    with sim_instances(count, args, work, env) as names:
        client = RolloutClient(args.domain_id, names)
        try:
            client.wait_for_servers(timeout=120)
            client.publish_weights(random_actor_weights(obs_dim, act_dim, args.hidden))
            # warm-up: one goal per instance (imports, first weights, DDS matching), not timed
            client.warm_up(list(settings(space, count, seed=1)), with_reference=args.with_reference, timeout=120)
            result = client.drive(settings(space, args.episodes), with_reference=args.with_reference,
                                  in_flight=args.in_flight, timeout=600)
        finally:
            client.close()
    if result.failures:
        raise RuntimeError(f"{count} instances: {len(result.failures)} goals failed, e.g. {result.failures[0]}")
    received = max(result.trajectories_received, 1)
    return {"instances": count, "episodes": result.episodes, "steps": result.steps, "seconds": result.seconds,
            "steps_per_s": result.steps_per_s, "transport_ms": 1e3 * result.transport_s / received,
            "decode_ms": 1e3 * result.decode_s / received, "transport_share": result.transport_s / result.seconds}


def print_table(rows: list[dict], in_process: float, args: argparse.Namespace, work: Path) -> None:
    single = next((r["steps_per_s"] for r in rows if r["instances"] == 1), None)
    cores = os.cpu_count() or 1
    print(f"\n{args.env}, actor {args.hidden}, {args.episodes} goals{' with reference' if args.with_reference else ''}"
          f", {args.in_flight} in flight per instance, {cores} CPUs{' (quick)' if args.quick else ''}; logs in {work}")
    print(f"in-process (same rollouts, 1 torch thread): {in_process:.0f} steps/s"
          + (f"; node overhead at 1 instance: {in_process / single - 1:+.1%}\n" if single else "\n"))
    print("| instances | steps/s | speed-up | efficiency | target | transport ms / trajectory | decode ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        speed_up = r["steps_per_s"] / single if single else float("nan")
        target = ">= 0.8" if r["instances"] <= cores else "(beyond the cores)"
        print(f"| {r['instances']} | {r['steps_per_s']:.0f} | {speed_up:.2f} | {speed_up / r['instances']:.2f} "
              f"| {target} | {r['transport_ms']:.2f} | {r['decode_ms']:.3f} |")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    env.pop("ROS_STATIC_PEERS", None)
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    work = Path(tempfile.mkdtemp(prefix="adr_bench_scaling_"))
    in_process = in_process_rate(args)
    print(f"in-process: {in_process:.0f} steps/s", flush=True)
    rows = []
    for count in args.instances:
        rows.append(measure(count, args, work, env))
        print(f"{count} instance(s): {rows[-1]['steps_per_s']:.0f} steps/s", flush=True)
    print_table(rows, in_process, args, work)
    if args.json:
        args.json.write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()},
                                         "in_process_steps_per_s": in_process, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
