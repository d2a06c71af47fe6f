"""Scalar metrics on plain ``std_msgs/Float64`` topics (``adr/metrics/<name>``) that rqt_plot can draw, and the same
values signed with the run's key on ``adr/signed_metrics`` (``adr_interfaces/Metrics``): what adr_viewer shows, so
that nobody without the key can put a number on its page."""
from __future__ import annotations

import array
import math
from collections.abc import Mapping

from rclpy.node import Node
from std_msgs.msg import Float64

from adr_interfaces.msg import Metrics
from adr_ros import qos, topics
from adr_ros.signing import RunSigning

PREFIX = "adr/metrics/"


class MetricPublisher:
    def __init__(self, node: Node, names: tuple[str, ...], signing: RunSigning | None = None) -> None:
        self._publishers = {name: node.create_publisher(Float64, PREFIX + name, qos.METRICS) for name in names}
        self._signing = signing
        self._signed = (node.create_publisher(Metrics, topics.SIGNED_METRICS, qos.METRICS)
                        if signing is not None else None)

    def publish(self, values: Mapping[str, float]) -> None:
        shown: dict[str, float] = {}
        for name, value in values.items():
            publisher = self._publishers.get(name)
            if publisher is not None and value is not None and math.isfinite(float(value)):
                publisher.publish(Float64(data=float(value)))
                shown[name] = float(value)
        if self._signed is not None and self._signing is not None and shown:
            msg = Metrics(run_id=self._signing.signer.run_id, names=list(shown),
                          values=array.array("d", shown.values()))
            self._signed.publish(self._signing.sign(msg))
