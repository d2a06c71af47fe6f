"""Command checks, clamping, trajectory timing and the watchdog: plain logic, no bus, no ROS."""
from __future__ import annotations

import math

import pytest

from poppy_driver.commands import (
    CommandRejected,
    TrajectoryPlan,
    TrajectoryPoint,
    check_positions,
    check_trajectory,
    clamp_to_limits,
)
from poppy_driver.config import load_config
from poppy_driver.watchdog import CommandWatchdog, WatchdogAction, WatchdogState

NAMES = ("m1", "m2", "m3", "m4", "m5", "m6")


def test_positions_need_one_finite_value_per_joint() -> None:
    assert check_positions([0.1] * 6, NAMES) == (0.1,) * 6
    with pytest.raises(CommandRejected, match="expected 6 positions"):
        check_positions([0.1] * 5, NAMES)
    with pytest.raises(CommandRejected, match="non-finite position for m3, m6"):
        check_positions([0, 0, math.nan, 0, 0, math.inf], NAMES)


def test_clamping_reports_each_joint_it_moved() -> None:
    joints = load_config().joints
    targets, clamps = clamp_to_limits([3.0, -3.0, 0.2, 0.0, 0.0, 0.0], joints)
    assert targets[:3] == pytest.approx((math.pi / 2, math.radians(-125.0), 0.2))
    assert [c.joint for c in clamps] == ["m1", "m2"]
    assert str(clamps[0]) == "m1 3.000 rad clamped to 1.571"
    subset, clamps = clamp_to_limits([9.0], joints, indices=[4])
    assert subset == pytest.approx((math.pi / 2,)) and clamps[0].joint == "m5"


@pytest.mark.parametrize(("names", "points", "reason"), [
    ([], [TrajectoryPoint(1.0, ())], "names no joints"),
    (["m1", "elbow"], [TrajectoryPoint(1.0, (0.0, 0.0))], r"unknown joints \['elbow'\]"),
    (["m1", "m1"], [TrajectoryPoint(1.0, (0.0, 0.0))], "repeat"),
    (["m1"], [], "no points"),
    (["m1", "m2"], [TrajectoryPoint(1.0, (0.0,))], "point 0: 1 positions for 2 joints"),
    (["m1"], [TrajectoryPoint(1.0, (math.nan,))], "point 0: non-finite position for m1"),
    (["m1"], [TrajectoryPoint(1.0, (0.0,)), TrajectoryPoint(0.5, (0.1,))], "point 1: time_from_start"),
])
def test_bad_trajectories_are_rejected_with_the_reason(names, points, reason: str) -> None:
    with pytest.raises(CommandRejected, match=reason):
        check_trajectory(names, points, NAMES)


def test_trajectory_interpolates_from_the_start_through_its_points() -> None:
    assert check_trajectory(["m4", "m2"], [TrajectoryPoint(1.0, (0.0, 0.0))], NAMES) == [3, 1]
    plan = TrajectoryPlan([0], [0.0], [TrajectoryPoint(1.0, (1.0,)), TrajectoryPoint(3.0, (-1.0,))])
    assert plan.duration == 3.0
    samples = [plan.sample(t)[0] for t in (-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 10.0)]
    assert samples == pytest.approx([0.0, 0.0, 0.5, 1.0, 0.0, -1.0, -1.0])
    jump = TrajectoryPlan([0], [0.0], [TrajectoryPoint(0.0, (0.7,))])
    assert jump.sample(0.0) == (0.7,)


def test_watchdog_holds_then_lets_go_and_fresh_commands_rearm_it() -> None:
    watchdog = CommandWatchdog(timeout=0.5, compliant_after=2.0)
    assert watchdog.update(100.0) is WatchdogAction.NONE and watchdog.state is WatchdogState.IDLE
    watchdog.feed(100.0)
    assert watchdog.update(100.4) is WatchdogAction.NONE
    assert watchdog.update(100.6) is WatchdogAction.HOLD
    assert watchdog.update(101.0) is WatchdogAction.NONE and watchdog.state is WatchdogState.HOLDING
    assert watchdog.update(102.6) is WatchdogAction.GO_COMPLIANT
    assert watchdog.update(200.0) is WatchdogAction.NONE and watchdog.state is WatchdogState.COMPLIANT
    watchdog.feed(300.0, valid_until=303.0)  # a 3 s trajectory stays fresh until it ends
    assert watchdog.update(303.4) is WatchdogAction.NONE
    assert watchdog.update(303.6) is WatchdogAction.HOLD


def test_watchdog_without_compliance_keeps_holding() -> None:
    watchdog = CommandWatchdog(timeout=0.1, compliant_after=0.0)
    watchdog.feed(0.0)
    assert watchdog.update(0.2) is WatchdogAction.HOLD
    assert watchdog.update(1e6) is WatchdogAction.NONE and watchdog.state is WatchdogState.HOLDING
