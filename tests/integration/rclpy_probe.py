"""A small rclpy node inside the test process, spun in a background thread, to talk to the nodes under test."""
from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def result_of(future: Future, timeout: float, what: str):
    wait_until(future.done, timeout, what)
    return future.result()


class InSpinThread:
    """Runs functions in the probe's executor thread. rclpy's ActionClient.send_goal_async / get_result_async
    register their request only after sending it: called from another thread, a fast reply can arrive first and
    be dropped ("Ignoring unexpected goal response")."""

    def __init__(self, node: Node) -> None:
        self._pending: queue.SimpleQueue = queue.SimpleQueue()
        self._guard = node.create_guard_condition(self._run_pending)

    def call(self, function: Callable, *args) -> concurrent.futures.Future:
        done: concurrent.futures.Future = concurrent.futures.Future()
        self._pending.put((function, args, done))
        self._guard.trigger()
        return done

    def _run_pending(self) -> None:
        while not self._pending.empty():
            function, args, done = self._pending.get()
            try:
                done.set_result(function(*args))
            except Exception as error:  # noqa: BLE001 - handed to the caller
                done.set_exception(error)


class DiagnosticCounters:
    """The newest /diagnostics key-values of each node, by node name."""

    def __init__(self, node: Node) -> None:
        self.latest: dict[str, dict[str, str]] = {}
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_array, 10)

    def _on_array(self, array: DiagnosticArray) -> None:
        for status in array.status:
            self.latest[status.name] = {kv.key: kv.value for kv in status.values}

    def count(self, node_name: str, key: str) -> int:
        return int(self.latest.get(node_name, {}).get(key, 0))

    def value(self, node_name: str, key: str) -> str | None:
        return self.latest.get(node_name, {}).get(key)


@contextmanager
def probe_node(name: str, domain_id: int) -> Iterator[Node]:
    """A node in its own context (domain ``domain_id``, localhost discovery like ``isolated_ros_env``), spinning
    until the block ends."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_STATIC_PEERS", None)
    context = Context()
    rclpy.init(context=context, domain_id=domain_id)
    node = Node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield node
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        spinner.join(timeout=2.0)
