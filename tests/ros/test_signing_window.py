"""The verifier's replay check, strict and with a reorder window (action results of two goals queued at one
simulator instance arrive in the order the trainer polls them, not always in the order they were signed)."""
from __future__ import annotations

import copy

from adr_interfaces.action import RollOut
from adr_ros.signing import Signer, Verifier

KEY = bytes(range(32))
CHANNEL = "adr/roll_out/adr_sim_0"


def _signed_results(count: int, step_ns: int) -> list[RollOut.Result]:
    ticks = iter(range(1_000_000_000, 1_000_000_000 + count * step_ns, step_ns))
    signer = Signer(KEY, "run-a", "adr_sim_0", clock=lambda: next(ticks))
    return [signer.sign(RollOut.Result(success=True, message=f"slot {i}")) for i in range(count)]


def _verifier(log: list[str]) -> Verifier:
    return Verifier(Signer(KEY, "run-a", "adr_trainer"), log.append)


def test_strict_check_refuses_an_older_result_after_a_newer_one() -> None:
    first, second = _signed_results(2, step_ns=50_000_000)
    log: list[str] = []
    verifier = _verifier(log)
    assert verifier.accept(second, CHANNEL)
    assert not verifier.accept(first, CHANNEL)  # signed before the one accepted: taken for a replay
    assert verifier.dropped[(CHANNEL, "replayed")] == 1 and "replayed" in log[0]


def test_window_takes_results_out_of_order_once_each() -> None:
    first, second, third = _signed_results(3, step_ns=50_000_000)
    verifier = _verifier([])
    window = 10_000_000_000  # 10 s
    assert verifier.accept(second, CHANNEL, reorder_window_ns=window)
    assert verifier.accept(first, CHANNEL, reorder_window_ns=window)  # older, inside the window, not seen: taken
    assert not verifier.accept(copy.deepcopy(first), CHANNEL, reorder_window_ns=window)  # a copy: a replay
    assert not verifier.accept(copy.deepcopy(second), CHANNEL, reorder_window_ns=window)
    assert verifier.accept(third, CHANNEL, reorder_window_ns=window)
    assert not verifier.accept(copy.deepcopy(third), CHANNEL, reorder_window_ns=window)
    assert verifier.dropped[(CHANNEL, "replayed")] == 3


def test_window_refuses_what_is_older_than_the_window() -> None:
    results = _signed_results(3, step_ns=2_000_000_000)  # 2 s apart
    verifier = _verifier([])
    window = 3_000_000_000  # 3 s: the first is 4 s older than the last
    assert verifier.accept(results[2], CHANNEL, reorder_window_ns=window)
    assert not verifier.accept(results[0], CHANNEL, reorder_window_ns=window)
    assert verifier.accept(results[1], CHANNEL, reorder_window_ns=window)


def test_window_forgets_old_sequences_but_still_refuses_their_replays() -> None:
    results = _signed_results(200, step_ns=1_000_000)  # 1 ms apart
    verifier = _verifier([])
    window = 20_000_000  # 20 ms
    for result in results:
        assert verifier.accept(result, CHANNEL, reorder_window_ns=window)
    assert len(verifier._seen[(CHANNEL, "adr_sim_0")]) <= 64 + 1
    assert all(not verifier.accept(copy.deepcopy(r), CHANNEL, reorder_window_ns=window) for r in results)


def test_a_tampered_result_is_refused_inside_the_window() -> None:
    first, second = _signed_results(2, step_ns=50_000_000)
    verifier = _verifier([])
    assert verifier.accept(second, CHANNEL, reorder_window_ns=10**10)
    first.message = "slot 7"
    assert not verifier.accept(first, CHANNEL, reorder_window_ns=10**10)
    assert verifier.dropped[(CHANNEL, "bad_signature")] == 1


def test_sim_node_takes_two_goals_checked_out_of_order_and_refuses_a_replay() -> None:
    """The instance's own goal callback: two goals the trainer signed 5 ms apart, checked newest first (two executor
    threads), are both queued; a copy of either is refused."""
    from types import SimpleNamespace

    from rclpy.action import GoalResponse

    from adr_ros.signing import RunSigning
    from adr_sim_node.node import SimNode
    from adr_sim_node.serial_goals import SerialGoals

    ticks = iter((1_000_000_000, 1_005_000_000))
    signer = Signer(KEY, "run-a", "adr_trainer", clock=lambda: next(ticks))
    first, second = (signer.sign(RollOut.Goal(min_policy_version=v, newest_policy_version=v), to="adr_sim_0")
                     for v in (1, 2))
    node = SimpleNamespace(signing=RunSigning(KEY, "run-a", "adr_sim_0", lambda _: None), _action=CHANNEL,
                           goals=SerialGoals())
    assert SimNode.on_goal_request(node, second) == GoalResponse.ACCEPT  # type: ignore[arg-type]
    assert SimNode.on_goal_request(node, first) == GoalResponse.ACCEPT  # type: ignore[arg-type]
    for replay in (first, second):
        assert SimNode.on_goal_request(node, copy.deepcopy(replay)) == GoalResponse.REJECT  # type: ignore[arg-type]
