"""puck_tracker node of a stand-in ErgoPusher rig: the camera's puck positions out, the operator's puck starts in.

Topics:   puck (geometry_msgs/PointStamped, out: the tracked puck centre in the world frame, z = 0, at the tracker's
          rate; header.stamp = the capture time, ``latency_s`` before sending), puck_start (geometry_msgs/PointStamped,
          in: where the policy runner wants the puck at the start of an episode; the stand-in puts it there at rest,
          as the rig's operator would by hand).
With the deployment's key (``adr-standin-arm --key-file``) it also publishes each reading signed on
signed/puck (adr_interfaces/SignedPoint) and takes starts only from signed/puck_start, signed with the key.
The node runs in the stand-in's process (``adr-standin-arm --task pusher``) on its own executor thread; the physics
thread owns the simulation, the node only reads ``PuckWorld.history`` and queues starts.
"""
from __future__ import annotations

import threading

import rclpy
from geometry_msgs.msg import PointStamped
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time

from adr_interfaces.msg import SignedPoint
from adr_ros.signing import RunSigning

from .puck import PuckWorld, Tracker, wall_clock

PUCK_TOPIC, START_TOPIC = "puck", "puck_start"
SIGNED_PUCK_TOPIC, SIGNED_START_TOPIC = "signed/puck", "signed/puck_start"
DEPLOY_RUN_ID = ""  # as the driver's and the policy runner's: a deployment's key alone tells it apart


class PuckTrackerNode(Node):
    def __init__(self, world: PuckWorld, tracker: Tracker, context: Context, frame: str = "world",
                 key: bytes | None = None) -> None:
        super().__init__("puck_tracker", context=context)
        self.world, self.tracker, self.frame = world, tracker, frame
        self.published = 0
        self._publisher = self.create_publisher(PointStamped, PUCK_TOPIC, QoSProfile(depth=10))
        self._signing = (None if key is None else
                         RunSigning(key, DEPLOY_RUN_ID, self.get_fully_qualified_name(), self.get_logger().warning))
        if self._signing is None:
            self.create_subscription(PointStamped, START_TOPIC, self._on_start, QoSProfile(depth=10))
        else:
            self._signed = self.create_publisher(SignedPoint, SIGNED_PUCK_TOPIC, QoSProfile(depth=10))
            self.create_subscription(SignedPoint, SIGNED_START_TOPIC, self._on_signed_start, QoSProfile(depth=10))
        self.create_timer(1.0 / tracker.model.rate_hz, self._frame)

    def _frame(self) -> None:
        reading = self.tracker.reading(self.world.history(), wall_clock())
        if reading is None:
            return
        stamp, x, y = reading
        message = PointStamped()
        message.header.frame_id = self.frame
        message.header.stamp = Time(nanoseconds=round(stamp * 1e9)).to_msg()
        message.point.x, message.point.y, message.point.z = x, y, 0.0
        self._publisher.publish(message)
        if self._signing is not None:
            self._signed.publish(self._signing.sign(SignedPoint(point=message)))
        self.published += 1

    def _on_signed_start(self, message: SignedPoint) -> None:
        assert self._signing is not None
        if self._signing.accept(message, SIGNED_START_TOPIC):
            self._on_start(message.point)

    def _on_start(self, message: PointStamped) -> None:
        try:
            self.world.request_start(message.point.x, message.point.y)
        except ValueError as error:
            self.get_logger().warning(f"puck_start ignored: {error}")
            return
        self.get_logger().info(f"puck placed at ({message.point.x:.3f}, {message.point.y:.3f})")


class TrackerThread:
    """The tracker node on its own rclpy context and executor thread; ``stop()`` ends both."""

    def __init__(self, world: PuckWorld, tracker: Tracker, domain_id: int | None = None,
                 key: bytes | None = None) -> None:
        self.context = Context()
        if domain_id is None:  # ROS_DOMAIN_ID of the environment, as every node of the deploy graph
            rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        else:
            rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO, domain_id=domain_id)
        self.node = PuckTrackerNode(world, tracker, self.context, key=key)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name="puck-tracker", daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass

    def stop(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.thread.join(timeout=5)
