"""The driver's signed command interface (``key_file`` set): nobody without the deployment's key moves
the arm.

With a key, the driver takes commands only as ``adr_interfaces`` messages signed with it (adr_ros.signing:
HMAC-SHA256, a per-sender sequence against replays) and publishes its state signed, so the policy runner can check
what it acts on:

    ~/signed/commands        adr_interfaces/ArmCommand    in: every joint's target, joint_names order [rad]
    ~/signed/arm_state       adr_interfaces/ArmState      out: joint_states' joints + the bus's state, loop rate
    ~/signed/set_compliant   adr_interfaces/SetCompliant  service
    ~/signed/go_to_rest      adr_interfaces/ArmTrigger    service
    ~/signed/reboot          adr_interfaces/ArmTrigger    service

The unsigned ``~/commands``, ``~/joint_trajectory`` and std_srvs services do not exist then; ``joint_states`` and
``/diagnostics`` are still published for rviz and rqt. Unsigned, wrongly signed or replayed input is dropped before
the arm sees it (a service answers ``success: false``), counted, and the first of each kind logged.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node
from rclpy.qos import QoSProfile

from adr_interfaces.msg import ArmCommand, ArmState
from adr_interfaces.srv import ArmTrigger, SetCompliant
from adr_ros.signing import RunSigning

from .arm import Outcome, PoppyArm
from .commands import Clamp, CommandRejected

DEPLOY_RUN_ID = ""  # a deployment has no run id: its key alone tells it apart


class SignedInterface:
    def __init__(self, node: Node, arm: PoppyArm, signing: RunSigning,
                 report_rejection: Callable[[str, CommandRejected], None],
                 report_clamps: Callable[[list[Clamp]], None], answer: Callable) -> None:
        self._node, self._arm, self._signing = node, arm, signing
        self._report_rejection, self._report_clamps, self._answer = report_rejection, report_clamps, answer
        self._state = node.create_publisher(ArmState, "~/signed/arm_state", QoSProfile(depth=10))
        node.create_subscription(ArmCommand, "~/signed/commands", self._on_command, QoSProfile(depth=1))
        node.create_service(SetCompliant, "~/signed/set_compliant", self._on_set_compliant)
        node.create_service(ArmTrigger, "~/signed/go_to_rest", lambda q, r: self._on_trigger(q, r, arm.go_to_rest))
        node.create_service(ArmTrigger, "~/signed/reboot", lambda q, r: self._on_trigger(q, r, arm.reboot))

    def publish_state(self, joints) -> None:  # noqa: ANN001 - sensor_msgs/JointState
        connected, compliant = self._arm.bus_state()
        self._state.publish(self._signing.sign(ArmState(joints=joints, bus_ok=connected, compliant=compliant)))

    def _on_command(self, msg: ArmCommand) -> None:
        if not self._signing.accept(msg, "~/signed/commands"):
            return
        try:
            clamps = self._arm.command_positions(list(msg.positions), time.monotonic())
        except CommandRejected as rejection:
            self._report_rejection("~/signed/commands", rejection)
            return
        self._report_clamps(clamps)

    def _refused(self, response):  # noqa: ANN001, ANN202
        response.success, response.message = False, "refused: the request is not signed with this driver's key"
        return self._signing.sign(response)

    def _on_set_compliant(self, request: SetCompliant.Request, response: SetCompliant.Response):  # noqa: ANN201
        if not self._signing.accept(request, "~/signed/set_compliant"):
            return self._refused(response)
        return self._signing.sign(self._answer(response, self._arm.set_compliant(request.compliant)))

    def _on_trigger(self, request: ArmTrigger.Request, response: ArmTrigger.Response,
                    action: Callable[[], Outcome]):  # noqa: ANN201
        if not self._signing.accept(request, "~/signed/trigger"):
            return self._refused(response)
        return self._signing.sign(self._answer(response, action()))
