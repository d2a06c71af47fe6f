"""An instance waits for its trajectory consumers' signed receipts, not for a count of subscribers (issue 61, item 1):
one subscriber of adr/trajectories with an incompatible QoS (it never matches) made every instance of a run wait for
it until it gave up (exit 1 after 91 s). Real DDS traffic in a domain of this test run's own."""
from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros import qos, topics
from adr_ros.signing import RunSigning

KEY = bytes(range(32))


@pytest.fixture
def context(ros_domain_id: int) -> Iterator[Context]:
    context = Context()
    rclpy.init(context=context, domain_id=ros_domain_id)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)


def signing(name: str) -> RunSigning:
    return RunSigning(KEY, "run-a", name, lambda _line: None, start="start-1")


def test_an_instance_waits_for_its_consumers_signed_receipts_not_for_a_count(context: Context) -> None:
    """Issue 61: one subscriber of adr/trajectories with an incompatible QoS (it never matches) made every instance
    wait for it until it gave up. The instance now waits for its named consumers' signed receipts: the stranger
    neither blocks it nor, whatever its name, stands in for a consumer."""
    from adr_ros.receipts import ReceiptSender, ReceiptWaiter, is_probe

    sim, trainer, stranger = (Node(name, context=context) for name in ("adr_sim_0", "adr_trainer", "adr_trainer"))
    executor = MultiThreadedExecutor(num_threads=3, context=context)
    for node in (sim, trainer, stranger):
        executor.add_node(node)
    try:
        # a subscriber that never matches the instance's writer (transient-local reader, volatile writer)
        stranger.create_subscription(TrajectoryMsg, topics.TRAJECTORIES, lambda _msg: None, QoSProfile(
            depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        publisher = sim.create_publisher(TrajectoryMsg, topics.TRAJECTORIES, qos.RELIABLE_STREAM)
        waiter = ReceiptWaiter(sim, signing("/adr_sim_0"), {"adr_trainer"}, publisher, "run-a")
        consumer = signing("/adr_trainer")
        sender = ReceiptSender(trainer, consumer, "run-a")
        trainer.create_subscription(TrajectoryMsg, topics.TRAJECTORIES,
                                    lambda msg: consumer.accept(msg, topics.TRAJECTORIES) and is_probe(msg)
                                    and sender.answer(msg), qos.CRITICAL_STREAM)
        deadline = time.monotonic() + 30.0
        while not waiter.confirmed() and time.monotonic() < deadline:
            waiter.probe()
            executor.spin_once(timeout_sec=0.05)
        assert waiter.confirmed(), waiter.missing_detail(30.0)
        discovered = sim.get_subscriptions_info_by_topic(topics.TRAJECTORIES)
        # the count the instance used to wait for: a discovered subscriber more than matched ones (never equal)
        assert len(discovered) > publisher.get_subscription_count()
    finally:
        executor.shutdown()
        for node in (sim, trainer, stranger):
            node.destroy_node()
