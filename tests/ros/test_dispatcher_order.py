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
from adr_trainer_node import dispatcher as dispatcher_module
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


def _dispatcher(node: Node, instances: list[str],
                answer_timeout: float = 600.0) -> tuple[RolloutDispatcher, dict[str, FakeClient]]:
    dispatcher = RolloutDispatcher(node, instances, rollout_timeout=600.0, answer_timeout=answer_timeout)
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



class Clock:
    """The dispatcher's ``time.monotonic``, advanced by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(dispatcher_module, "time", fake)
    return fake


def test_a_goal_left_unanswered_goes_again_without_skipping_its_instance(node: Node, clock: Clock) -> None:
    """Fast DDS drops a goal's answer when the server has not matched the client's response reader yet (a run's
    first goals on a loaded machine), and rclpy then never executes that goal: after ``answer_timeout`` the slot is
    sent again, before the higher slots, to the same healthy instance. A second unanswered goal in a row skips the
    instance (it hangs)."""
    dispatcher, clients = _dispatcher(node, ["adr_sim_0", "adr_sim_1"], answer_timeout=10.0)
    a, b = clients["adr_sim_0"], clients["adr_sim_1"]
    dispatcher.poll(set())
    assert ([s for s, _ in a.sent], [s for s, _ in b.sent]) == ([0], [1])
    clock.now += 9.0
    dispatcher.poll(set())
    assert dispatcher.report.reassigned == 0  # not yet
    clock.now += 2.0  # both answers lost
    dispatcher.poll(set())
    assert ([s for s, _ in a.sent], [s for s, _ in b.sent]) == ([0, 0], [1, 1])  # sent again, same instances
    assert dispatcher.report.reassigned == 2 and "did not answer" in dispatcher.report.failures[0]
    assert not dispatcher._benched
    a.answer(1)
    dispatcher.poll(set())
    assert [s for s, _ in a.sent] == [0, 0, 2]  # a answered: it takes its next goal
    clock.now += 11.0  # a answers no more either, but its streak began again at its answer: not skipped
    dispatcher.poll(set())  # b leaves its second goal in a row unanswered: skipped
    assert sorted(dispatcher._benched) == ["adr_sim_1"]
    assert [s for s, _ in b.sent] == [1, 1]
    assert [s for s, _ in a.sent] == [0, 0, 2, 1]  # b's slot 1 goes to a, first


def test_an_unanswered_goal_whose_trajectory_arrived_ends_quietly(node: Node, clock: Clock) -> None:
    dispatcher, clients = _dispatcher(node, ["adr_sim_0"], answer_timeout=10.0)
    dispatcher.poll(set())
    clock.now += 11.0
    dispatcher.poll({0})  # the answer is late, but slot 0's trajectory came: the instance ran it
    assert dispatcher.report.reassigned == 0
    assert [slot for slot, _ in clients["adr_sim_0"].sent] == [0, 1]


def test_a_result_lost_after_its_trajectory_arrived_holds_the_instance_only_briefly(node: Node, clock: Clock) -> None:
    dispatcher, clients = _dispatcher(node, ["adr_sim_0"], answer_timeout=10.0)
    client = clients["adr_sim_0"]
    dispatcher.poll(set())
    client.answer(0)
    dispatcher.poll(set())
    client.answer(1)  # both accepted; their results never come
    dispatcher.poll({0, 1})  # their trajectories arrived
    clock.now += 5.0
    dispatcher.poll({0, 1})
    assert [slot for slot, _ in client.sent] == [0, 1]  # the results may still be on the way: two goals held
    clock.now += 6.0
    dispatcher.poll({0, 1})  # before: held for rollout_timeout (600 s here)
    assert [slot for slot, _ in client.sent] == [0, 1, 2] and dispatcher.report.reassigned == 0
