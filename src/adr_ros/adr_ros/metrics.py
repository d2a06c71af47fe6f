"""Scalar metrics on plain ``std_msgs/Float64`` topics (``adr/metrics/<name>``) that rqt_plot can draw."""
from __future__ import annotations

import math
from collections.abc import Mapping

from rclpy.node import Node
from std_msgs.msg import Float64

from adr_ros import qos

PREFIX = "adr/metrics/"


class MetricPublisher:
    def __init__(self, node: Node, names: tuple[str, ...]) -> None:
        self._publishers = {name: node.create_publisher(Float64, PREFIX + name, qos.METRICS) for name in names}

    def publish(self, values: Mapping[str, float]) -> None:
        for name, value in values.items():
            publisher = self._publishers.get(name)
            if publisher is not None and value is not None and math.isfinite(float(value)):
                publisher.publish(Float64(data=float(value)))
