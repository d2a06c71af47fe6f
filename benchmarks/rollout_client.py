"""A small rclpy client that keeps simulator instances busy with RollOut goals (the trainer's role, learner paused).

Everything runs in one executor thread: each finished goal sends the next one to the same instance, so an instance
never waits for the client longer than one round trip. It also subscribes to ``adr/trajectories`` as the trainer
does (decoding each message with ``adr_ros.trajectories.from_msg``) and adds up the publish -> receive times.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import rclpy
import torch
from rclpy.action import ActionClient
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from adr_core.agents import Actor
from adr_core.randomization import RandomizationSpace
from adr_interfaces.action import RollOut
from adr_interfaces.msg import ParameterSet, PolicyWeights
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import parameter_sets, policy_weights, qos, topics, trajectories


def random_actor_weights(obs_dim: int, act_dim: int, hidden: list[int], seed: int = 0) -> PolicyWeights:
    torch.manual_seed(seed)
    state = {k: v.detach().clone() for k, v in Actor(obs_dim, act_dim, hidden).state_dict().items()}
    return policy_weights.to_msg(state, version=1, algorithm="ddpg", obs_dim=obs_dim, act_dim=act_dim)


def settings(space: RandomizationSpace, count: int, seed: int = 0) -> Iterator[ParameterSet]:
    """``count`` settings, uniform over the training range, the same sequence for every instance count."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        normalized = space.sample_uniform(rng, 1)[0]
        yield parameter_sets.to_msg(parameter_sets.Proposal(space.env_id, k // 1000, k % 1000, tuple(space.names),
                                                            space.from_normalized(normalized), normalized))


@dataclass
class DriveResult:
    episodes: int = 0  # trajectories the finished goals published (2 per goal with reference)
    steps: int = 0  # transitions of the trajectories received
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    trajectories_received: int = 0
    transport_s: float = 0.0  # summed publish -> receive time of adr/trajectories messages
    decode_s: float = 0.0  # summed from_msg time (the trainer pays it too)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


class RolloutClient:
    def __init__(self, domain_id: int, instances: list[str]) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node("scaling_benchmark", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.instances = instances
        self.clients = {name: ActionClient(self.node, RollOut, topics.roll_out_action(name)) for name in instances}
        self.weights_pub = self.node.create_publisher(PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED)
        self.node.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, self._on_trajectory, qos.RELIABLE_STREAM)
        self.result = DriveResult()
        self._goals: Iterator[ParameterSet] = iter(())
        self._with_reference = False
        self._outstanding = 0
        self._generation = 0  # callbacks of an earlier drive() (a late or lost goal) are ignored

    def wait_for_servers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for name, client in self.clients.items():
            while not client.server_is_ready():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{name}/roll_out did not appear within {timeout:g} s")
                self.executor.spin_once(timeout_sec=0.05)

    def publish_weights(self, msg: PolicyWeights) -> None:
        self.weights_pub.publish(msg)

    def drive(self, goals: Iterator[ParameterSet], *, with_reference: bool, in_flight: int,
              timeout: float) -> DriveResult:
        """Send every goal, ``in_flight`` per instance at a time; returns counts and the elapsed time."""
        self._start(goals, with_reference)
        started = time.perf_counter()
        for name in self.instances:
            for _ in range(in_flight):
                self._send(name)
        deadline = time.monotonic() + timeout
        # done when every goal has finished and every trajectory it published has arrived (results carry none)
        while self._outstanding or self.result.trajectories_received < self.result.episodes:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self._outstanding} goals still running, {self.result.trajectories_received} of "
                                   f"{self.result.episodes} trajectories received after {timeout:g} s")
            self.executor.spin_once(timeout_sec=0.1)
        self.result.seconds = time.perf_counter() - started
        return self.result

    def warm_up(self, goals: list[ParameterSet], *, with_reference: bool, timeout: float) -> None:
        """One goal per instance; done once every instance has published its trajectories.

        The first response between a freshly matched action client and server can be lost (DDS may deliver the
        request before the server's response writer has matched the client); the trainer recovers through its
        ``rollout_timeout``. Here a lost warm-up result is simply not waited for: its trajectory proves the
        instance is up, and a late callback belongs to an earlier generation and is ignored.
        """
        self._start(iter(goals), with_reference)
        for name in self.instances:
            self._send(name, chain=False)
        expected = len(self.instances) * (1 + bool(with_reference))
        deadline = time.monotonic() + timeout
        while self.result.trajectories_received < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"warm-up: {self.result.trajectories_received} of {expected} trajectories "
                                   f"received after {timeout:g} s")
            self.executor.spin_once(timeout_sec=0.1)
        for _ in range(20):  # let stray trajectories of the warm-up arrive before the measured drive
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def _start(self, goals: Iterator[ParameterSet], with_reference: bool) -> None:
        self._generation += 1
        self.result = DriveResult()
        self._goals, self._with_reference, self._outstanding = goals, with_reference, 0

    # ------------------------------------------------------------------ callbacks (executor thread)
    def _send(self, name: str, chain: bool = True) -> None:
        parameters = next(self._goals, None)
        if parameters is None:
            return
        goal = RollOut.Goal(parameters=parameters, with_reference=self._with_reference, min_policy_version=1)
        generation = self._generation
        self._outstanding += 1
        self.clients[name].send_goal_async(goal).add_done_callback(
            lambda future: self._accepted(name, future, generation, chain))

    def _accepted(self, name: str, future, generation: int, chain: bool) -> None:
        if generation != self._generation:
            return
        handle = future.result()
        if not handle.accepted:
            self.result.failures.append(f"{name}: goal rejected")
            self._outstanding -= 1
            return
        handle.get_result_async().add_done_callback(lambda done: self._finished(name, done, generation, chain))

    def _finished(self, name: str, future, generation: int, chain: bool) -> None:
        if generation != self._generation:
            return
        result = future.result().result
        self._outstanding -= 1
        if result.success:
            self.result.episodes += 1 + bool(self._with_reference)
        else:
            self.result.failures.append(f"{name}: {result.message}")
        if chain:
            self._send(name)

    def _on_trajectory(self, msg: TrajectoryMsg) -> None:
        received_ns = time.time_ns()
        sent_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        self.result.transport_s += max(0, received_ns - sent_ns) * 1e-9
        started = time.perf_counter()
        trajectories.from_msg(msg)
        self.result.decode_s += time.perf_counter() - started
        self.result.trajectories_received += 1
        self.result.steps += msg.length
