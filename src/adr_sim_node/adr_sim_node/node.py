"""Simulator instance node: rolls out the latest policy in a randomized and a reference env on request.

- ``adr/policy_weights`` (latched): actors kept with their versions (latest_policy.py; versions older than one
  already served are rejected).
- ``<node name>/roll_out`` (action RollOut): validate the setting, wait (``weights_timeout`` s at most) for weights of
  a version in [``min_policy_version``, ``newest_policy_version``] (the newest the trainer has published, so a forged
  higher version is never used), roll out exactly as ``adr_core.training.Trainer.collect`` does (randomized,
  then reference when ``with_reference``), publish each trajectory on ``adr/trajectories``, then succeed.
  Goals run one at a time, in the order their requests were accepted (serial_goals.py).
- Ergo envs: ``joint_states`` and ``<node name>/goal`` at most ``joint_state_rate`` Hz during rollouts.
- Before its first rollout: a probe on ``adr/trajectories`` until the trainer and discriminator have answered it,
  signed, on ``adr/trajectory_receipts`` (receipts.py).
- ``adr/metrics/{sim_steps_per_s,episode_return,reference_return}`` (and signed on ``adr/signed_metrics``),
  ``/diagnostics``. Cancel requests are refused: no node of a run cancels a goal.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, cast

import gymnasium as gym
import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from adr_core.agents import ActorPolicy
from adr_core.envs import make_env
from adr_core.iteration import RolloutSettings, roll_out_episode
from adr_core.probe.policies import check_policy, load_frozen_policy
from adr_core.rollout import Kind, Trajectory
from adr_interfaces.action import RollOut
from adr_interfaces.msg import PolicyWeights
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import policy_weights, qos, run_ids, topics, trajectories
from adr_ros.diagnostics import NodeDiagnostics
from adr_ros.executors import JoiningMultiThreadedExecutor
from adr_ros.lifecycle import run_node
from adr_ros.metrics import MetricPublisher
from adr_ros.parameter_sets import Proposal
from adr_ros.receipts import ReceiptWaiter
from adr_ros.run_config import declare_run, declare_signing
from adr_sim_node.ergo_state import ErgoStatePublisher, is_ergo
from adr_sim_node.goal_check import REASONS as GOAL_REJECTIONS
from adr_sim_node.goal_check import InvalidGoal, checked_setting
from adr_sim_node.latest_policy import LatestPolicy, StaleWeights, VersionedPolicy
from adr_sim_node.serial_goals import SerialGoals

if TYPE_CHECKING:
    from gymnasium.spaces import Box

    from adr_core.envs.randomized import RandomizedEnvMixin

DEFAULT_NAME = "adr_sim_0"
METRICS = ("sim_steps_per_s", "episode_return", "reference_return")
SHUTDOWN_GRACE_S = 30.0
# Goal requests reach on_goal_request on the executor's threads, so two goals the trainer signed a few ms apart can be
# checked in either order: a signed goal up to this much older than the newest accepted one is taken once (the
# verifier's anti-replay window); with the strict check the second was refused as a replay and its slot stalled
# until the trainer's timeout.
GOAL_REORDER_WINDOW_NS = 10_000_000_000


class SimNode(Node):
    def __init__(self) -> None:
        super().__init__(DEFAULT_NAME)
        self.config, self.run_dir, spec = declare_run(self)
        self.run_id = spec.run_id
        self.signing = declare_signing(self, self.run_id)
        joint_state_rate = self.declare_parameter("joint_state_rate", 30.0, ParameterDescriptor(
            description="Ergo envs: JointState and goal messages per second during rollouts (0 = off)",
            floating_point_range=[FloatingPointRange(from_value=0.0, to_value=1000.0)], read_only=True)).value
        self.weights_timeout = self.declare_parameter("weights_timeout", 60.0, ParameterDescriptor(
            description="Seconds a goal waits for policy weights of its min_policy_version before it is aborted",
            floating_point_range=[FloatingPointRange(from_value=0.0, to_value=3600.0)], read_only=True)).value
        goal_frame_id = self.declare_parameter("goal_frame_id", "world", ParameterDescriptor(
            description="frame_id of the published Ergo goal point (the env's world frame)", read_only=True)).value

        self.trajectory_consumers = self.declare_parameter("trajectory_consumers", 1, ParameterDescriptor(
            description="Subscribers of adr/trajectories to wait for before publishing (trainer, discriminator)",
            integer_range=[IntegerRange(from_value=0, to_value=64, step=1)], read_only=True)).value
        self.consumer_nodes = set(self.declare_parameter("trajectory_consumer_nodes", [""], ParameterDescriptor(
            description="Node names of the trajectory consumers to wait for (trainer, discriminator): each must "
                        "answer this instance's probe with a signed receipt; other subscribers (a recorder, rqt, a "
                        "stranger on the domain) neither count nor block", read_only=True)).value) - {""}

        cfg = self.config
        env_kwargs = cfg.env_kwargs()
        self.randomized_env = make_env(cfg.env_id, **env_kwargs)
        self.reference_env = make_env(cfg.env_id, **env_kwargs)
        self.space = cast("RandomizedEnvMixin", self.randomized_env.unwrapped).randomization_space
        self.obs_dim = int(np.prod(cast("Box", self.randomized_env.observation_space).shape))
        self.act_dim = int(np.prod(cast("Box", self.randomized_env.action_space).shape))

        frozen_spec = self.declare_parameter("frozen_policy", "", ParameterDescriptor(
            description="mode:=probe: roll out this frozen policy (checkpoint or module:callable) and ignore "
                        "adr/policy_weights", read_only=True)).value

        self.latest = LatestPolicy()
        self.frozen = False
        if frozen_spec:
            frozen = load_frozen_policy(frozen_spec, cfg.env_id, self.space)
            check_policy(frozen, self.randomized_env)
            self.latest.offer(VersionedPolicy(frozen.policy, 0))
            self.frozen = True
        self.stopping = threading.Event()
        self.goals = SerialGoals()
        self.ergo = (ErgoStatePublisher(self, joint_state_rate, goal_frame_id)
                     if joint_state_rate > 0 and is_ergo(self.randomized_env) else None)
        self.trajectory_pub = self.create_publisher(TrajectoryMsg, topics.TRAJECTORIES, qos.RELIABLE_STREAM)
        # the consumers' signed answers to this instance's probes (receipts.py): who reads its trajectories
        self.receipts = ReceiptWaiter(self, self.signing, self.consumer_nodes, self.trajectory_pub, self.run_id)
        self.metrics = MetricPublisher(self, METRICS, self.signing)
        self.diagnostics = NodeDiagnostics(self, hardware_id=cfg.env_id)
        self.signing.count_drops(self.diagnostics.count)
        # every key a goal thread may touch exists from the start: the diagnostics timer (another thread) iterates
        # these dicts, which must not change size meanwhile
        self.diagnostics.counters.update(
            dict.fromkeys(
                (
                    "rollouts",
                    "steps",
                    "rejected_no_weights",
                    "rejected_no_consumers",
                    "rejected_cancel",
                    *(f"rejected_{reason}" for reason in GOAL_REJECTIONS),
                ),
                0,
            )
        )
        self.diagnostics.values["queued_goals"] = "0"
        self.diagnostics.set_status(DiagnosticStatus.WARN, "frozen policy (probe)" if self.frozen
                                    else "waiting for policy weights")
        self.create_subscription(PolicyWeights, topics.POLICY_WEIGHTS, self.on_weights, qos.CRITICAL_HISTORY)
        # goal requests and cancels are answered while a goal executes (or waits for weights): reentrant group
        self._action = topics.roll_out_action(self.get_name())
        self.action_server = ActionServer(
            self, RollOut, self._action, execute_callback=self.execute,
            goal_callback=self.on_goal_request, handle_accepted_callback=self.on_accepted,
            cancel_callback=self.on_cancel, callback_group=ReentrantCallbackGroup(),
            goal_service_qos_profile=qos.CRITICAL_SERVICE, result_service_qos_profile=qos.CRITICAL_SERVICE,
            feedback_pub_qos_profile=qos.RELIABLE_STREAM)
        self.get_logger().info(f"{cfg.env_id} instance ({self.space.ndim}-D: {', '.join(self.space.names)}), "
                               f"seed {cfg.seed}, Ergo state {'on' if self.ergo else 'off'}")

    # ------------------------------------------------------------------ weights
    def on_weights(self, msg: PolicyWeights) -> None:
        if not self.signing.accept(msg, topics.POLICY_WEIGHTS):
            return
        if self.frozen:  # a probe's instance rolls out its frozen policy only
            self.diagnostics.count("ignored_weights")
            return
        refusal = run_ids.foreign(msg.run_id, self.run_id, f"policy weights version {msg.version}")
        if refusal is not None:  # never offered: another run's version cannot pin or replace this run's policy
            self.diagnostics.reject("run_id", refusal)
            return
        if (msg.obs_dim, msg.act_dim) != (self.obs_dim, self.act_dim):
            self.diagnostics.reject("weights_shape", f"weights for (obs_dim, act_dim) = ({msg.obs_dim}, {msg.act_dim}),"
                                                     f" this env has ({self.obs_dim}, {self.act_dim})")
            return
        try:
            policy = ActorPolicy.from_state_dict(policy_weights.from_msg(msg))
            actor = policy.actor
            if (actor.obs_dim, actor.act_dim) != (self.obs_dim, self.act_dim):
                raise ValueError(f"the actor maps {actor.obs_dim} -> {actor.act_dim}, this env needs "
                                 f"{self.obs_dim} -> {self.act_dim}")
            self.latest.offer(VersionedPolicy(policy, int(msg.version)))
        except StaleWeights as error:
            self.diagnostics.reject("stale_weights", str(error))
            return
        except ValueError as error:  # MalformedWeights, ActorStateError
            self.diagnostics.reject("malformed_weights", f"weights version {msg.version}: {error}")
            return
        self.diagnostics.values["policy_version"] = str(msg.version)
        self.diagnostics.set_status(DiagnosticStatus.OK, f"policy version {msg.version}")

    # ------------------------------------------------------------------ goals
    def on_goal_request(self, goal: RollOut.Goal) -> GoalResponse:
        """Goals not signed with the run's key for this instance (in this start of the run), or replayed, are
        rejected before they are queued; an accepted goal takes its place in the execution order here
        (SerialGoals)."""
        if not self.signing.accept(goal, self._action, reorder_window_ns=GOAL_REORDER_WINDOW_NS, to_me=True):
            return GoalResponse.REJECT
        self.goals.reserve(goal)
        return GoalResponse.ACCEPT

    def on_accepted(self, goal_handle: ServerGoalHandle) -> None:
        """The goal is queued: say so, signed for its trainer (the action's goal response carries no signature)."""
        self.goals.accepted(goal_handle)
        self._feedback(goal_handle, RollOut.Feedback(stage=RollOut.Feedback.STAGE_ACCEPTED))

    def on_cancel(self, _: object) -> CancelResponse:
        """No node of a run cancels a goal, and a cancel request (action_msgs/CancelGoal) has no room for a
        signature: every one is refused, counted, the first logged (before, 400 cancels/s from outside ended a run)."""
        self.diagnostics.reject("cancel", "a cancel request for a rollout goal: no node of the run cancels goals")
        return CancelResponse.REJECT

    def _feedback(self, goal_handle: ServerGoalHandle, feedback: RollOut.Feedback) -> None:
        goal_handle.publish_feedback(self.signing.answer(feedback, goal_handle.request))

    def execute(self, goal_handle: ServerGoalHandle) -> RollOut.Result:
        try:
            result = self._roll_out(goal_handle)
            self._feedback(goal_handle, RollOut.Feedback(stage=RollOut.Feedback.STAGE_FINISHED,
                                                         success=result.success, message=result.message))
            return self.signing.answer(result, goal_handle.request)
        finally:
            self.goals.finished()
            self.diagnostics.values["queued_goals"] = str(self.goals.queued)

    def _roll_out(self, goal_handle: ServerGoalHandle) -> RollOut.Result:
        goal: RollOut.Goal = goal_handle.request
        if goal_handle.is_cancel_requested:
            return _finish(goal_handle, "canceled", "canceled before it started")
        try:
            foreign = run_ids.foreign(goal.parameters.run_id, self.run_id, "a rollout goal")
            if foreign is not None:
                raise InvalidGoal("run_id", foreign)
            setting = checked_setting(goal.parameters, self.space)
            if goal.newest_policy_version < goal.min_policy_version:
                raise InvalidGoal("versions", f"newest_policy_version {goal.newest_policy_version} < "
                                              f"min_policy_version {goal.min_policy_version}")
        except InvalidGoal as error:
            self.diagnostics.reject(error.reason, str(error))
            return _finish(goal_handle, "abort", str(error))
        held = self.latest.wait_for(goal.min_policy_version, self.weights_timeout,
                                    give_up=lambda: self.stopping.is_set() or goal_handle.is_cancel_requested,
                                    newest_version=goal.newest_policy_version)
        if held is None:
            if goal_handle.is_cancel_requested:
                return _finish(goal_handle, "canceled", "canceled while waiting for policy weights")
            if self.stopping.is_set():
                return _finish(goal_handle, "abort", "the instance is shutting down")
            current = self.latest.current
            detail = (f"no policy weights of a version in [{goal.min_policy_version}, {goal.newest_policy_version}] "
                      f"within {self.weights_timeout:g} s (held: {current.version if current else 'none'})")
            self.diagnostics.reject("no_weights", detail)
            return _finish(goal_handle, "abort", detail)

        # Reliable delivery covers matched readers only: a freshly (re)started instance must not publish before the
        # trainer (and the discriminator) have matched it, or those trajectories are lost.
        consumers = self.trajectory_consumers
        if not self._wait_for_consumers(consumers, goal_handle):
            detail = (self.receipts.missing_detail(self.weights_timeout) if self.consumer_nodes else
                      f"only {self.trajectory_pub.get_subscription_count()} of {consumers} trajectory consumers "
                      f"matched within {self.weights_timeout:g} s")
            self.diagnostics.reject("no_consumers", detail)
            return _finish(goal_handle, "abort", detail)

        started = time.perf_counter()
        noise, reference_noise = ((0.0, 0.0) if self.frozen  # a probe rolls its frozen policy out as it is
                                  else (self.config.agent.exploration_noise, self.config.reference_noise))
        settings = RolloutSettings(self.config.seed, noise, reference_noise, self.config.rollout_max_steps)
        randomized = self._run(self.randomized_env, held, setting, "randomized", setting.values, setting.normalized,
                               settings)
        self._feedback(goal_handle, RollOut.Feedback(stage=RollOut.Feedback.STAGE_PROGRESS,
                                                     steps_done=randomized.length))
        steps = randomized.length
        values = {"episode_return": randomized.episode_return}
        if goal.with_reference:
            reference = self._run(self.reference_env, held, setting, "reference", self.space.reference(),
                                  self.space.reference_normalized(), settings)
            steps += reference.length
            values["reference_return"] = reference.episode_return
        elapsed = time.perf_counter() - started
        self.metrics.publish({**values, "sim_steps_per_s": steps / elapsed if elapsed > 0 else float("nan")})
        self.diagnostics.count("rollouts", 1 + bool(goal.with_reference))
        self.diagnostics.count("steps", steps)
        return _finish(goal_handle, "succeed",
                       f"iteration {setting.iteration} slot {setting.slot}: return {randomized.episode_return:.3f} "
                       f"in {randomized.length} steps (policy version {held.version}"
                       f"{', with reference' if goal.with_reference else ''})")

    def _consumers_matched(self, count: int) -> bool:
        if self.consumer_nodes:  # the run's consumers, by their signed receipts (a stranger cannot stand in or block)
            return self.receipts.confirmed()
        # a node started on its own (no named consumers): count the matched subscribers
        return self.trajectory_pub.get_subscription_count() >= count

    def _wait_for_consumers(self, count: int, goal_handle: ServerGoalHandle) -> bool:
        deadline = time.monotonic() + self.weights_timeout
        while not self._consumers_matched(count):
            if time.monotonic() > deadline or self.stopping.is_set() or goal_handle.is_cancel_requested:
                return False
            if self.consumer_nodes:
                self.receipts.probe()  # at most every PROBE_PERIOD_S
            time.sleep(0.01)
        return True

    def _run(self, env: gym.Env, held: VersionedPolicy, setting: Proposal, kind: Kind, values: np.ndarray,
             normalized: np.ndarray, settings: RolloutSettings) -> Trajectory:
        """One episode exactly as the in-process trainer rolls it out (the core's ``roll_out_episode``), published
        before the goal succeeds."""
        policy = held.policy if self.ergo is None else self.ergo.observing(env, held.policy)
        trajectory = roll_out_episode(env, policy, values, normalized, kind, setting.slot, setting.iteration,
                                      settings, held.version)
        msg = trajectories.to_msg(trajectory, env_id=self.config.env_id, names=self.space.names,
                                  instance_id=self.get_name(), run_id=self.run_id)
        msg.header.stamp = self.get_clock().now().to_msg()
        self.trajectory_pub.publish(self.signing.sign(msg))
        return trajectory

    # ------------------------------------------------------------------ shutdown
    def shut_down(self) -> None:
        """Abort a goal that waits for weights, let a running rollout finish (and publish), start no more."""
        self.stopping.set()
        self.latest.wake_waiters()
        if not self.goals.close(SHUTDOWN_GRACE_S):
            self.get_logger().warning(f"a rollout was still running after {SHUTDOWN_GRACE_S:g} s")
        self.randomized_env.close()
        self.reference_env.close()


def _finish(goal_handle: ServerGoalHandle, outcome: str, message: str) -> RollOut.Result:
    """Set the goal's terminal state (succeed / abort / canceled) and build its result."""
    getattr(goal_handle, outcome)()
    return RollOut.Result(success=outcome == "succeed", message=message)


def main() -> int:
    return run_node(SimNode, on_shutdown=lambda node: node.shut_down(),
                    make_executor=lambda: JoiningMultiThreadedExecutor(num_threads=4))


if __name__ == "__main__":
    raise SystemExit(main())
