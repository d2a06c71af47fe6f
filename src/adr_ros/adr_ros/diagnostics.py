"""A node's health on ``/diagnostics`` (rqt_robot_monitor): a level, a message and named counters."""
from __future__ import annotations

from collections import Counter

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node


class NodeDiagnostics:
    """Counts events (accepted, rejected_<reason>, ...) and publishes them every ``period`` seconds."""

    def __init__(self, node: Node, hardware_id: str = "", period: float = 1.0) -> None:
        self._node = node
        self._name = f"{node.get_name()}"
        self._hardware_id = hardware_id
        self.counters: Counter[str] = Counter()
        self.values: dict[str, str] = {}
        self.level = DiagnosticStatus.OK
        self.message = "starting"
        self._publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_timer(period, self.publish)

    def count(self, event: str, n: int = 1) -> None:
        self.counters[event] += n

    def reject(self, reason: str, detail: str) -> None:
        """Count a refused input under ``rejected_<reason>``; the first of each reason is logged with its detail
        (a storm of bad messages does not flood the log)."""
        key = f"rejected_{reason}"
        self.counters[key] += 1
        if self.counters[key] == 1:
            self._node.get_logger().warning(f"rejected ({reason}): {detail} (more of this reason are only counted: "
                                            f"{key} on /diagnostics)")

    def set_status(self, level: bytes, message: str) -> None:
        self.level, self.message = level, message

    def publish(self) -> None:
        status = DiagnosticStatus(level=self.level, name=self._name, message=self.message,
                                  hardware_id=self._hardware_id)
        status.values = [KeyValue(key=k, value=str(v)) for k, v in sorted(self.counters.items())]
        status.values += [KeyValue(key=k, value=v) for k, v in sorted(self.values.items())]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self._node.get_clock().now().to_msg()
        self._publisher.publish(array)
