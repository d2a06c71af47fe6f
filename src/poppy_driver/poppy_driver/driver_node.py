"""poppy_driver node: the Poppy Ergo Jr on ROS 2 (see docs/poppy_driver.md for the interface and safety rules).

Topics:   joint_states (sensor_msgs/JointState, out), ~/commands (std_msgs/Float64MultiArray, in: all joints in
          configured order), ~/joint_trajectory (trajectory_msgs/JointTrajectory, in: named joints),
          /diagnostics (diagnostic_msgs/DiagnosticArray, out).
Services: ~/set_compliant (std_srvs/SetBool), ~/go_to_rest (std_srvs/Trigger), ~/reboot (std_srvs/Trigger).
With ``key_file`` (the deployment's key): commands and services only signed, under ~/signed/ (signed_interface.py).
The bus work happens in a control-loop thread (PoppyArm.step); ROS callbacks only hand commands to the arm.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time

import rclpy
import rclpy.logging
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from adr_ros.signing import KeyError_, RunSigning

from . import ros_messages
from .arm import JointSample, Outcome, PoppyArm
from .bus import MotorBus
from .commands import Clamp, CommandRejected
from .config import SAFE_BOUNDS, ConfigError, default_config_path, load_config
from .control_loop import ControlLoop
from .diagnostics import build_entries
from .dummy_bus import DummyBus
from .pypot_bus import Xl320Bus
from .signed_interface import DEPLOY_RUN_ID, SignedInterface

SIMULATORS = ("", "dummy")
RUNTIME_PARAMETERS = {  # name -> (description, SafetyConfig field)
    "max_speed": ("Moving speed of every motor while following commands [rad/s]", "max_speed"),
    "rest_speed": ("Speed of go_to_rest and of holding moves [rad/s]", "rest_speed"),
    "torque_limit": ("Torque limit of every motor [% of the XL-320 stall torque]", "torque_limit"),
    "command_timeout": ("No fresh command for this long -> hold the present position [s]", "command_timeout"),
    "compliant_after_timeout": ("After the hold, go compliant this much later [s]; 0 = keep holding",
                                "compliant_after_timeout"),
}


class PoppyDriverNode(Node):
    def __init__(self) -> None:
        super().__init__("poppy_driver")
        config_file = self._declare("config_file", str(default_config_path()), "Arm description YAML")
        config = load_config(config_file)
        simulator = self._declare("simulator", "", "'' for the real bus, 'dummy' for pypot's robot-less simulator")
        if simulator not in SIMULATORS:
            raise ConfigError(f"simulator={simulator!r}: expected one of {SIMULATORS}")
        port = self._declare("port", config.bus.port, "Serial port of the motor bus")
        baudrate = self._declare("baudrate", config.bus.baudrate, "Baud rate of the motor bus")
        config = config.with_bus(port, baudrate)
        rate = self._declare("rate", 50.0, "Control loop and joint_states rate [Hz]", (1.0, 200.0))
        start_compliant = self._declare("start_compliant", True,
                                        "Start with torque off (True) or holding the present position (False)")
        reconnect_period = self._declare("reconnect_period", 1.0, "Pause between attempts to reach the bus [s]",
                                         (0.1, 30.0))
        self.connect_timeout = self._declare(
            "connect_timeout", 0.0, "Give up (exit code 3) when the bus has not answered for this long [s]; "
            "0: keep retrying", (0.0, 3600.0))
        self.exit_code: int | None = None  # set when the driver gives up
        diagnostics_period = self._declare("diagnostics_period", 0.5, "Period of /diagnostics [s]", (0.1, 10.0))
        self._declare("joint_names", list(config.joint_names), "Joint order of ~/commands and joint_states")
        for name, (description, field) in RUNTIME_PARAMETERS.items():
            bounds = SAFE_BOUNDS[name]
            self._declare(name, getattr(config.safety, field), description, (bounds.low, bounds.high),
                          read_only=False)

        bus: MotorBus = DummyBus(config.motor_ids) if simulator == "dummy" else Xl320Bus(config.bus, config.motor_ids)
        self._hardware_id = "pypot dummy" if simulator == "dummy" else config.bus.port
        self._last_rejection_logged = ("", 0.0)
        self._arm = PoppyArm(config, bus, start_compliant=start_compliant, reconnect_period=reconnect_period,
                             log=self._log_from_arm)
        self._apply_runtime_parameters()
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(lambda _: self._apply_runtime_parameters())

        self._joint_states = self.create_publisher(JointState, "joint_states", QoSProfile(depth=10))
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", QoSProfile(depth=10))
        key_file = self._declare("key_file", "", "The deployment's key (adr_ros.signing): commands and services only "
                                 "signed with it, under ~/signed/; empty: the unsigned std interface")
        self._signed: SignedInterface | None = None
        if key_file:
            try:
                signing = RunSigning.from_file(key_file, DEPLOY_RUN_ID, self.get_fully_qualified_name(),
                                               self.get_logger().warning)
            except KeyError_ as error:
                raise ConfigError(str(error)) from None
            self._signed = SignedInterface(self, self._arm, signing, self._report_rejection, self._report_clamps,
                                           self._answer)
        else:
            self.create_subscription(Float64MultiArray, "~/commands", self._on_commands, QoSProfile(depth=1))
            self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory,
                                     QoSProfile(depth=10))
            self.create_service(SetBool, "~/set_compliant", self._on_set_compliant)
            self.create_service(Trigger, "~/go_to_rest",
                                lambda _, response: self._answer(response, self._arm.go_to_rest()))
            self.create_service(Trigger, "~/reboot", lambda _, response: self._answer(response, self._arm.reboot()))
        self.create_timer(diagnostics_period, self._publish_diagnostics)
        if self.connect_timeout > 0:
            self.create_timer(0.5, self._check_unreachable)

        self._loop: ControlLoop[JointSample] = ControlLoop(self._arm.step, self._publish_joint_state, rate)
        self._loop.start()
        self.get_logger().info(f"{bus.description}: joints {list(config.joint_names)}, {rate:g} Hz, "
                               f"{'compliant' if start_compliant else 'holding'} at start, commands "
                               + ("signed only (~/signed/*)" if key_file else "unsigned (~/commands)"))

    def _check_unreachable(self) -> None:
        waited = self._arm.unreachable_for(time.monotonic())
        if waited > self.connect_timeout and self.exit_code is None:
            self.get_logger().fatal(f"giving up: the bus at {self._hardware_id} has not answered for {waited:.0f} s "
                                    f"(connect_timeout {self.connect_timeout:g} s); check the port and the power")
            self.exit_code = 3

    def shutdown(self) -> None:
        """Stop the loop and release the port. The motors keep their last state (XL-320s hold their goal)."""
        self._loop.stop()
        self._arm.close()

    # ROS callbacks ---------------------------------------------------------------------------------------------
    def _on_commands(self, msg: Float64MultiArray) -> None:
        try:
            clamps = self._arm.command_positions(list(msg.data), time.monotonic())
        except CommandRejected as rejection:
            self._report_rejection("~/commands", rejection)
            return
        self._report_clamps(clamps)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            clamps = self._arm.command_trajectory(list(msg.joint_names), ros_messages.trajectory_points(msg),
                                                  time.monotonic())
        except CommandRejected as rejection:
            self._report_rejection("~/joint_trajectory", rejection)
            return
        self._report_clamps(clamps)

    def _on_set_compliant(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        return self._answer(response, self._arm.set_compliant(request.data))

    def _answer(self, response, outcome: Outcome):
        response.success, response.message = outcome.ok, outcome.message
        if outcome.ok:
            self.get_logger().info(outcome.message)
        else:
            self.get_logger().warning(outcome.message)
        return response

    def _check_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name in RUNTIME_PARAMETERS:
                if parameter.type_ is not Parameter.Type.DOUBLE:
                    return SetParametersResult(successful=False, reason=f"{parameter.name} takes a double")
                try:
                    SAFE_BOUNDS[parameter.name].check(parameter.name, float(parameter.value))
                except ConfigError as error:
                    return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    def _apply_runtime_parameters(self) -> None:
        value = {name: float(self.get_parameter(name).value) for name in RUNTIME_PARAMETERS}
        self._arm.set_max_speed(value["max_speed"])
        self._arm.set_rest_speed(value["rest_speed"])
        self._arm.set_torque_limit(value["torque_limit"])
        self._arm.set_watchdog(value["command_timeout"], value["compliant_after_timeout"])

    # publishing ------------------------------------------------------------------------------------------------
    def _publish_joint_state(self, sample: JointSample) -> None:
        if self.context.ok():  # the loop thread may still deliver one sample while Ctrl-C shuts rclpy down
            joints = ros_messages.joint_state(sample, self.get_clock().now().to_msg())
            self._joint_states.publish(joints)
            if self._signed is not None:
                self._signed.publish_state(joints)

    def _publish_diagnostics(self) -> None:
        entries = build_entries(self._arm.status(), self.get_name(), self._hardware_id, self._loop.achieved_rate_hz)
        self._diagnostics.publish(ros_messages.diagnostic_array(entries, self.get_clock().now().to_msg()))

    def _report_rejection(self, topic: str, rejection: CommandRejected) -> None:
        """Every new reason is logged; a repeated one at most once a second (a runner may stream them)."""
        text, now = f"{topic} rejected: {rejection}", time.monotonic()
        if text != self._last_rejection_logged[0] or now - self._last_rejection_logged[1] >= 1.0:
            self.get_logger().warning(text)
            self._last_rejection_logged = (text, now)

    def _report_clamps(self, clamps: list[Clamp]) -> None:
        if clamps:
            self.get_logger().warning("clamped to joint limits: " + "; ".join(map(str, clamps)),
                                      throttle_duration_sec=1.0)

    def _log_from_arm(self, level: int, message: str) -> None:
        # one call site per severity: rclpy's logger refuses a call site whose severity changes
        logger = self.get_logger()
        if level >= logging.ERROR:
            logger.error(message)
        elif level >= logging.WARNING:
            logger.warning(message)
        elif level >= logging.INFO:
            logger.info(message)
        else:
            logger.debug(message)

    def _declare(self, name: str, default, description: str, bounds: tuple[float, float] | None = None,
                 read_only: bool = True):
        descriptor = ParameterDescriptor(description=description, read_only=read_only)
        if bounds is not None:
            descriptor.floating_point_range = [FloatingPointRange(from_value=bounds[0], to_value=bounds[1], step=0.0)]
        if isinstance(default, float):
            descriptor.type = ParameterType.PARAMETER_DOUBLE
        return self.declare_parameter(name, default, descriptor).value


def main(args: list[str] | None = None) -> int:
    # Ctrl-C only sets a flag: the control loop is stopped before rclpy shuts down, so it never publishes into a
    # context that is going away (rclpy's own handler shuts the context down under the running loop thread).
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    rclpy.init(args=args if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    try:
        node = PoppyDriverNode()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok() and node.exit_code is None:
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (ConfigError, ParameterException) as error:
        rclpy.logging.get_logger("poppy_driver").fatal(f"cannot start: {error}")
        return 2
    finally:
        if node is not None:
            node.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()
    return node.exit_code or 0 if node is not None else 0


if __name__ == "__main__":
    sys.exit(main())
