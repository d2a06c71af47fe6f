"""The poppy_driver node as a real process over Fast DDS, driving the emulated XL-320 bus through real pypot.

The emulator runs in this test process (a thread behind a pty); a small rclpy node here publishes commands,
calls services and parameters, and reads /joint_states and /diagnostics the way a policy runner or rqt would.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from poppy_standin.xl320 import A_MOVING_SPEED, A_TORQUE_LIMIT, OVERLOAD, Xl320Emulator, degrees_to_units
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from adr_interfaces.msg import ArmCommand, ArmState
from adr_interfaces.srv import SetCompliant
from graph_harness.ros_processes import executable, running
from graph_harness.signing import key_parameter, run_key, signer

pytestmark = pytest.mark.integration

WAIT_S = 15.0  # for each state the driver must reach (5 s ran out on 2 cores with four other busy processes)
START_DEG = {1: 10.0, 2: -20.0, 3: 30.0, 4: -40.0, 5: 15.0, 6: -5.0}  # motor frame
DIRECTIONS = {1: 1, 2: -1, 3: -1, 4: 1, 5: -1, 6: -1}  # the Ergo Jr config: direct/indirect
OK, ERROR = DiagnosticStatus.OK, DiagnosticStatus.ERROR


def goal_units_for(motor_id: int, joint_rad: float) -> int:
    return degrees_to_units(DIRECTIONS[motor_id] * math.degrees(joint_rad))


class Probe:
    """The test's side of the graph: what a policy runner, an operator and rqt_robot_monitor would do."""

    def __init__(self, domain_id: int) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node("poppy_driver_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.joint_states: list[JointState] = []
        self.diagnostics: dict[str, DiagnosticStatus] = {}
        self.node.create_subscription(JointState, "/joint_states", self.joint_states.append, 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.commands = self.node.create_publisher(Float64MultiArray, "/poppy_driver/commands", 10)
        self.trajectories = self.node.create_publisher(JointTrajectory, "/poppy_driver/joint_trajectory", 10)
        self.set_compliant_client = self.node.create_client(SetBool, "/poppy_driver/set_compliant")
        self.reboot_client = self.node.create_client(Trigger, "/poppy_driver/reboot")
        self.parameters = AsyncParameterClient(self.node, "poppy_driver")
        self.streaming: list[float] | None = None  # re-published every 50 ms while waiting, like a runner
        self._last_stream = 0.0

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            self.diagnostics[status.name] = status

    def wait_for(self, condition: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)
            if self.streaming is not None and time.monotonic() - self._last_stream > 0.05:
                self.publish(self.streaming)
                self._last_stream = time.monotonic()
            result = condition()
            if result:
                return result
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")

    def settle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        self.wait_for(lambda: time.monotonic() >= end, seconds + 1.0, "time to pass")

    def publish(self, values: list[float]) -> None:
        self.commands.publish(Float64MultiArray(data=[float(v) for v in values]))

    def call(self, client, request, timeout: float = 10.0):
        self.wait_for(lambda: client.service_is_ready(), timeout, f"service {client.srv_name}")
        future = client.call_async(request)
        self.wait_for(future.done, timeout, f"answer from {client.srv_name}")
        return future.result()

    def set_parameter(self, name: str, value: float) -> Any:
        self.wait_for(lambda: self.parameters.services_are_ready(), 10.0, "parameter services")
        future = self.parameters.set_parameters([Parameter(name, value=value)])
        self.wait_for(future.done, 10.0, f"setting {name}")
        return future.result().results[0]

    def status(self, name: str) -> DiagnosticStatus | None:
        return self.diagnostics.get(f"poppy_driver: {name}")

    def status_value(self, name: str, key: str) -> str | None:
        status = self.status(name)
        return None if status is None else {kv.key: kv.value for kv in status.values}.get(key)

    def bus_is(self, level: bytes, fragment: str = "") -> bool:
        status = self.status("bus")
        return status is not None and status.level == level and fragment in status.message


@pytest.fixture
def probe(ros_env: dict[str, str]) -> Iterator[Probe]:
    probe = Probe(int(ros_env["ROS_DOMAIN_ID"]))
    yield probe
    probe.close()


def test_driver_over_the_emulated_bus(ros_env: dict[str, str], tmp_path: Path, probe: Probe) -> None:
    port = tmp_path / "ttyPOPPY"  # does not exist yet: the driver must wait for it
    driver = [executable("poppy_driver", "poppy_driver"), "--ros-args", "-p", f"port:={port}",
              "-p", "reconnect_period:=0.2", "-p", "command_timeout:=0.4"]
    log = tmp_path / "driver.log"
    emulator = Xl320Emulator(positions_deg=START_DEG, link=port)
    with running(driver, ros_env, log) as process:
        try:
            # a missing port is an error on /diagnostics, not a crash
            probe.wait_for(lambda: probe.bus_is(ERROR, "cannot open"), 20.0, "bus ERROR for the missing port")
            assert process.poll() is None

            emulator.start()
            probe.wait_for(lambda: probe.bus_is(OK, "compliant"), 10.0, "bus OK once the port appears")
            probe.joint_states.clear()
            state = probe.wait_for(lambda: probe.joint_states and probe.joint_states[-1], WAIT_S, "joint_states")
            assert list(state.name) == ["m1", "m2", "m3", "m4", "m5", "m6"]
            expected = [math.radians(DIRECTIONS[i] * START_DEG[i]) for i in range(1, 7)]
            assert list(state.position) == pytest.approx(expected, abs=math.radians(0.3))  # radians, joint frame
            assert len(state.velocity) == 6 and len(state.effort) == 6
            assert not any(emulator.torque_enabled(i) for i in range(1, 7))  # starts compliant

            # commands on ~/commands are refused while compliant, then reach the goal registers once stiff
            probe.publish([0.0] * 6)
            probe.wait_for(lambda: probe.status_value("bus", "rejected commands") == "1", WAIT_S, "a rejection")
            assert "compliant" in probe.status_value("bus", "last rejection")
            reply = probe.call(probe.set_compliant_client, SetBool.Request(data=False))
            assert reply.success, reply.message
            assert all(emulator.torque_enabled(i) for i in range(1, 7))
            command = [0.2, 0.3, -0.1, 0.4, 0.0, -0.5]
            probe.streaming = command
            probe.wait_for(lambda: all(abs(emulator.goal_units(i) - goal_units_for(i, command[i - 1])) <= 1
                                       for i in range(1, 7)), WAIT_S, "goal registers of the command")
            assert emulator.register(1, A_MOVING_SPEED) == round(math.degrees(1.5) / 0.666)  # max speed 1.5 rad/s
            assert emulator.register(1, A_TORQUE_LIMIT) == round(70.0 * 10.23)
            probe.wait_for(lambda: abs(probe.joint_states[-1].position[5] + 0.5) < 0.01, WAIT_S, "m6 at -0.5 rad")

            # joint limits: clamped, reported
            probe.streaming = [3.0, 0.3, -0.1, 0.4, 0.0, -0.5]
            probe.wait_for(lambda: abs(emulator.goal_units(1) - degrees_to_units(90.0)) <= 1, WAIT_S, "m1 clamped")
            probe.wait_for(lambda: "m1 3.000 rad clamped to 1.571" in (probe.status_value("bus", "last clamp") or ""),
                           WAIT_S, "the clamp on /diagnostics")

            # bad commands: NaN, wrong length, unknown joint -> rejected with a reason, goals unchanged
            probe.streaming = None
            probe.wait_for(lambda: probe.status_value("bus", "watchdog") == "holding", WAIT_S, "hold (stale commands)")
            probe.settle(0.1)
            goals = [emulator.goal_units(i) for i in range(1, 7)]
            probe.publish([0.0, math.nan, 0.0, 0.0, 0.0, 0.0])
            probe.settle(0.1)
            probe.publish([0.0] * 5)
            bad = JointTrajectory(joint_names=["m1", "gripper"],
                                  points=[JointTrajectoryPoint(positions=[0.0, 0.0])])
            probe.trajectories.publish(bad)
            probe.wait_for(lambda: probe.status_value("bus", "rejected commands") == "4", WAIT_S, "3 more rejections")
            assert "unknown joints ['gripper']" in probe.status_value("bus", "last rejection")
            assert [emulator.goal_units(i) for i in range(1, 7)] == pytest.approx(goals, abs=1)

            # a trajectory with named joints: the others keep their goal
            trajectory = JointTrajectory(joint_names=["m4", "m3"])
            for seconds, positions in ((0.2, [0.1, 0.2]), (0.4, [-0.2, 0.3])):
                point = JointTrajectoryPoint(positions=positions)
                point.time_from_start.nanosec = int(seconds * 1e9)
                trajectory.points.append(point)
            probe.trajectories.publish(trajectory)
            probe.wait_for(lambda: abs(emulator.goal_units(4) - goal_units_for(4, -0.2)) <= 1
                           and abs(emulator.goal_units(3) - goal_units_for(3, 0.3)) <= 1, WAIT_S, "trajectory end")
            assert [emulator.goal_units(i) for i in (1, 2, 5, 6)] == pytest.approx(
                [goals[i - 1] for i in (1, 2, 5, 6)], abs=1)

            # run-time limits: out of range refused, in range reaching the registers
            refused = probe.set_parameter("max_speed", 50.0)
            assert not refused.successful and "max_speed" in refused.reason
            assert probe.set_parameter("max_speed", 3.0).successful
            assert probe.set_parameter("torque_limit", 40.0).successful
            probe.streaming = [0.0] * 6
            probe.wait_for(lambda: emulator.register(2, A_MOVING_SPEED) == round(math.degrees(3.0) / 0.666)
                           and emulator.register(2, A_TORQUE_LIMIT) == round(40.0 * 10.23), WAIT_S, "new limits")

            # a motor's overload shows on /diagnostics; reboot clears it
            emulator.inject_hardware_error(3, OVERLOAD)
            probe.wait_for(lambda: (s := probe.status("m3 (id 3)")) is not None and s.level == ERROR
                           and "overload" in s.message, WAIT_S, "m3 overload on /diagnostics")
            probe.streaming = None
            reply = probe.call(probe.reboot_client, Trigger.Request())
            assert reply.success, reply.message
            probe.wait_for(lambda: probe.status("m3 (id 3)").level == OK, WAIT_S, "m3 OK after the reboot")

            # watchdog: stale commands -> hold where the arm is, then compliant
            assert probe.call(probe.set_compliant_client, SetBool.Request(data=False)).success
            assert probe.set_parameter("max_speed", 0.3).successful
            assert probe.set_parameter("compliant_after_timeout", 0.6).successful
            probe.publish([1.2, 0.0, 0.0, 0.0, 0.0, 0.0])
            probe.wait_for(lambda: abs(emulator.goal_units(1) - goal_units_for(1, 1.2)) <= 1, WAIT_S, "far goal")
            probe.wait_for(lambda: probe.status_value("bus", "watchdog") == "holding", WAIT_S, "watchdog hold")
            assert abs(emulator.goal_units(1) - emulator.present_units(1)) <= 3  # stopped short of 1.2 rad
            probe.wait_for(lambda: not any(emulator.torque_enabled(i) for i in range(1, 7)), WAIT_S, "compliance")
            probe.wait_for(lambda: probe.status_value("bus", "watchdog") == "compliant", WAIT_S, "watchdog state")

            # the adapter is unplugged mid-run: ERROR, retries, clean resume
            emulator.unplug()
            probe.wait_for(lambda: probe.bus_is(ERROR, "bus unavailable"), 10.0, "bus ERROR after the unplug")
            assert process.poll() is None
            probe.joint_states.clear()
            probe.settle(0.5)
            assert probe.joint_states == []  # nothing stale is published while the bus is away
            emulator.replug()
            probe.wait_for(lambda: probe.bus_is(OK), 10.0, "bus OK after the replug")
            probe.wait_for(lambda: probe.joint_states, WAIT_S, "joint_states again")
            assert probe.status_value("bus", "connections") == "2"
            assert process.poll() is None
        finally:
            emulator.stop()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert "lost XL-320 bus" in text and "connected: XL-320 bus" in text


def test_dry_run_with_pypots_dummy_simulator(ros_env: dict[str, str], tmp_path: Path, probe: Probe) -> None:
    driver = [executable("poppy_driver", "poppy_driver"), "--ros-args", "-p", "simulator:=dummy",
              "-p", "max_speed:=3.0"]
    with running(driver, ros_env, tmp_path / "driver.log") as process:
        probe.wait_for(lambda: probe.bus_is(OK, "compliant"), 20.0, "the dummy bus")
        assert probe.call(probe.set_compliant_client, SetBool.Request(data=False)).success
        command = [0.3, -0.3, 0.2, 0.0, 0.1, -0.1]
        probe.streaming = command
        probe.wait_for(lambda: probe.joint_states and list(probe.joint_states[-1].position) == pytest.approx(
            command, abs=1e-3), 10.0, "the dummy arm at the command")
        assert process.poll() is None
    assert "Traceback" not in (tmp_path / "driver.log").read_text()


def test_with_the_deployments_key_only_signed_commands_move_the_arm(ros_env: dict[str, str], tmp_path: Path,
                                                                    probe: Probe) -> None:
    """Issue 47: with key_file the driver has no unsigned command interface; a command or service call signed with
    another key, or replayed, is dropped; the arm follows only what is signed with its key; its state comes signed."""
    key, other = run_key(tmp_path / "deploy"), run_key(tmp_path / "other")
    ours, theirs = signer(key, "", "/operator"), signer(other, "", "/operator")
    commands = probe.node.create_publisher(ArmCommand, "/poppy_driver/signed/commands", 10)
    set_compliant = probe.node.create_client(SetCompliant, "/poppy_driver/signed/set_compliant")
    states: list[ArmState] = []
    probe.node.create_subscription(ArmState, "/poppy_driver/signed/arm_state", states.append, 10)
    driver = [executable("poppy_driver", "poppy_driver"), "--ros-args", "-p", "simulator:=dummy",
              "-p", "max_speed:=3.0", *key_parameter(key)]
    log = tmp_path / "driver.log"
    with running(driver, ros_env, log) as process:
        probe.wait_for(lambda: probe.bus_is(OK, "compliant"), 20.0, "the dummy bus")
        served = {name for name, _ in probe.node.get_service_names_and_types_by_node("poppy_driver", "/")}
        assert "/poppy_driver/signed/set_compliant" in served and "/poppy_driver/set_compliant" not in served
        assert probe.node.count_subscribers("/poppy_driver/commands") == 0  # the unsigned interface is off
        forged = probe.call(set_compliant, theirs.sign(SetCompliant.Request(compliant=False)))
        assert not forged.success and "not signed with this driver's key" in forged.message
        request = ours.sign(SetCompliant.Request(compliant=False))
        reply = probe.call(set_compliant, request)
        assert reply.success and ours.accept(reply, "set_compliant")  # the answer is signed too
        assert not probe.call(set_compliant, request).success  # the same request again: a replay
        home = [0.0] * 6
        target = [0.3, -0.3, 0.2, 0.0, 0.1, -0.1]
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:  # another key's commands: the arm stays where it is
            commands.publish(theirs.sign(ArmCommand(positions=target)))
            probe.settle(0.05)
        assert list(probe.joint_states[-1].position) == pytest.approx(home, abs=1e-3)

        def signed_state_at(values: list[float]) -> bool:
            commands.publish(ours.sign(ArmCommand(positions=values)))
            return bool(states) and ours.accept(states[-1], "arm_state") and list(
                states[-1].joints.position) == pytest.approx(values, abs=1e-3) and not states[-1].compliant
        probe.wait_for(lambda: signed_state_at(target), 10.0, "the arm at the signed command, signed state")
        assert process.poll() is None
    text = log.read_text()
    assert "commands signed only" in text and "bad_signature" in text and "replayed" in text, text
    assert "Traceback" not in text
