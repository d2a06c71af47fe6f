"""The poppy_driver node as the policy runner's ``ArmLink``: joint_states, /diagnostics, commands and services.

With the deployment's key (``signing``) the link uses the driver's signed interface instead
(poppy_driver/signed_interface.py): ``<driver>/signed/arm_state`` in place of joint_states and /diagnostics, signed
commands and service calls, and the puck tracker's ``signed/puck`` / ``signed/puck_start``; whatever is not signed
with the key is dropped before it is read, and an answer not signed with it counts as a refusal.

ROS callbacks (the executor thread) only store readings; the runner's worker thread reads them, publishes commands
and calls the services, waiting on the futures the executor completes.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Protocol

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PointStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from adr_interfaces.msg import ArmCommand, ArmState, SignedPoint
from adr_interfaces.srv import ArmTrigger, SetCompliant
from adr_ros.signing import RunSigning

from .policy_runner.errors import ArmNotReady, DeployError, Stopped
from .policy_runner.goals import goal_from_point
from .policy_runner.readings import JointReading, PuckReading, PuckTrack
from .policy_runner.task import DeployTask

DEPLOY_RUN_ID = ""  # as the driver's (poppy_driver.signed_interface): a deployment's key alone tells it apart
SERVICE_TIMEOUT_S = 10.0
POLL_S = 0.05


class Recorder(Protocol):
    """Gets every accepted reading with its stamps on the node's (ROS) clock, in seconds (``adr-identify``'s log)."""

    def state(self, stamp_s: float, reading: JointReading) -> None: ...

    def puck(self, received_s: float, captured_s: float, x: float, y: float) -> None: ...


class DriverLink:
    def __init__(self, node: Node, task: DeployTask, driver: str, frames: tuple[str, str],
                 stop: threading.Event, signing: RunSigning | None = None, recorder: Recorder | None = None) -> None:
        self._node, self._task, self._frames, self._stop, self._signing = node, task, frames, stop, signing
        self._recorder = recorder
        self._lock = threading.Lock()
        self._joints: JointReading | None = None
        self._puck = PuckTrack()
        self._compliant: bool | None = None
        self._compliance_known_after = 0  # [ns] of the node's clock, like the driver's diagnostics stamps
        self._bus_status_name = f"{driver}: bus"
        depth = QoSProfile(depth=10)
        if signing is None:
            node.create_subscription(JointState, "joint_states", self._on_joint_states, depth)
            node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, depth)
            self._commands = node.create_publisher(Float64MultiArray, f"{driver}/commands", QoSProfile(depth=1))
            self._set_compliant = node.create_client(SetBool, f"{driver}/set_compliant")
            self._go_to_rest = node.create_client(Trigger, f"{driver}/go_to_rest")
        else:
            node.create_subscription(ArmState, f"{driver}/signed/arm_state", self._on_arm_state, depth)
            self._commands = node.create_publisher(ArmCommand, f"{driver}/signed/commands", QoSProfile(depth=1))
            self._set_compliant = node.create_client(SetCompliant, f"{driver}/signed/set_compliant")
            self._go_to_rest = node.create_client(ArmTrigger, f"{driver}/signed/go_to_rest")
        self.puck_topic = "puck" if signing is None else "signed/puck"
        if task.needs_puck:
            if signing is None:
                node.create_subscription(PointStamped, "puck", self._on_puck, depth)
                self._puck_start = node.create_publisher(PointStamped, "puck_start", QoSProfile(depth=1))
            else:
                node.create_subscription(SignedPoint, "signed/puck", self._on_signed_puck, depth)
                self._puck_start = node.create_publisher(SignedPoint, "signed/puck_start", QoSProfile(depth=1))

    # ArmLink ---------------------------------------------------------------------------------------------------
    def latest_joints(self) -> JointReading | None:
        with self._lock:
            return self._joints

    def latest_puck(self) -> PuckReading | None:
        with self._lock:
            return self._puck.latest

    def puck_tracker_present(self) -> bool:
        return self._node.count_publishers(self.puck_topic) > 0

    def request_puck_start(self, position: tuple[float, float]) -> None:
        message = PointStamped()
        message.header.frame_id = self._frames[0]  # the world frame: the puck's coordinates are the env's
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.point.x, message.point.y = float(position[0]), float(position[1])
        if self._node.context.ok():
            self._puck_start.publish(message if self._signing is None
                                     else self._signing.sign(SignedPoint(point=message)))

    def send(self, positions: Sequence[float]) -> None:
        if self._node.context.ok():  # Ctrl-C may shut rclpy down while the worker is between two checks
            values = [float(v) for v in positions]
            if self._signing is None:
                self._commands.publish(Float64MultiArray(data=values))
            else:
                command = ArmCommand(positions=values)
                command.header.stamp = self._node.get_clock().now().to_msg()
                self._commands.publish(self._signing.sign(command))

    def compliant(self) -> bool | None:
        with self._lock:
            return self._compliant

    def stiffen(self) -> None:
        request = SetBool.Request(data=False) if self._signing is None else SetCompliant.Request(compliant=False)
        reply = self._call(self._set_compliant, request)
        if not reply.success:
            raise ArmNotReady(f"the driver refused: {reply.message}")
        with self._lock:  # reports stamped before this answer describe the arm before it stiffened
            self._compliant, self._compliance_known_after = False, self._node.get_clock().now().nanoseconds
        self._node.get_logger().info(f"arm stiff: {reply.message}")

    def go_to_rest(self) -> None:
        reply = self._call(self._go_to_rest, Trigger.Request() if self._signing is None else ArmTrigger.Request())
        if not reply.success:
            raise ArmNotReady(f"the driver refused: {reply.message}")
        self._node.get_logger().info(f"go_to_rest: {reply.message}")

    def _call(self, client, request):
        deadline = time.monotonic() + SERVICE_TIMEOUT_S
        while not client.service_is_ready():
            if time.monotonic() > deadline:
                raise ArmNotReady(f"service {client.srv_name} is not available (is the driver running?)")
            if self._stop.wait(POLL_S):
                raise Stopped()
        done = threading.Event()
        future = client.call_async(request if self._signing is None else self._signing.sign(request))
        future.add_done_callback(lambda _: done.set())
        while not done.wait(POLL_S):
            if self._stop.is_set():
                raise Stopped()
            if time.monotonic() > deadline:
                raise ArmNotReady(f"no answer from {client.srv_name} within {SERVICE_TIMEOUT_S:g} s")
        reply = future.result()
        if self._signing is not None and not self._signing.accept(reply, client.srv_name):
            raise ArmNotReady(f"the answer of {client.srv_name} is not signed with the deployment's key")
        return reply

    # ROS callbacks ---------------------------------------------------------------------------------------------
    def _on_joint_states(self, msg: JointState) -> None:
        try:
            reading = JointReading.from_message(msg.name, msg.position, msg.velocity, time.monotonic())
        except DeployError as error:
            self._node.get_logger().warning(f"ignored joint_states: {error}", throttle_duration_sec=5.0)
            return
        with self._lock:
            self._joints = reading
        if self._recorder is not None:
            self._recorder.state(Time.from_msg(msg.header.stamp).nanoseconds * 1e-9, reading)

    def _on_arm_state(self, msg: ArmState) -> None:
        assert self._signing is not None
        if not self._signing.accept(msg, "arm_state"):
            return
        self._on_joint_states(msg.joints)
        stamp = Time.from_msg(msg.joints.header.stamp).nanoseconds
        with self._lock:
            if stamp >= self._compliance_known_after:
                self._compliant = bool(msg.compliant) if msg.bus_ok else None  # bus down: unknown

    def _on_signed_puck(self, msg: SignedPoint) -> None:
        assert self._signing is not None
        if self._signing.accept(msg, "puck"):
            self._on_puck(msg.point)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        stamp = Time.from_msg(msg.header.stamp).nanoseconds
        for status in msg.status:
            if status.name != self._bus_status_name:
                continue
            compliant = {kv.key: kv.value for kv in status.values}.get("compliant")
            with self._lock:
                if stamp < self._compliance_known_after:
                    return
                if status.level != DiagnosticStatus.OK:
                    self._compliant = None  # bus down: unknown
                elif compliant is not None:
                    self._compliant = compliant == "True"

    def _on_puck(self, msg: PointStamped) -> None:
        try:  # the same frames as goals; the puck lies on the table
            position = goal_from_point(self._task, (msg.point.x, msg.point.y, msg.point.z), msg.header.frame_id,
                                       *self._frames).world
        except DeployError as error:
            self._node.get_logger().warning(f"ignored puck position: {error}", throttle_duration_sec=5.0)
            return
        now = time.monotonic()
        stamp = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        with self._lock:
            self._puck.update(position[0], position[1], stamp or now, now)
        if self._recorder is not None:
            self._recorder.puck(self._node.get_clock().now().nanoseconds * 1e-9, stamp, position[0], position[1])
