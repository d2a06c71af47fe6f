"""Why a gradient step costs more in the trainer node than in adr-train (issue 43): the same SAC step timed in
contexts that differ by one thing each, alternating in chunks in one process, so the ratios are fair.

    python -m benchmarks.learner_context                       # ErgoReacher preset sizes (obs 10, act 4, 128-128)
    python -m benchmarks.learner_context --obs 17 --hidden 128 128 --batch 128 --seconds 20 --json out.json

Contexts (the step itself is always ``agent.update(1)`` of adr_core's SAC on the main thread):
  plain          nothing else in the process
  rclpy_idle     rclpy initialized, a node with the trainer's kind of subscriptions, its executor spinning in a
                 thread as the trainer node does (``spin_once(timeout_sec=0.1)`` in a loop), nothing arriving
  rclpy_busy     the same, with a timer firing at 200 Hz whose callback does a little Python work (as the trainer's
                 executor thread does while trajectories, rewards and statistics arrive)
  events_busy    rclpy_busy with rclpy's EventsExecutor (rclpy.experimental, C++) instead of SingleThreadedExecutor
  python_thread  no rclpy: a plain Python thread doing the same 200 Hz work (is it the GIL, or rclpy?)
Reported: median and mean ms per step, and the ratio to ``plain``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path

import numpy as np
import torch

from adr_core.agents import AgentConfig, make_agent
from adr_core.rollout import Trajectory


def make_sac(obs: int, act: int, hidden: tuple[int, ...], batch: int):
    agent = make_agent(AgentConfig(algorithm="sac", hidden_sizes=hidden, batch_size=batch, learning_starts=0,
                                   buffer_capacity=50_000, gamma=0.98, tau=0.01), obs, act, seed=0)
    rng = np.random.default_rng(0)
    for i in range(100):
        length = 100
        agent.store(Trajectory(
            obs=rng.normal(size=(length, obs)).astype(np.float32),
            actions=rng.uniform(-1, 1, (length, act)).astype(np.float32),
            next_obs=rng.normal(size=(length, obs)).astype(np.float32),
            rewards=rng.normal(size=length).astype(np.float32), terminated=np.zeros(length, bool),
            params=np.zeros(1), params_normalized=np.zeros(1), kind="randomized", iteration=i, slot=0,
            policy_version=0, episode_return=0.0, length=length))
    return agent


def busy_work() -> None:
    """What a callback of the trainer's executor does per message, roughly: a little Python and a small array."""
    values = np.frombuffer(np.arange(256, dtype=np.float32).tobytes(), np.float32)
    sum(float(v) for v in values[:32])


class Background:
    def __init__(self, kind: str) -> None:
        self.kind, self.stop = kind, threading.Event()
        self.thread: threading.Thread | None = None
        self.node = self.executor = self.context = None

    def start(self) -> None:
        if self.kind == "plain":
            return
        if self.kind == "python_thread":
            def loop() -> None:
                while not self.stop.is_set():
                    busy_work()
                    time.sleep(0.005)
            self.thread = threading.Thread(target=loop, daemon=True)
            self.thread.start()
            return
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from std_msgs.msg import Float64MultiArray

        self.context = Context()
        rclpy.init(context=self.context, domain_id=231)
        self.node = Node("learner_context", context=self.context)
        self.node.create_subscription(Float64MultiArray, "never_published", lambda _: None, 10)
        if self.kind in ("rclpy_busy", "events_busy"):
            self.node.create_timer(0.005, busy_work)
        if self.kind == "events_busy":
            from rclpy.experimental import EventsExecutor

            self.executor = EventsExecutor(context=self.context)
        else:
            self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

        def spin() -> None:
            while not self.stop.is_set():
                self.executor.spin_once(timeout_sec=0.1)
        self.thread = threading.Thread(target=spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        if self.executor is not None:
            import rclpy

            self.executor.shutdown()
            self.node.destroy_node()
            rclpy.try_shutdown(context=self.context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--obs", type=int, default=10)
    parser.add_argument("--act", type=int, default=4)
    parser.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=12.0, help="per context, in 1-s chunks")
    parser.add_argument("--contexts", nargs="+",
                        default=["plain", "rclpy_idle", "rclpy_busy", "events_busy", "python_thread"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    agent = make_sac(args.obs, args.act, tuple(args.hidden), args.batch)
    for _ in range(50):
        agent.update(1)
    times: dict[str, list[float]] = {c: [] for c in args.contexts}
    rounds = max(1, round(args.seconds))
    for _ in range(rounds):
        for context in args.contexts:
            background = Background(context)
            background.start()
            time.sleep(0.05)
            end = time.perf_counter() + 1.0
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                agent.update(1)
                times[context].append(time.perf_counter() - t0)
            background.close()
    plain = statistics.median(times[args.contexts[0]])
    rows = []
    print(f"SAC step, obs {args.obs}, act {args.act}, {args.hidden}, batch {args.batch}, 1 torch thread")
    print("| context | steps | median ms | mean ms | x plain |\n|---|---|---|---|---|")
    for context, samples in times.items():
        median = statistics.median(samples)
        rows.append({"context": context, "steps": len(samples), "median_ms": 1e3 * median,
                     "mean_ms": 1e3 * statistics.fmean(samples), "ratio": median / plain})
        print(f"| {context} | {len(samples)} | {1e3 * median:.2f} | {1e3 * statistics.fmean(samples):.2f} | "
              f"{median / plain:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
