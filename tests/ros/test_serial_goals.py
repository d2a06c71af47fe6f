"""A simulator instance executes its goals one at a time, in the order their requests were accepted, whatever order
rclpy's executor threads hand the accepted goals over in (SerialGoals); a place whose goal never comes stops blocking.
"""
from __future__ import annotations

import threading
from typing import Any, cast

from rclpy.action.server import ServerGoalHandle

from adr_sim_node.serial_goals import SerialGoals


class FakeHandle:
    def __init__(self, name: str, log: list[str], started: threading.Event | None = None) -> None:
        self.request = object()
        self.name = name
        self._log = log
        self._started = started

    def execute(self) -> None:  # ServerGoalHandle.execute schedules the execute callback: here it records the start
        self._log.append(self.name)
        if self._started is not None:
            self._started.set()


def _handle(handle: FakeHandle) -> ServerGoalHandle:
    return cast("ServerGoalHandle", handle)


def test_goals_execute_in_the_order_they_were_reserved_not_handed_over() -> None:
    log: list[str] = []
    goals = SerialGoals()
    first, second, third = (FakeHandle(name, log) for name in ("first", "second", "third"))
    for handle in (first, second, third):
        goals.reserve(handle.request)
    goals.accepted(_handle(second))  # handed over before the first: waits
    goals.accepted(_handle(third))
    assert log == [] and goals.queued == 2
    goals.accepted(_handle(first))
    assert log == ["first"]
    goals.finished()
    assert log == ["first", "second"]
    goals.finished()
    assert log == ["first", "second", "third"] and goals.queued == 0


def test_one_goal_at_a_time() -> None:
    log: list[str] = []
    goals = SerialGoals()
    first, second = FakeHandle("first", log), FakeHandle("second", log)
    goals.reserve(first.request)
    goals.accepted(_handle(first))
    goals.reserve(second.request)
    goals.accepted(_handle(second))
    assert log == ["first"]  # the second waits while the first runs
    goals.finished()
    assert log == ["first", "second"]


def test_an_unreserved_goal_takes_its_place_at_acceptance() -> None:
    log: list[str] = []
    goals = SerialGoals()
    reserved, unreserved = FakeHandle("reserved", log), FakeHandle("unreserved", log)
    goals.reserve(reserved.request)
    goals.accepted(_handle(unreserved))
    assert log == []
    goals.accepted(_handle(reserved))
    goals.finished()
    assert log == ["reserved", "unreserved"]


def test_a_place_whose_goal_never_comes_stops_blocking() -> None:
    log: list[str] = []
    started = threading.Event()
    goals = SerialGoals(late_after=0.05)
    lost, waiting = FakeHandle("lost", log), FakeHandle("waiting", log, started)
    goals.reserve(lost.request)  # accepted, but its handle never arrives (the answer to the trainer failed)
    goals.reserve(waiting.request)
    goals.accepted(_handle(waiting))
    assert started.wait(30), "the goal behind a lost place never started"
    assert log == ["waiting"]


def test_no_goal_starts_after_close() -> None:
    log: list[str] = []
    goals = SerialGoals()
    first, second = FakeHandle("first", log), FakeHandle("second", log)
    for handle in (first, second):
        goals.reserve(handle.request)
        goals.accepted(_handle(handle))
    assert not goals.close(timeout=0.01)  # the first still runs
    goals.finished()
    assert goals.close(timeout=0.01)
    assert log == ["first"]


def test_the_sim_node_reserves_the_goals_its_callback_accepts() -> None:
    """SimNode.on_goal_request reserves a place for a goal it accepts and none for one it refuses."""
    from types import SimpleNamespace

    from rclpy.action import GoalResponse

    from adr_interfaces.action import RollOut
    from adr_ros.signing import RunSigning, Signer
    from adr_sim_node.node import SimNode

    key = bytes(range(32))
    signer = Signer(key, "run-a", "adr_trainer")
    goals = SerialGoals()
    node: Any = SimpleNamespace(signing=RunSigning(key, "run-a", "adr_sim_0", lambda _: None),
                                _action="adr/roll_out/adr_sim_0", goals=goals)
    first, second = (signer.sign(RollOut.Goal(min_policy_version=v, newest_policy_version=v), to="adr_sim_0")
                     for v in (1, 2))
    assert SimNode.on_goal_request(node, first) == GoalResponse.ACCEPT
    assert SimNode.on_goal_request(node, second) == GoalResponse.ACCEPT
    forged = RollOut.Goal(min_policy_version=3, newest_policy_version=3)
    assert SimNode.on_goal_request(node, forged) == GoalResponse.REJECT
    log: list[str] = []
    handles = [FakeHandle(name, log) for name in ("first", "second")]
    for handle, request in zip(handles, (first, second), strict=True):
        handle.request = request
    goals.accepted(_handle(handles[1]))
    assert log == []  # the second's place is behind the first's
    goals.accepted(_handle(handles[0]))
    goals.finished()
    assert log == ["first", "second"]
