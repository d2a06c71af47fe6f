"""The trainer sends an instance its next rollout goal only once the instance has answered the one before, so the
instance queues its goals in the order they were sent (the in-process order of the slots with one instance)."""
from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.task import Future

from adr_interfaces.msg import ParameterSet
from adr_trainer_node.dispatcher import RolloutDispatcher


class FakeClient:
    """An ActionClient whose goal answers the test gives by hand."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, Future]] = []  # (slot, the answer's future)

    def server_is_ready(self) -> bool:
        return True

    def send_goal_async(self, goal: Any) -> Future:
        future = Future()
        self.sent.append((goal.parameters.slot, future))
        return future

    def answer(self, index: int) -> None:
        """Accept the goal sent index-th; its result stays pending."""
        self.sent[index][1].set_result(SimpleNamespace(accepted=True, get_result_async=Future))


@pytest.fixture
def node() -> Iterator[Node]:
    context = Context()
    rclpy.init(context=context)
    try:
        yield Node("dispatcher_order_test", context=context)
    finally:
        rclpy.shutdown(context=context)


def _dispatcher(node: Node, instances: list[str]) -> tuple[RolloutDispatcher, dict[str, FakeClient]]:
    dispatcher = RolloutDispatcher(node, instances, rollout_timeout=600.0)
    clients = {name: FakeClient() for name in instances}
    dispatcher._clients = clients  # type: ignore[assignment]
    proposals = [ParameterSet(slot=slot) for slot in range(4)]
    dispatcher.start(proposals, with_reference=False, min_policy_version=0, newest_policy_version=lambda: 0,
                     slots_done=set)
    return dispatcher, clients


def test_an_instance_gets_its_next_goal_only_after_answering_the_one_before(node: Node) -> None:
    dispatcher, clients = _dispatcher(node, ["adr_sim_0"])
    client = clients["adr_sim_0"]
    dispatcher.poll(set())
    dispatcher.poll(set())
    assert [slot for slot, _ in client.sent] == [0]  # slot 1 waits for the answer to slot 0
    client.answer(0)
    dispatcher.poll(set())
    assert [slot for slot, _ in client.sent] == [0, 1]
    client.answer(1)
    dispatcher.poll(set())
    assert [slot for slot, _ in client.sent] == [0, 1]  # two goals held (goals_per_instance): slot 2 waits


def test_instances_still_take_goals_side_by_side(node: Node) -> None:
    dispatcher, clients = _dispatcher(node, ["adr_sim_0", "adr_sim_1"])
    dispatcher.poll(set())
    assert [slot for slot, _ in clients["adr_sim_0"].sent] == [0]
    assert [slot for slot, _ in clients["adr_sim_1"].sent] == [1]
    clients["adr_sim_1"].answer(0)
    dispatcher.poll(set())
    assert [slot for slot, _ in clients["adr_sim_0"].sent] == [0]
    assert [slot for slot, _ in clients["adr_sim_1"].sent] == [1, 2]
