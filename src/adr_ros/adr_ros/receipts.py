"""Who reads a simulator instance's trajectories, by signed identity rather than by a count of subscribers.

Reliable delivery covers matched readers only, so an instance must not publish its first rollout before the run's
trajectory consumers (trainer, discriminator) have matched its publisher. Counting matched subscribers lets anyone
on the domain decide that: a stranger whose subscription never matches (an incompatible QoS) made every instance wait
until it gave up (exit 1 after 91 s), and one under a consumer's name could stand in for it. Instead the
instance publishes a probe on ``adr/trajectories`` (a ``Trajectory`` of kind ``KIND_PROBE``, signed) every
``PROBE_PERIOD_S`` until each consumer has answered it with a ``TrajectoryReceipt`` signed for this instance: the
answer proves that the consumer, holding the run's key, read a message of this very publisher, so what follows on it
reaches that consumer too (reliable, KEEP_ALL readers).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_interfaces.msg import TrajectoryReceipt
from adr_ros import qos, topics
from adr_ros.signing import RunSigning

PROBE_PERIOD_S = 0.5


def is_probe(msg: TrajectoryMsg) -> bool:
    return int(msg.kind) == TrajectoryMsg.KIND_PROBE


class ReceiptSender:
    """A consumer's side: answer each (verified) probe with a receipt signed for the probing instance."""

    def __init__(self, node: Node, signing: RunSigning, run_id: str) -> None:
        self._signing, self._run_id = signing, run_id
        self._publisher = node.create_publisher(TrajectoryReceipt, topics.TRAJECTORY_RECEIPTS, qos.RELIABLE_STREAM)

    def answer(self, probe: TrajectoryMsg) -> None:
        receipt = TrajectoryReceipt(run_id=self._run_id, instance_id=probe.instance_id,
                                    probe_sequence=int(probe.signature.sequence))
        self._publisher.publish(self._signing.answer(receipt, probe))


class ReceiptWaiter:
    """An instance's side: probes until every consumer named in ``consumers`` (node names) has answered."""

    def __init__(self, node: Node, signing: RunSigning, consumers: Iterable[str], publisher: Any,
                 run_id: str) -> None:
        self._node, self._signing, self._publisher, self._run_id = node, signing, publisher, run_id
        self._wanted = set(consumers)
        self._answered: set[str] = set()
        self._probes: set[int] = set()
        self._last_probe = float("-inf")
        self._lock = threading.Lock()
        node.create_subscription(TrajectoryReceipt, topics.TRAJECTORY_RECEIPTS, self._on_receipt, qos.CRITICAL_STREAM,
                                 callback_group=ReentrantCallbackGroup())

    def confirmed(self) -> bool:
        with self._lock:
            return self._wanted <= self._answered

    def missing_detail(self, waited_s: float) -> str:
        with self._lock:
            missing = sorted(self._wanted - self._answered)
        return (f"trajectory consumers {missing} did not answer this instance's probe (a signed receipt) within "
                f"{waited_s:g} s")

    def probe(self) -> None:
        """Publish a probe, unless one went out less than PROBE_PERIOD_S ago."""
        now = time.monotonic()
        with self._lock:
            if now - self._last_probe < PROBE_PERIOD_S:
                return
            self._last_probe = now
        msg = TrajectoryMsg(run_id=self._run_id, kind=TrajectoryMsg.KIND_PROBE, instance_id=self._node.get_name())
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._signing.sign(msg)
        with self._lock:
            self._probes.add(int(msg.signature.sequence))
        self._publisher.publish(msg)

    def _on_receipt(self, msg: TrajectoryReceipt) -> None:
        if msg.instance_id != self._node.get_name():
            return  # another instance's: not this one's business (not counted as a drop)
        if not self._signing.accept(msg, topics.TRAJECTORY_RECEIPTS, to_me=True):
            return
        consumer = msg.signature.sender.rsplit("/", 1)[-1]
        with self._lock:
            if msg.run_id == self._run_id and int(msg.probe_sequence) in self._probes and consumer in self._wanted:
                self._answered.add(consumer)
