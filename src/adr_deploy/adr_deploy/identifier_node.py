"""arm_identifier node: plays adr_core.identify's excitation on the arm through poppy_driver and logs what it did.

The deploy graph's link to the driver (``DriverLink``: the signed interface with the deployment's key, or the std one)
carries it: wait for the joints, stiffen the arm, stream the start pose (every joint at 0) until it is reached, hold
it ``settle`` s (the pushing rig's tracker frames of the puck at rest are logged then), play the excitation on the
control period's grid, hold, go to rest, and write ``identify_log.csv`` / ``identify_log.json`` into ``log_dir``
(adr_core.identify.log). Commands are logged at their send time and readings at the driver's read stamp, both on
the node's clock, relative to the first command. Exit 0 once the log is written; 1 when the arm cannot be driven.
"""
from __future__ import annotations

import sys
import threading

import rclpy
import rclpy.logging
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from adr_core.envs.ergo_jr import JOINT_NAMES
from adr_core.identify.excitation import CONTROL_PERIOD_S, excitation
from adr_core.identify.log import write_log
from adr_ros.signing import KeyError_, RunSigning

from .driver_link import DEPLOY_RUN_ID, DriverLink
from .policy_runner.errors import ArmNotReady, DeployError, Stopped
from .policy_runner.pacing import MonotonicClock, Pacer
from .policy_runner.readings import JointReading
from .policy_runner.task import START_TOLERANCE_RAD, task_for

POLL_S = 0.05


class ArmIdentifierNode(Node):
    def __init__(self, stop: threading.Event) -> None:
        super().__init__("arm_identifier")
        p = self._declare
        env_id = p("env_id", "adr/ErgoPusher-v0", "The env whose actuated joints are excited (an Ergo task)")
        self.log_dir = p("log_dir", "", "Folder the log is written to (required)")
        repeats = p("repeats", 2, "Times the whole excitation is played (the fit's repeats)")
        driver = p("driver", "poppy_driver", "Node name of the driver")
        key_file = p("key_file", "", "The deployment's key ('': the driver's unsigned std interface)")
        self.max_speed = p("max_speed", 0.0, "The driver's moving speed while the log is taken [rad/s] (written to "
                                              "the log; 0: unknown)")
        self.settle_s = p("settle", 2.0, "Hold at the start pose before the excitation [s]")
        self.start_timeout_s = p("start_timeout", 15.0, "Give up reaching the joints / the start pose after [s]")
        frames = (p("world_frame", "world", "The simulators' world frame"),
                  p("base_frame", "base_link", "The URDF's root link"))
        if not self.log_dir:
            raise DeployError("log_dir is required: the folder the identification log is written to")
        if not 1 <= repeats <= 10:
            raise DeployError(f"repeats={repeats}: expected 1-10")
        self.task = task_for(env_id)
        self.excitation = excitation(self.task.actuated, repeats)
        signing = None
        if key_file:
            try:
                signing = RunSigning.from_file(key_file, DEPLOY_RUN_ID, self.get_fully_qualified_name(),
                                               self.get_logger().warning)
            except KeyError_ as error:
                raise DeployError(str(error)) from None
        self.stop = stop
        self.context.on_shutdown(stop.set)
        self.clock = MonotonicClock(stop)
        self._lock = threading.Lock()
        self._states: list[tuple[float, list[float]]] = []
        self._pucks: list[tuple[float, float, float, float]] = []
        self._recording = self._puck_recording = False
        self.arm = DriverLink(self, self.task, driver, frames, stop, signing, recorder=self)
        self.get_logger().info(f"{env_id}: exciting {', '.join(self.task.actuated)}, {repeats} repeat(s), "
                               f"{self.excitation.times[-1] + CONTROL_PERIOD_S:.1f} s; log in {self.log_dir}")

    # DriverLink's recorder ----------------------------------------------------------------------------------------
    def state(self, stamp_s: float, reading: JointReading) -> None:
        if self._recording and not reading.missing(JOINT_NAMES):
            with self._lock:
                self._states.append((stamp_s, [reading.positions[name] for name in JOINT_NAMES]))

    def puck(self, received_s: float, captured_s: float, x: float, y: float) -> None:
        if self._puck_recording:
            with self._lock:
                self._pucks.append((received_s, captured_s, x, y))

    # the worker ---------------------------------------------------------------------------------------------------
    def work(self) -> int:
        try:
            self._wait_for_joints()
            self._stiffen()
            zeros = [0.0] * len(JOINT_NAMES)
            self._reach(zeros)
            self._puck_recording = self.task.needs_puck
            self._hold(zeros, self.settle_s)
            self._puck_recording = False
            command_t, commands = self._play()
            self._hold(zeros, 0.5)
            self._recording = False
            try:
                self.arm.go_to_rest()
            except ArmNotReady as reason:
                self.get_logger().warning(f"go_to_rest: {reason}")
            with self._lock:
                start = command_t[0]
                states = [(t - start, values) for t, values in self._states]
                pucks = [(r - start, c - start, x, y) for r, c, x, y in self._pucks]
            path = write_log(self.log_dir, self.task.env_id, [t - start for t in command_t], commands,
                             [t for t, _ in states], [v for _, v in states], self.excitation.segments,
                             self.max_speed or None, pucks or None)
            self.get_logger().info(f"identification log written: {path} ({len(commands)} commands, {len(states)} "
                                   f"readings, {len(pucks)} puck frames)")
            return 0
        except Stopped:
            return 1
        except DeployError as error:
            self.get_logger().error(f"stopping: {error}")
            return 1
        finally:
            self.stop.set()

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _wait_for_joints(self) -> None:
        deadline = self.clock.now() + self.start_timeout_s
        while (joints := self.arm.latest_joints()) is None or joints.missing(JOINT_NAMES):
            if self.clock.now() > deadline:
                raise DeployError(f"no joint_states with all six joints within {self.start_timeout_s:g} s (is the "
                                  "driver connected to the arm?)")
            self.clock.sleep_until(self.clock.now() + POLL_S)

    def _stiffen(self) -> None:
        deadline = self.clock.now() + self.start_timeout_s
        while True:
            try:
                self.arm.stiffen()
                return
            except ArmNotReady as reason:
                if self.clock.now() > deadline:
                    raise DeployError(f"the arm could not be stiffened: {reason}") from None
                self.clock.sleep_until(self.clock.now() + 0.5)

    def _reach(self, targets: list[float]) -> None:
        pacer, deadline = Pacer(self.clock, CONTROL_PERIOD_S), self.clock.now() + self.start_timeout_s
        while True:
            self.arm.send(targets)
            joints = self.arm.latest_joints()
            if joints is not None and max(abs(joints.positions[n] - t) for n, t in zip(JOINT_NAMES, targets)) \
                    <= START_TOLERANCE_RAD:
                return
            if self.clock.now() > deadline:
                self.get_logger().warning(f"the start pose was not reached within {self.start_timeout_s:g} s; "
                                          "exciting from where the arm is")
                return
            pacer.wait()

    def _hold(self, targets: list[float], seconds: float) -> None:
        pacer = Pacer(self.clock, CONTROL_PERIOD_S)
        end = self.clock.now() + seconds
        while self.clock.now() < end:
            self.arm.send(targets)
            pacer.wait()

    def _play(self) -> tuple[list[float], list[list[float]]]:
        """The excitation on the control grid; (send times on the node's clock, the targets sent)."""
        self._recording = True
        pacer = Pacer(self.clock, CONTROL_PERIOD_S)
        times, sent = [], []
        for targets in self.excitation.targets:
            values = [float(v) for v in targets]
            self.arm.send(values)
            times.append(self._now())
            sent.append(values)
            pacer.wait()
        if pacer.skipped:
            self.get_logger().warning(f"{pacer.skipped} control period(s) skipped (a busy machine): the log keeps "
                                      "the commands' true send times")
        return times, sent

    def _declare(self, name: str, default, description: str):
        descriptor = ParameterDescriptor(description=description, read_only=True)
        return self.declare_parameter(name, default, descriptor).value


def main(args: list[str] | None = None) -> int:
    rclpy.init(args=args if args is not None else sys.argv)
    stop = threading.Event()
    node: ArmIdentifierNode | None = None
    worker: threading.Thread | None = None
    outcome: list[int] = []
    status = 0
    try:
        node = ArmIdentifierNode(stop)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        identifier = node
        worker = threading.Thread(target=lambda: outcome.append(identifier.work()), name="arm-identifier")
        worker.start()
        while rclpy.ok() and worker.is_alive():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        status = 1
    except DeployError as error:
        rclpy.logging.get_logger("arm_identifier").fatal(f"cannot start: {error}")
        status = 2
    finally:
        stop.set()
        if worker is not None:
            worker.join()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    if status == 0 and worker is not None:
        status = outcome[0] if outcome else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
