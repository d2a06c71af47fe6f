"""sim_node as real processes over Fast DDS: a LunarLander and an ErgoReacher instance roll out what they are asked,
exactly as the in-process trainer would; bad goals are refused with reasons; goals wait for their policy version."""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from geometry_msgs.msg import PointStamped
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy_probe import DiagnosticCounters, InSpinThread, probe_node, result_of, wait_until
from sensor_msgs.msg import JointState

from adr_core.agents import Actor, ActorPolicy
from adr_core.envs import make_env
from adr_core.randomization import load_space
from adr_core.rollout import Trajectory, rollout
from adr_core.training.config import TrainConfig
from adr_interfaces.action import RollOut
from adr_interfaces.msg import ParameterSet, PolicyWeights
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import parameter_sets, policy_weights, qos, topics, trajectories
from adr_ros.run_config import build_config
from adr_ros.signing import RunSigning
from graph_harness.ros_processes import executable, isolated_ros_env, running
from graph_harness.signing import key_parameter, run_key, signer

pytestmark = pytest.mark.integration

LUNAR = "{env_id: adr/LunarLander-v0, seed: 3, max_episode_steps: 50}"
ERGO = "{env_id: adr/ErgoReacher-v0, seed: 4, max_episode_steps: 30}"
WEIGHTS_TIMEOUT_S = 2.0
GOAL_TIMEOUT_S = 30.0


@dataclass
class Instance:
    name: str
    config: TrainConfig
    client: ActionClient
    weights_pub: Publisher
    spin_thread: InSpinThread
    state_dict: dict[str, torch.Tensor]
    signing: RunSigning  # the trainer's part: weights and goals signed with the run's key

    def weights(self, version: int) -> PolicyWeights:
        obs_dim = self.state_dict["layers.0.weight"].shape[1]
        act_dim = self.state_dict["layers.2.weight"].shape[0]
        return self.signing.sign(policy_weights.to_msg(self.state_dict, version=version, algorithm="ddpg",
                                                       obs_dim=obs_dim, act_dim=act_dim))

    def setting(self, iteration: int, slot: int, unit: float) -> ParameterSet:
        space = load_space(self.config.env_id)
        normalized = np.full(space.ndim, unit)
        return parameter_sets.to_msg(parameter_sets.Proposal(space.env_id, iteration, slot, tuple(space.names),
                                                             space.from_normalized(normalized), normalized))

    def roll_out(self, parameters: ParameterSet, *, with_reference: bool = False,
                 min_policy_version: int = 1, newest_policy_version: int | None = None) -> RollOut.Result:
        return result_of(self.send(parameters, with_reference=with_reference, min_policy_version=min_policy_version,
                                   newest_policy_version=newest_policy_version),
                         GOAL_TIMEOUT_S, f"the result of a goal to {self.name}")

    def send(self, parameters: ParameterSet, *, with_reference: bool = False, min_policy_version: int = 1,
             newest_policy_version: int | None = None):
        """The future of the goal's result."""
        newest = min_policy_version if newest_policy_version is None else newest_policy_version
        goal = self.signing.sign(RollOut.Goal(parameters=parameters, with_reference=with_reference,
                                              min_policy_version=min_policy_version, newest_policy_version=newest),
                                 to=f"/{self.name}")
        sent = result_of(self.spin_thread.call(self.client.send_goal_async, goal), 5.0, "send_goal_async")
        handle = result_of(sent, GOAL_TIMEOUT_S, f"{self.name} to accept a goal")
        assert handle.accepted
        asked = result_of(self.spin_thread.call(handle.get_result_async), 5.0, "get_result_async")
        return ResultOnly(asked)


class ResultOnly:
    """A get_result future whose result() is the RollOut.Result (not the wrapper with the status)."""

    def __init__(self, future) -> None:
        self._future = future

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> RollOut.Result:
        return self._future.result().result


@dataclass
class Graph:
    node: Node
    lunar: Instance
    ergo: Instance
    received: dict[tuple[str, int, int, str], TrajectoryMsg]
    joint_states: list[JointState]
    goal_points: list[PointStamped]
    diagnostics: DiagnosticCounters
    key: Path

    def trajectory(self, instance: Instance, iteration: int, slot: int, kind: str) -> Trajectory:
        key = (instance.name, iteration, slot, kind)
        wait_until(lambda: key in self.received, 5.0, f"trajectory {key}")
        return trajectories.from_msg(self.received[key])


def _instance(node: Node, spin_thread: InSpinThread, name: str, overrides: str, torch_seed: int,
              key: Path) -> Instance:
    config = build_config("", overrides)
    env = make_env(config.env_id)
    torch.manual_seed(torch_seed)
    actor = Actor(int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape)), (32, 32))
    env.close()
    state_dict = {k: v.clone() for k, v in actor.state_dict().items()}
    return Instance(name, config, ActionClient(node, RollOut, topics.roll_out_action(name)),
                    node.create_publisher(PolicyWeights, topics.POLICY_WEIGHTS, qos.LATCHED), spin_thread, state_dict,
                    signer(key, sender=f"/trainer_for_{name}"))


def _sim_command(name: str, overrides: str, joint_state_rate: float, key: Path) -> list:
    return [executable("adr_sim_node", "sim_node"), "--ros-args", "-r", f"__node:={name}",
            "-p", f"overrides:='{overrides}'", "-p", f"joint_state_rate:={joint_state_rate}",
            "-p", f"weights_timeout:={WEIGHTS_TIMEOUT_S}", *key_parameter(key)]


@pytest.fixture(scope="module")
def graph(ros_domain_id: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    env = isolated_ros_env(ros_domain_id)
    logs = tmp_path_factory.mktemp("sim_logs")
    key = run_key(logs)
    with running(_sim_command("adr_sim_0", LUNAR, 0.0, key), env, logs / "adr_sim_0.log") as lunar_process, \
            running(_sim_command("adr_sim_1", ERGO, 200.0, key), env, logs / "adr_sim_1.log") as ergo_process, \
            probe_node("sim_test_probe", ros_domain_id) as node:
        received: dict[tuple[str, int, int, str], TrajectoryMsg] = {}

        def keep(msg: TrajectoryMsg) -> None:
            key = (msg.instance_id, msg.parameters.iteration, msg.parameters.slot, trajectories.KIND_NAMES[msg.kind])
            received[key] = msg

        joint_states: list[JointState] = []
        goal_points: list[PointStamped] = []
        node.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, keep, qos.RELIABLE_STREAM)
        node.create_subscription(JointState, "joint_states", joint_states.append, 10)
        node.create_subscription(PointStamped, "adr_sim_1/goal", goal_points.append, 10)
        spin_thread = InSpinThread(node)
        graph = Graph(node, _instance(node, spin_thread, "adr_sim_0", LUNAR, 11, key),
                      _instance(node, spin_thread, "adr_sim_1", ERGO, 12, key),
                      received, joint_states, goal_points, DiagnosticCounters(node), key)
        # both instances share adr/policy_weights (depth 1: one writer per env here, one at a time): each keeps
        # the weights that fit its env and refuses the other's
        for instance, other in ((graph.lunar, graph.ergo), (graph.ergo, graph.lunar)):
            assert instance.client.wait_for_server(timeout_sec=30.0), (logs / f"{instance.name}.log").read_text()
            wait_until(lambda i=instance: i.weights_pub.get_subscription_count() >= 2, 10.0, "weights subscribers")
            instance.weights_pub.publish(instance.weights(1))
            wait_until(lambda i=instance, o=other: graph.diagnostics.value(i.name, "policy_version") == "1"
                       and graph.diagnostics.count(o.name, "rejected_weights_shape") >= 1, 10.0,
                       f"{instance.name} to hold its weights")
        yield graph
        for process, log in ((lunar_process, "adr_sim_0.log"), (ergo_process, "adr_sim_1.log")):
            assert process.poll() is None, (logs / log).read_text()
    for process, log in ((lunar_process, "adr_sim_0.log"), (ergo_process, "adr_sim_1.log")):
        assert process.returncode == 0, (logs / log).read_text()  # Ctrl-C: clean exit
        assert "Traceback" not in (logs / log).read_text() and "never retrieved" not in (logs / log).read_text()


def _in_process(instance: Instance, goal: ParameterSet, kind: str, version: int) -> Trajectory:
    """What adr_core.training.Trainer.collect rolls out for this goal."""
    config = instance.config
    env = make_env(config.env_id, max_episode_steps=config.max_episode_steps)
    space = env.unwrapped.randomization_space
    setting = parameter_sets.from_msg(goal)
    if kind == "randomized":
        params, normalized, noise = setting.values, setting.normalized, config.agent.exploration_noise
    else:
        params, normalized, noise = space.reference(), space.reference_normalized(), config.reference_noise
    trajectory = rollout(env, ActorPolicy.from_state_dict(instance.state_dict), params=params,
                         params_normalized=normalized, kind=kind, iteration=setting.iteration, slot=setting.slot,
                         run_seed=config.seed, policy_version=version, exploration_noise=noise)
    env.close()
    return trajectory


def _assert_same(remote: Trajectory, local: Trajectory) -> None:
    for field in ("obs", "actions", "next_obs", "rewards", "terminated", "params", "params_normalized"):
        assert np.array_equal(getattr(remote, field), getattr(local, field)), field
    for field in ("kind", "iteration", "slot", "policy_version", "episode_return", "length", "truncated", "solved"):
        assert getattr(remote, field) == getattr(local, field), field
    assert remote.final_distance == local.final_distance or (math.isnan(remote.final_distance)
                                                             and math.isnan(local.final_distance))


@pytest.mark.parametrize("which", ["lunar", "ergo"])
def test_rollouts_equal_the_in_process_trainers(graph: Graph, which: str) -> None:
    instance: Instance = getattr(graph, which)
    goal = instance.setting(iteration=2, slot=1, unit=0.3)
    result = instance.roll_out(goal, with_reference=True)
    assert result.success, result.message
    assert "iteration 2 slot 1" in result.message
    for kind in ("randomized", "reference"):
        remote = graph.trajectory(instance, 2, 1, kind)
        local = _in_process(instance, goal, kind, version=1)
        assert local.length == instance.config.max_episode_steps or local.terminated[-1]
        _assert_same(remote, local)
        assert graph.received[(instance.name, 2, 1, kind)].instance_id == instance.name


def test_ergo_instance_shows_its_arm(graph: Graph) -> None:
    result = graph.ergo.roll_out(graph.ergo.setting(iteration=3, slot=0, unit=0.9))
    assert result.success, result.message
    wait_until(lambda: graph.joint_states and graph.goal_points, 5.0, "JointState and goal messages")
    joints = graph.joint_states[-1]
    assert list(joints.name) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert len(joints.position) == len(joints.velocity) == 6 and np.isfinite(joints.position).all()
    goal = graph.goal_points[-1]
    assert goal.header.frame_id == "world" and goal.point.z >= 0.12  # ErgoReacher goals are at least 12 cm high


def _broken(goal: ParameterSet, **changes) -> ParameterSet:
    broken = ParameterSet(env_id=goal.env_id, iteration=goal.iteration, slot=goal.slot, names=list(goal.names),
                          values=goal.values, normalized=goal.normalized)
    for name, value in changes.items():
        setattr(broken, name, value)
    return broken


def test_bad_goals_are_aborted_with_the_reason(graph: Graph) -> None:
    lunar = graph.lunar
    goal = lunar.setting(iteration=4, slot=0, unit=0.5)  # main_engine_power 14 in [8, 20]
    cases = {
        "malformed": (_broken(goal, values=[float("nan")]), "non-finite"),
        "names": (_broken(goal, names=["main_engine_strength"]), "main_engine_strength"),
        "out_of_range": (_broken(goal, values=[1000.0], normalized=[82.0]), "main_engine_power=1000"),
        "normalized": (_broken(goal, normalized=[0.75]), "parameters.normalized[0] (main_engine_power)"),
        "env_id": (_broken(goal, env_id="adr/Pusher3DOF-v0"), "adr/Pusher3DOF-v0"),
        "run_id": (_broken(goal, run_id="another-run"), "a rollout goal of run 'another-run', this is run ''"),
    }
    for reason, (bad_goal, expected) in cases.items():
        result = lunar.roll_out(bad_goal)
        assert not result.success and expected in result.message, (reason, result.message)
    wait_until(lambda: all(graph.diagnostics.count("adr_sim_0", f"rejected_{reason}") >= 1 for reason in cases),
               5.0, f"counters {list(cases)} in /diagnostics")
    assert not any(key[1] == 4 for key in graph.received), "a refused goal was rolled out"


def test_goals_wait_for_their_policy_version(graph: Graph) -> None:
    lunar = graph.lunar
    waiting = lunar.send(lunar.setting(iteration=5, slot=0, unit=0.1), min_policy_version=2)
    queued = lunar.send(lunar.setting(iteration=5, slot=1, unit=0.2), min_policy_version=1)  # runs after the first
    time.sleep(1.0)
    assert not waiting.done() and not queued.done()
    lunar.weights_pub.publish(lunar.weights(2))
    first, second = (result_of(f, GOAL_TIMEOUT_S, "results after version 2") for f in (waiting, queued))
    assert first.success and second.success, (first.message, second.message)
    assert graph.trajectory(lunar, 5, 0, "randomized").policy_version == 2
    assert graph.trajectory(lunar, 5, 1, "randomized").policy_version == 2

    lunar.weights_pub.publish(lunar.weights(1))  # stale: refused, version 2 stays
    wait_until(lambda: graph.diagnostics.count("adr_sim_0", "rejected_stale_weights") >= 1, 5.0,
               "the stale weights to be refused")
    timed_out = lunar.roll_out(lunar.setting(iteration=6, slot=0, unit=0.1), min_policy_version=9)
    assert not timed_out.success
    assert (f"no policy weights of a version in [9, 9] within {WEIGHTS_TIMEOUT_S:g} s (held: 2)"
            in timed_out.message)

    # issue 18: a forged version the trainer never published is held but never used, and does not pin the
    # instance: the next real version is
    lunar.weights_pub.publish(lunar.weights(2**62))
    wait_until(lambda: graph.diagnostics.value("adr_sim_0", "policy_version") == str(2**62), 5.0,
               "the forged weights to arrive")
    lunar.weights_pub.publish(lunar.weights(3))
    served = lunar.roll_out(lunar.setting(iteration=7, slot=0, unit=0.1), min_policy_version=3,
                            newest_policy_version=3)
    assert served.success, served.message
    assert graph.trajectory(lunar, 7, 0, "randomized").policy_version == 3
    inverted = lunar.roll_out(lunar.setting(iteration=8, slot=0, unit=0.1), min_policy_version=4,
                              newest_policy_version=3)
    assert not inverted.success and "newest_policy_version 3 < min_policy_version 4" in inverted.message

    # issue 18: weights of another run (a second run on the domain) are never taken, whatever their version; since
    # issue 47 they do not even verify (signed for another run); nor do unsigned ones
    foreign = lunar.weights(4)
    foreign.run_id = "another-run"
    lunar.weights_pub.publish(signer(graph.key, "another-run").sign(foreign))
    unsigned = policy_weights.to_msg(lunar.state_dict, version=5, algorithm="ddpg", obs_dim=8, act_dim=2)
    lunar.weights_pub.publish(unsigned)
    wait_until(lambda: graph.diagnostics.count("adr_sim_0", "dropped_bad_signature") >= 1
               and graph.diagnostics.count("adr_sim_0", "dropped_unsigned") >= 1, 5.0,
               "the other run's and the unsigned weights to be dropped")
    unserved = lunar.roll_out(lunar.setting(iteration=9, slot=0, unit=0.1), min_policy_version=4,
                              newest_policy_version=4)
    assert not unserved.success and "no policy weights of a version in [4, 4]" in unserved.message
