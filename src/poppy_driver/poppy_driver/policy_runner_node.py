"""policy_runner node: a trained ErgoReacher / ErgoPusher policy on the Poppy Ergo Jr, through poppy_driver.

Topics:   joint_states (in), <driver>/commands (std_msgs/Float64MultiArray, out, at the simulator's control rate),
          /clicked_point (geometry_msgs/PointStamped, in: goals, goal_mode clicked), puck (PointStamped, in:
          ErgoPusher only), ~/goal (PointStamped, out: the goal as used), ~/episode_summary (std_msgs/String, out:
          one JSON object per episode), /diagnostics (in: the driver's compliance; out: the runner's state).
Services used: <driver>/set_compliant, <driver>/go_to_rest.
The episodes run in a worker thread (plain logic in poppy_driver.policy_runner); ROS callbacks only store readings.
See docs/deploy_real.md.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence

import rclpy
import rclpy.logging
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.duration import Duration
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.time import Time
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from .policy_runner.episodes import PolicyRunner, RunnerSettings
from .policy_runner.errors import ArmNotReady, DeployError, Stopped
from .policy_runner.goals import ClickedGoals, Goal, RandomGoals, goal_from_point
from .policy_runner.loading import load_deployable
from .policy_runner.pacing import MonotonicClock
from .policy_runner.readings import JointReading, PuckReading, PuckTrack
from .policy_runner.results_file import ResultsFile
from .policy_runner.summary import EpisodeSummary

GOAL_MODES = ("random", "clicked")
SERVICE_TIMEOUT_S = 10.0
SUMMARY_ACK_TIMEOUT_S = 2.0
LATCHED = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class PolicyRunnerNode(Node):
    def __init__(self, stop: threading.Event) -> None:
        super().__init__("policy_runner")
        p = self._declare
        checkpoint = p("checkpoint", "", "Run directory, checkpoints/ folder, latest.json or .pt file of the policy")
        self.goal_mode = p("goal_mode", "random", "random: goals drawn like in training; clicked: /clicked_point")
        if self.goal_mode not in GOAL_MODES:
            raise DeployError(f"goal_mode={self.goal_mode!r}: expected one of {GOAL_MODES}")
        self.episodes = p("episodes", 0, "Evaluation episodes to run, then stop (0: until Ctrl-C)")
        seed = p("seed", 0, "Random goals: goal k = goal of adr_core.evaluation's episode k for this seed")
        driver = p("driver", "poppy_driver", "Node name of the driver (its commands topic and services)")
        self.world_frame = p("world_frame", "world", "Frame of the simulators' world (goal coordinates)")
        self.base_frame = p("base_frame", "base_link", "The URDF's root link (world + base position)")
        clicked_topic = p("clicked_point_topic", "/clicked_point", "Goals in goal_mode clicked")
        self.rest_when_done = p("rest_when_done", True, "Call the driver's go_to_rest after the last episode")
        torch_threads = p("torch_threads", 1, "Torch CPU threads for the policy")
        results_file = p("results_file", "", "Append each episode summary (JSON) to this file ('': none)")
        settings = RunnerSettings(
            start_tolerance_rad=p("start_tolerance", 0.05, "Start pose reached when every joint is this close [rad]"),
            start_timeout_s=p("start_timeout", 10.0, "Give up waiting for the start pose after this long [s]"),
            feedback_timeout_s=p("feedback_timeout", 0.25, "Feedback older than this aborts an episode [s]"),
            pause_after_episode_s=p("pause_after_episode", 1.0, "Hold the final pose this long [s]"))

        import torch

        torch.set_num_threads(max(1, torch_threads))
        self.deployable = load_deployable(checkpoint)
        self.results = ResultsFile(results_file) if results_file else None
        task = self.deployable.task
        self.stop = stop
        self.context.on_shutdown(stop.set)
        self.goals = (ClickedGoals(clicked_topic) if self.goal_mode == "clicked" else
                      RandomGoals(task, self.deployable.policy, self.deployable.trained.space, seed,
                                  self.deployable.episode_steps))
        self.runner = PolicyRunner(self.deployable, self, MonotonicClock(stop), settings, self.get_logger().info)

        self._lock = threading.Lock()
        self._joints: JointReading | None = None
        self._puck = PuckTrack()
        self._compliant: bool | None = None
        self._compliance_known_after = 0  # [ns] of the node's clock, like the driver's diagnostics stamps
        self._driver_bus_status = f"{driver}: bus"
        self._stop_reason: str | None = None

        self.create_subscription(JointState, "joint_states", self._on_joint_states, QoSProfile(depth=10))
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, QoSProfile(depth=10))
        if self.goal_mode == "clicked":
            self.create_subscription(PointStamped, clicked_topic, self._on_clicked_point, QoSProfile(depth=10))
        if task.needs_puck:
            self.create_subscription(PointStamped, "puck", self._on_puck, QoSProfile(depth=10))
        self._commands = self.create_publisher(Float64MultiArray, f"{driver}/commands", QoSProfile(depth=1))
        self._summaries = self.create_publisher(String, "~/episode_summary", LATCHED)
        self._goal = self.create_publisher(PointStamped, "~/goal", QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", QoSProfile(depth=10))
        self._set_compliant = self.create_client(SetBool, f"{driver}/set_compliant")
        self._go_to_rest = self.create_client(Trigger, f"{driver}/go_to_rest")
        self.create_timer(1.0, self._publish_diagnostics)

        trained = self.deployable.trained
        self.get_logger().info(
            f"{task.env_id} policy from {trained.path} (iteration {trained.iteration}, {trained.agent_steps} agent "
            f"steps): {self.deployable.episode_steps}-step episodes at {task.control_rate_hz:.1f} Hz, success below "
            f"{task.solved_distance:g} m; goals: {self.goal_mode}; episodes: {self.episodes or 'until Ctrl-C'}")

    # ArmLink (called from the worker thread) ---------------------------------------------------------------------
    def latest_joints(self) -> JointReading | None:
        with self._lock:
            return self._joints

    def latest_puck(self) -> PuckReading | None:
        with self._lock:
            return self._puck.latest

    def send(self, positions: Sequence[float]) -> None:
        if self.context.ok():  # Ctrl-C may shut rclpy down while the worker is between two checks
            self._commands.publish(Float64MultiArray(data=[float(v) for v in positions]))

    def compliant(self) -> bool | None:
        with self._lock:
            return self._compliant

    def stiffen(self) -> None:
        reply = self._call(self._set_compliant, SetBool.Request(data=False))
        if not reply.success:
            raise ArmNotReady(f"the driver refused: {reply.message}")
        with self._lock:  # reports stamped before this answer came describe the arm before it stiffened
            self._compliant, self._compliance_known_after = False, self.get_clock().now().nanoseconds
        self.get_logger().info(f"arm stiff: {reply.message}")

    def go_to_rest(self) -> None:
        reply = self._call(self._go_to_rest, Trigger.Request())
        (self.get_logger().info if reply.success else self.get_logger().warning)(f"go_to_rest: {reply.message}")

    def _call(self, client, request):
        deadline = time.monotonic() + SERVICE_TIMEOUT_S
        while not client.service_is_ready():
            if time.monotonic() > deadline:
                raise ArmNotReady(f"service {client.srv_name} is not available (is the driver running?)")
            MonotonicClock(self.stop).sleep_until(time.monotonic() + 0.05)
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        while not done.wait(0.05):
            if self.stop.is_set():
                raise Stopped()
            if time.monotonic() > deadline:
                raise ArmNotReady(f"no answer from {client.srv_name} within {SERVICE_TIMEOUT_S:g} s")
        return future.result()

    # the worker --------------------------------------------------------------------------------------------------
    def work(self) -> int:
        """Run the episodes; the process's exit status."""
        try:
            self.runner.run_episodes(self.goals, self.episodes, self._on_goal, self._on_summary)
            if self.rest_when_done:
                try:
                    self.go_to_rest()
                except ArmNotReady as reason:
                    self.get_logger().warning(f"go_to_rest: {reason}")
            self._log_totals()
            # the process ends next: let every subscriber acknowledge the summaries first (reliable QoS)
            if not self._summaries.wait_for_all_acked(Duration(seconds=SUMMARY_ACK_TIMEOUT_S)):
                self.get_logger().warning("episode summaries not acknowledged by every subscriber")
            return 0
        except Stopped:
            return 0
        except DeployError as error:
            self._stop_reason = str(error)
            self.get_logger().error(f"stopping: {error}")
            return 1
        except Exception:
            if self.stop.is_set() or not self.context.ok():
                return 0  # rclpy shut down under the worker (Ctrl-C)
            raise
        finally:
            self.stop.set()

    def _on_goal(self, index: int, goal: Goal) -> None:
        msg = PointStamped()
        msg.header.stamp, msg.header.frame_id = self.get_clock().now().to_msg(), self.world_frame
        msg.point.x, msg.point.y, msg.point.z = goal.world
        self._goal.publish(msg)
        where = ", ".join(f"{v:.3f}" for v in goal.world)
        extra = f", {goal.off_plane_m:.3f} m off the goal plane" if goal.source == "clicked" else ""
        if goal.puck_start is not None:
            extra += f"; the env would start the puck at ({goal.puck_start[0]:.3f}, {goal.puck_start[1]:.3f})"
        self.get_logger().info(f"episode {index + 1}: {goal.source} goal ({where}) m in {self.world_frame}{extra}")

    def _on_summary(self, summary: EpisodeSummary) -> None:
        self._summaries.publish(String(data=summary.to_json()))
        if self.results is not None:
            try:
                self.results.append(summary)
            except OSError as error:
                self.get_logger().error(f"episode {summary.episode} not written to {self.results.path}: {error}")

    def _log_totals(self) -> None:
        done = [s for s in self.runner.summaries if s.aborted is None]
        if done:
            successes = sum(s.success for s in done)
            mean = sum(s.final_distance for s in done) / len(done)
            self.get_logger().info(f"{len(done)} complete episode(s): {successes} success(es), mean final distance {mean:.4f} m")

    # ROS callbacks ----------------------------------------------------------------------------------------------
    def _on_joint_states(self, msg: JointState) -> None:
        try:
            reading = JointReading.from_message(msg.name, msg.position, msg.velocity, time.monotonic())
        except DeployError as error:
            self.get_logger().warning(f"ignored joint_states: {error}", throttle_duration_sec=5.0)
            return
        with self._lock:
            self._joints = reading

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        stamp = Time.from_msg(msg.header.stamp).nanoseconds
        for status in msg.status:
            if status.name != self._driver_bus_status:
                continue
            compliant = {kv.key: kv.value for kv in status.values}.get("compliant")
            with self._lock:
                if stamp < self._compliance_known_after:
                    return
                if status.level != DiagnosticStatus.OK:
                    self._compliant = None  # bus down: unknown
                elif compliant is not None:
                    self._compliant = compliant == "True"

    def _on_clicked_point(self, msg: PointStamped) -> None:
        try:
            goal = goal_from_point(self.deployable.task, (msg.point.x, msg.point.y, msg.point.z),
                                   msg.header.frame_id, self.world_frame, self.base_frame)
        except DeployError as error:
            self.get_logger().warning(f"ignored clicked point: {error}")
            return
        self.goals.offer(goal)
        self.get_logger().info(f"goal received: ({', '.join(f'{v:.3f}' for v in goal.world)}) m")

    def _on_puck(self, msg: PointStamped) -> None:
        try:
            goal = goal_from_point(self.deployable.task, (msg.point.x, msg.point.y, msg.point.z),
                                   msg.header.frame_id, self.world_frame, self.base_frame)
        except DeployError as error:
            self.get_logger().warning(f"ignored puck position: {error}", throttle_duration_sec=5.0)
            return
        now = time.monotonic()
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            self._puck.update(goal.world[0], goal.world[1], stamp or now, now)

    def _publish_diagnostics(self) -> None:
        done = [s for s in self.runner.summaries if s.aborted is None]
        last = self.runner.summaries[-1] if self.runner.summaries else None
        level = DiagnosticStatus.ERROR if self._stop_reason else DiagnosticStatus.OK
        values = {
            "state": self.runner.state, "env": self.deployable.task.env_id,
            "checkpoint": str(self.deployable.trained.path), "goal mode": self.goal_mode,
            "episodes done": str(len(self.runner.summaries)), "aborted episodes": str(len(self.runner.summaries) - len(done)),
            "successes": str(sum(s.success for s in done)),
            "last final distance [m]": f"{last.final_distance:.4f}" if last and last.final_distance is not None else "",
            "last control rate [Hz]": f"{last.control_rate_hz:.1f}" if last else "",
        }
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: episodes",
                                  message=self._stop_reason or self.runner.state, hardware_id=self.deployable.task.env_id)
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status.append(status)
        self._diagnostics.publish(msg)

    def _declare(self, name: str, default, description: str):
        return self.declare_parameter(name, default, ParameterDescriptor(description=description,
                                                                         read_only=True)).value

    def shutdown(self) -> None:
        self.stop.set()
        self.runner.close()
        if isinstance(self.goals, RandomGoals):
            self.goals.close()


def main(args: list[str] | None = None) -> int:
    rclpy.init(args=args if args is not None else sys.argv)
    stop = threading.Event()
    node: PolicyRunnerNode | None = None
    worker: threading.Thread | None = None
    outcome: list[int] = []
    status = 0
    try:
        node = PolicyRunnerNode(stop)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        runner_node = node
        worker = threading.Thread(target=lambda: outcome.append(runner_node.work()), name="policy-runner")
        worker.start()
        while rclpy.ok() and worker.is_alive():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass  # the driver's watchdog holds the arm once the commands stop
    except (DeployError, ParameterException) as error:
        rclpy.logging.get_logger("policy_runner").fatal(f"cannot start: {error}")
        status = 2
    finally:
        stop.set()
        if worker is not None:
            worker.join()
        if node is not None:
            node.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()
    if status == 0 and worker is not None:
        status = outcome[0] if outcome else 1  # no outcome: the worker died of a bug (its traceback is above)
    return status


if __name__ == "__main__":
    sys.exit(main())
