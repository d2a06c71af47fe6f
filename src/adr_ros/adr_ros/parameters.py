"""A node's parameters are read-only once it runs: anyone on the ROS domain can call a node's set_parameters service.

Every parameter of the ADR nodes is declared ``read_only`` (rclpy refuses a change of those itself), but rclpy
declares ``use_sim_time`` on every node, writable: set to true from outside, it switched the trainer's clock to a
/clock topic nobody publishes and the run stalled silently (127 s, no line, until stopped by hand). So once a
node is built, an on-set-parameters callback refuses every change (a request cannot be signed with the run's key:
rcl_interfaces/SetParameters has no room for it), counts it (``rejected_set_parameters`` on /diagnostics) and logs
the first.
"""
from __future__ import annotations

import threading
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node


def freeze_parameters(node: Node) -> None:
    """Refuse every later parameter change of ``node`` (its own declarations are done): logged once, counted on its
    diagnostics (``node.diagnostics``, where it has them)."""
    refused = {"count": 0}
    lock = threading.Lock()

    def refuse(parameters: list[Any]) -> SetParametersResult:
        names = ", ".join(f"{p.name}={p.value!r}" for p in parameters)
        with lock:
            refused["count"] += 1
            first = refused["count"] == 1
        diagnostics = getattr(node, "diagnostics", None)
        if diagnostics is not None:
            diagnostics.reject("set_parameters", f"a request to set {names}: a running node's parameters are "
                                                 f"read-only")
        elif first:
            node.get_logger().warning(f"refused a request to set {names}: a running node's parameters are read-only "
                                      f"(more are refused without a line)")
        return SetParametersResult(successful=False, reason="the parameters of a running ADR node are read-only")

    node.add_on_set_parameters_callback(refuse)
