"""policy_runner node: a trained ErgoReacher / ErgoPusher policy on the Poppy Ergo Jr, through poppy_driver.

Topics:   joint_states (in), <driver>/commands (std_msgs/Float64MultiArray, out, at the simulator's control rate),
          /clicked_point (geometry_msgs/PointStamped, in: goals in goal_mode clicked), puck (PointStamped, in:
          ErgoPusher only), ~/goal (PointStamped, out: the goal as used), ~/episode_summary (std_msgs/String, out:
          one JSON object per episode), /diagnostics (in: the driver's compliance; out: the runner's state).
Services used: <driver>/set_compliant, <driver>/go_to_rest.
The episodes run in a worker thread (plain logic in adr_deploy.policy_runner); see docs/deploy_real.md.
"""
from __future__ import annotations

import sys
import threading

import rclpy
import rclpy.logging
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.duration import Duration
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from adr_ros.signing import KeyError_, RunSigning

from .driver_link import DEPLOY_RUN_ID, DriverLink
from .messages import goal_point, runner_diagnostics
from .policy_runner.episodes import PolicyRunner, RunnerSettings
from .policy_runner.errors import ArmNotReady, DeployError, Stopped
from .policy_runner.goals import ClickedGoals, Goal, RandomGoals, goal_from_point
from .policy_runner.loading import load_deployable
from .policy_runner.pacing import MonotonicClock
from .policy_runner.results_file import ResultsFile, steps_file_beside
from .policy_runner.step_log import StepLog
from .policy_runner.summary import EpisodeSummary
from .policy_runner.task import START_TOLERANCE_RAD

GOAL_MODES = ("random", "clicked")
SUMMARY_ACK_TIMEOUT_S = 2.0
SUMMARIES_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
GOAL_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


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
        key_file = p("key_file", "", "The deployment's key (adr_ros.signing): talk to the driver's signed interface "
                                     "and the puck tracker's signed topics, dropping what is not signed with it; "
                                     "empty: the driver's unsigned std interface")
        self.rest_when_done = p("rest_when_done", True, "Call the driver's go_to_rest after the last episode")
        torch_threads = p("torch_threads", 1, "Torch CPU threads for a checkpoint policy (ONNX exports need no torch)")
        results_file = p("results_file", "", "Append each episode summary (JSON) to this file ('': none)")
        steps_file = p("steps_file", "", "Append every step of every episode (CSV: observation, action, goal, "
                                         "distance; with the simulator's episode at the same goal) to this file "
                                         "('': <results_file without .jsonl>_steps.csv, or none without results_file)")
        settings = RunnerSettings(
            start_tolerance_rad=p("start_tolerance", START_TOLERANCE_RAD,
                                  "Start pose reached when every joint is this close [rad]"),
            start_timeout_s=p("start_timeout", 10.0, "Give up waiting for the start pose after this long [s]"),
            feedback_timeout_s=p("feedback_timeout", 0.25, "Feedback older than this aborts an episode [s]"),
            pause_after_episode_s=p("pause_after_episode", 1.0, "Hold the final pose this long [s]"),
            puck_timeout_s=p("puck_timeout", 5.0, "ErgoPusher: refuse when no puck position came this long after "
                                                  "the first joint_states [s]"),
            puck_start_tolerance_m=p("puck_start_tolerance", 0.01, "ErgoPusher: the puck is at its start this "
                                                                  "close [m]"),
            puck_rest_speed_m_s=p("puck_rest_speed", 0.2, "ErgoPusher: ... and at rest this slow (the tracker's "
                                                          "velocity) [m/s]"))

        self.deployable = load_deployable(checkpoint)
        if self.deployable.kind != "onnx":  # only then is torch loaded at all
            import torch

            torch.set_num_threads(max(1, torch_threads))
        self.results = ResultsFile(results_file) if results_file else None
        task = self.deployable.task
        if not steps_file and self.results is not None:
            steps_file = str(steps_file_beside(self.results.path))
        step_log = StepLog(steps_file, task.obs_dim, task.act_dim, task.joint_names) if steps_file else None
        self.stop = stop
        self.context.on_shutdown(stop.set)
        self.goals = (ClickedGoals(clicked_topic) if self.goal_mode == "clicked" else
                      RandomGoals(task, self.deployable.policy, self.deployable.space, seed,
                                  self.deployable.episode_steps))
        signing = None
        if key_file:
            try:
                signing = RunSigning.from_file(key_file, DEPLOY_RUN_ID, self.get_fully_qualified_name(),
                                               self.get_logger().warning)
            except KeyError_ as error:
                raise DeployError(str(error)) from None
        self.arm = DriverLink(self, task, driver, (self.world_frame, self.base_frame), stop, signing)
        self.runner = PolicyRunner(self.deployable, self.arm, MonotonicClock(stop), settings, self.get_logger().info,
                                   step_log)
        self._error: str | None = None

        if self.goal_mode == "clicked":
            self.create_subscription(PointStamped, clicked_topic, self._on_clicked_point, QoSProfile(depth=10))
        self._summaries = self.create_publisher(String, "~/episode_summary", SUMMARIES_QOS)
        self._goal = self.create_publisher(PointStamped, "~/goal", GOAL_QOS)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", QoSProfile(depth=10))
        self.create_timer(1.0, self._publish_diagnostics)

        self.get_logger().info(
            f"{task.env_id} policy: {self.deployable.description}: {self.deployable.episode_steps}-step episodes at "
            f"{task.control_rate_hz:.1f} Hz, success below {task.solved_distance:g} m; goals: {self.goal_mode}; "
            f"episodes: {self.episodes or 'until Ctrl-C'}")

    # the worker --------------------------------------------------------------------------------------------------
    def work(self) -> int:
        """Run the episodes; the process's exit status."""
        try:
            self.runner.run_episodes(self.goals, self.episodes, self._on_goal, self._on_summary)
            if self.rest_when_done:
                try:
                    self.arm.go_to_rest()
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
            self._error = str(error)
            self.get_logger().error(f"stopping: {error}")
            return 1
        except Exception:
            if self.stop.is_set() or not self.context.ok():
                return 0  # rclpy shut down under the worker (Ctrl-C)
            raise
        finally:
            self.stop.set()

    def _on_goal(self, index: int, goal: Goal) -> None:
        self._goal.publish(goal_point(goal.world, self.world_frame, self.get_clock().now().to_msg()))
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
        complete = [s for s in self.runner.summaries if s.aborted is None]
        if complete:
            successes = sum(s.success for s in complete)
            mean = sum(s.final_distance or 0.0 for s in complete) / len(complete)  # complete: all measured
            self.get_logger().info(f"{len(complete)} complete episode(s): {successes} success(es), mean final "
                                   f"distance {mean:.4f} m")

    # ROS callbacks ----------------------------------------------------------------------------------------------
    def _on_clicked_point(self, msg: PointStamped) -> None:
        try:
            goal = goal_from_point(self.deployable.task, (msg.point.x, msg.point.y, msg.point.z),
                                   msg.header.frame_id, self.world_frame, self.base_frame)
        except DeployError as error:
            self.get_logger().warning(f"ignored clicked point: {error}")
            return
        assert isinstance(self.goals, ClickedGoals)  # the clicked-point subscription exists in goal_mode clicked only
        self.goals.offer(goal)
        self.get_logger().info(f"goal received: ({', '.join(f'{v:.3f}' for v in goal.world)}) m")

    def _publish_diagnostics(self) -> None:
        self._diagnostics.publish(runner_diagnostics(
            f"{self.get_name()}: episodes", self.runner.state, self._error, self.deployable.task.env_id,
            str(self.deployable.path), self.goal_mode, list(self.runner.summaries),
            self.get_clock().now().to_msg()))

    def _declare(self, name: str, default, description: str):
        descriptor = ParameterDescriptor(description=description, read_only=True)
        return self.declare_parameter(name, default, descriptor).value

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
