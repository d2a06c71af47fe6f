"""PoppyArm through real pypot on the emulated XL-320 bus: units, directions, safety rules and faults."""
from __future__ import annotations

import math
import time
from collections.abc import Callable

import pytest
import yaml
from poppy_standin.xl320 import (
    A_MOVING_SPEED,
    A_TORQUE_LIMIT,
    OVERLOAD,
    SYNC_READ,
    SYNC_WRITE,
    WRITE,
    Xl320Emulator,
    degrees_to_units,
    units_to_degrees,
)

from poppy_driver.arm import JointSample, PoppyArm
from poppy_driver.bus import BusError
from poppy_driver.commands import CommandRejected, TrajectoryPoint
from poppy_driver.config import ArmConfig, ConfigError, default_config_path, load_config, parse_config
from poppy_driver.dummy_bus import DummyBus
from poppy_driver.pypot_bus import Xl320Bus

DIRECTIONS = {1: 1, 2: -1, 3: -1, 4: 1, 5: -1, 6: -1}


def run(arm: PoppyArm, seconds: float, until: Callable[[], bool] | None = None) -> JointSample | None:
    """Step the arm at ~100 Hz for ``seconds`` (or until ``until()``); the last sample."""
    sample, deadline = None, time.monotonic() + seconds
    while time.monotonic() < deadline:
        sample = arm.step(time.monotonic()) or sample
        if until is not None and until():
            break
        time.sleep(0.01)
    return sample


def expected_units(motor_id: int, joint_rad: float) -> int:
    """Goal register for a joint angle, computed with the emulator's own (e-manual) conversion."""
    return degrees_to_units(DIRECTIONS[motor_id] * math.degrees(joint_rad))


def stiff(arm: PoppyArm) -> None:
    run(arm, 0.05)
    outcome = arm.set_compliant(False)
    assert outcome.ok, outcome.message


def test_starts_compliant_and_reports_the_joint_frame(arm: PoppyArm, emulator: Xl320Emulator,
                                                      start_deg: dict[int, float]) -> None:
    sample = arm.step(time.monotonic())
    assert sample is not None and sample.names == ("m1", "m2", "m3", "m4", "m5", "m6")
    expected = [math.radians(DIRECTIONS[i] * start_deg[i]) for i in range(1, 7)]
    assert sample.positions == pytest.approx(expected, abs=math.radians(0.3))
    assert sample.velocities == pytest.approx([0.0] * 6) and len(sample.efforts) == 6
    assert not any(emulator.torque_enabled(i) for i in range(1, 7))
    assert arm.status().compliant


def test_stiffening_holds_where_the_arm_is(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    emulator.set_position_deg(3, 42.0)  # moved by hand while limp
    stiff(arm)
    run(arm, 0.1)
    for i in range(1, 7):
        assert emulator.torque_enabled(i)
        assert abs(emulator.goal_units(i) - emulator.present_units(i)) <= 1
        assert emulator.register(i, A_TORQUE_LIMIT) == round(70.0 * 10.23)
        assert emulator.register(i, A_MOVING_SPEED) == round(math.degrees(0.5) / 0.666)  # rest speed
    assert units_to_degrees(emulator.present_units(3)) == pytest.approx(42.0, abs=0.3)


def test_commands_reach_the_goal_registers_in_motor_units_and_directions(arm: PoppyArm,
                                                                       emulator: Xl320Emulator) -> None:
    stiff(arm)
    command = [0.2, 0.3, -0.1, 0.4, 0.0, -0.5]
    assert arm.command_positions(command, time.monotonic()) == []
    run(arm, 0.1)
    for motor_id, target in zip(range(1, 7), command):
        assert abs(emulator.goal_units(motor_id) - expected_units(motor_id, target)) <= 1, motor_id
        assert emulator.register(motor_id, A_MOVING_SPEED) == round(math.degrees(1.5) / 0.666)  # max speed
    run(arm, 2.0, until=lambda: abs(emulator.present_units(6) - emulator.goal_units(6)) <= 1)
    sample = run(arm, 0.05)  # read once more: the sample of the last cycle may predate the arrival
    assert sample is not None and sample.positions[5] == pytest.approx(-0.5, abs=0.01)


def test_targets_beyond_the_limits_are_clamped_and_reported(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    clamps = arm.command_positions([3.0, -3.0, 0.0, 0.0, 0.0, 0.0], time.monotonic())
    assert [c.joint for c in clamps] == ["m1", "m2"]
    run(arm, 0.05)
    assert abs(emulator.goal_units(1) - degrees_to_units(90.0)) <= 1
    assert abs(emulator.goal_units(2) - degrees_to_units(125.0)) <= 1  # m2: joint -125 deg = motor +125 deg
    status = arm.status()
    assert status.clamped_commands == 1 and "m1 3.000 rad clamped to 1.571" in status.last_clamp


def test_bad_commands_are_rejected_counted_and_change_nothing(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    run(arm, 0.05)
    with pytest.raises(CommandRejected, match="compliant"):
        arm.command_positions([0.0] * 6, time.monotonic())
    stiff(arm)
    goals = [emulator.goal_units(i) for i in range(1, 7)]
    with pytest.raises(CommandRejected, match="non-finite"):
        arm.command_positions([0.0, math.nan, 0.0, 0.0, 0.0, 0.0], time.monotonic())
    with pytest.raises(CommandRejected, match="expected 6 positions"):
        arm.command_positions([0.0] * 5, time.monotonic())
    with pytest.raises(CommandRejected, match="unknown joints"):
        arm.command_trajectory(["m1", "gripper"], [TrajectoryPoint(0.5, (0.0, 0.0))], time.monotonic())
    run(arm, 0.05)
    assert [emulator.goal_units(i) for i in range(1, 7)] == pytest.approx(goals, abs=1)
    status = arm.status()
    assert status.rejected_commands == 4 and status.accepted_commands == 0
    assert "unknown joints ['gripper']" in status.last_rejection


def test_trajectory_moves_only_its_joints_along_the_timed_points(arm: PoppyArm, emulator: Xl320Emulator,
                                                                 start_deg: dict[int, float]) -> None:
    stiff(arm)
    arm.set_max_speed(5.0)
    goals = {i: emulator.goal_units(i) for i in range(1, 7)}
    start, end = degrees_to_units(start_deg[3]), expected_units(3, 0.6)
    arm.command_trajectory(["m3"], [TrajectoryPoint(0.4, (0.6,))], time.monotonic())
    seen = []
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline:
        arm.step(time.monotonic())
        seen.append(emulator.goal_units(3))
        time.sleep(0.01)
    assert seen[-1] == pytest.approx(end, abs=1)
    between = sorted({g for g in seen if min(start, end) < g < max(start, end)}, reverse=end < start)
    assert len(between) >= 3, seen  # the goal slides through the interval, it does not jump
    assert [g for g in seen if g in between] == sorted([g for g in seen if g in between], reverse=end < start)
    assert all(abs(emulator.goal_units(i) - goals[i]) <= 1 for i in (1, 2, 4, 5, 6))


def test_watchdog_holds_the_arm_where_it_is_then_lets_go(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    arm.set_watchdog(timeout=0.2, compliant_after=0.3)
    arm.set_max_speed(0.3)
    arm.command_positions([1.2, 0.0, 0.0, 0.0, 0.0, 0.0], time.monotonic())
    run(arm, 0.1)
    assert abs(emulator.goal_units(1) - expected_units(1, 1.2)) <= 1
    run(arm, 1.0, until=lambda: arm.status().watchdog == "holding")
    assert arm.status().mode == "hold"
    run(arm, 0.05)
    assert abs(emulator.goal_units(1) - emulator.present_units(1)) <= 3  # stopped where it was, far from 1.2 rad
    assert units_to_degrees(emulator.goal_units(1)) < 40.0
    run(arm, 2.0, until=lambda: not emulator.torque_enabled(1))
    assert not any(emulator.torque_enabled(i) for i in range(1, 7))
    assert arm.status().watchdog == "compliant"


def test_speed_and_torque_limits_change_at_run_time_within_bounds(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    arm.command_positions([0.0] * 6, time.monotonic())
    arm.set_max_speed(3.0)
    arm.set_torque_limit(40.0)
    run(arm, 0.1)
    assert emulator.register(2, A_MOVING_SPEED) == round(math.degrees(3.0) / 0.666)
    assert emulator.register(2, A_TORQUE_LIMIT) == round(40.0 * 10.23)
    with pytest.raises(ConfigError, match="max_speed=20.0 is outside"):
        arm.set_max_speed(20.0)
    with pytest.raises(ConfigError, match="torque_limit=120.0 is outside"):
        arm.set_torque_limit(120.0)
    assert arm.status().max_speed == 3.0 and arm.status().torque_limit == 40.0


def test_overload_is_reported_kept_shut_down_and_cleared_by_reboot(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    emulator.inject_hardware_error(3, OVERLOAD)
    run(arm, 0.1)
    motor = arm.status().motors[2]
    assert motor.joint == "m3" and motor.reading is not None and motor.reading.errors == ["overload"]
    assert emulator.register(3, A_TORQUE_LIMIT) == 0  # the driver does not undo the motor's own shutdown
    refused = arm.go_to_rest()
    assert not refused.ok and "m3 (overload)" in refused.message
    emulator.boot_time_s = 0.3  # longer than the bus waits after REBOOT: the arm reads again until they answer
    outcome = arm.reboot()
    assert outcome.ok, outcome.message
    run(arm, 0.1)
    assert all(m.reading is not None and m.reading.hardware_error == 0 for m in arm.status().motors)
    assert not any(emulator.torque_enabled(i) for i in range(1, 7)) and arm.status().compliant
    assert arm.go_to_rest().ok
    run(arm, 0.1)
    assert emulator.register(3, A_TORQUE_LIMIT) == round(70.0 * 10.23)


def test_unplugged_port_is_reported_retried_and_resumed(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    emulator.unplug()
    run(arm, 2.0, until=lambda: not arm.status().connected)
    status = arm.status()
    assert not status.connected and emulator.port in status.last_error
    assert arm.step(time.monotonic()) is None
    with pytest.raises(CommandRejected, match="bus not connected"):
        arm.command_positions([0.0] * 6, time.monotonic())
    assert not arm.set_compliant(True).ok
    run(arm, 0.2)
    assert arm.status().failed_attempts >= 1
    emulator.replug()
    run(arm, 3.0, until=lambda: arm.status().connected)
    assert arm.status().connected and arm.status().connections == 2
    assert run(arm, 0.05) is not None
    arm.command_positions([0.1] * 6, time.monotonic())
    run(arm, 0.1)
    assert abs(emulator.goal_units(4) - expected_units(4, 0.1)) <= 1 and emulator.torque_enabled(4)


def test_a_missing_motor_is_named(tmp_path) -> None:
    with Xl320Emulator(ids=range(1, 6), link=tmp_path / "tty") as emulator:
        config = load_config().with_bus(port=emulator.port)
        arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids))
        assert arm.step(time.monotonic()) is None
        assert "motors [6] do not answer" in arm.status().last_error
        arm.close()


def test_a_bus_of_other_servos_is_refused_before_anything_is_written(tmp_path) -> None:
    """An AX-12 answers pings like an XL-320 but has another control table: the driver names the model and never
    writes (no torque enabled, no goal)."""
    with Xl320Emulator(link=tmp_path / "tty", model_numbers={3: 12}) as emulator:
        config = load_config().with_bus(port=emulator.port)
        arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids))
        arm.set_compliant(False)
        assert arm.step(time.monotonic()) is None
        status = arm.status()
        assert not status.connected
        assert "motor 3: model number 12 (AX-12)" in status.last_error and "XL-320" in status.last_error
        assert emulator.instructions[SYNC_WRITE] == 0 and emulator.instructions[WRITE] == 0
        assert not any(emulator.torque_enabled(i) for i in range(1, 7))
        arm.close()


def test_missing_port_fails_cleanly(tmp_path) -> None:
    config: ArmConfig = load_config().with_bus(port=str(tmp_path / "nothing"))
    arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids))
    assert arm.step(time.monotonic()) is None
    assert "cannot open" in arm.status().last_error and not arm.status().connected


def test_a_missing_port_is_reported_again_every_few_seconds_with_how_long(tmp_path) -> None:
    config: ArmConfig = load_config().with_bus(port=str(tmp_path / "nothing"))
    logged: list[str] = []
    arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids), reconnect_period=1.0,
                   log=lambda level, message: logged.append(message))
    start = time.monotonic()  # simulated clock: one attempt per second for 12 s
    for second in range(13):
        arm.step(start + second)
    assert arm.unreachable_for(start + 12) == pytest.approx(12)
    reports = [m for m in logged if "cannot open" in m]
    assert len(reports) == 3  # at 0 s, then every 5 s: the same error is not repeated every attempt
    assert "unreachable for 5 s, 6 attempts" in reports[1] and "unreachable for 10 s" in reports[2]
    arm.close()


def test_dry_run_with_pypots_dummy_simulator() -> None:
    config = load_config()
    arm = PoppyArm(config, DummyBus(config.motor_ids))
    try:
        assert arm.step(time.monotonic()).positions == pytest.approx([0.0] * 6)
        assert arm.set_compliant(False).ok
        arm.set_max_speed(3.0)
        arm.command_positions([0.3, -0.3, 0.2, 0.0, 0.1, -0.1], time.monotonic())
        sample = run(arm, 1.0)
        assert sample.positions == pytest.approx([0.3, -0.3, 0.2, 0.0, 0.1, -0.1], abs=1e-3)
    finally:
        arm.close()


def test_stiffening_an_already_stiff_arm_stops_it_where_it_is(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    stiff(arm)
    arm.set_max_speed(0.3)
    arm.command_positions([1.2, 0.0, 0.0, 0.0, 0.0, 0.0], time.monotonic())
    run(arm, 0.2)
    assert arm.set_compliant(False).ok
    assert abs(emulator.goal_units(1) - emulator.present_units(1)) <= 3
    assert arm.status().mode == "hold"


def test_silent_motors_are_a_bus_fault_too(arm: PoppyArm, emulator: Xl320Emulator) -> None:
    """The adapter stays but the motors stop answering (cable or power cut): timeouts, then a clean resume."""
    stiff(arm)
    emulator.set_responding(False)
    run(arm, 3.0, until=lambda: not arm.status().connected)
    assert not arm.status().connected and "did not respond" in arm.status().last_error
    emulator.set_responding(True)
    run(arm, 3.0, until=lambda: arm.status().connected)
    assert arm.status().connected and run(arm, 0.05) is not None


class DroppingEmulator(Xl320Emulator):
    """The emulated bus, except that the next ``drop`` sync-read requests get no answer (a reply lost on the wire)."""

    drop = 0

    def _answer(self, raw: bytes) -> bytes:
        reply = super()._answer(raw)
        if raw[7] == SYNC_READ and self.drop > 0:
            self.drop -= 1
            return b""
        return reply


def test_a_missed_reply_is_retried_before_it_is_a_bus_error(tmp_path) -> None:
    """Issue 61: one sync read that timed out (a loaded machine, a real bus dropping a reply) made set_compliant
    report 'motors 254 did not respond'. A timed-out read is tried again, ``bus.retries`` times (2), then it is a
    bus error."""
    with DroppingEmulator(positions_deg={1: 10.0}, link=tmp_path / "tty") as emulator:
        config = load_config().with_bus(port=emulator.port)
        assert config.bus.retries == 2
        bus = Xl320Bus(config.bus, config.motor_ids)
        arm = PoppyArm(config, bus, reconnect_period=0.05)
        try:
            stiff(arm)
            emulator.drop = 2
            outcome = arm.set_compliant(False)
            assert outcome.ok, outcome.message
            assert arm.status().connected and bus.retried >= 2 and emulator.drop == 0
            emulator.drop = 3  # one more than the retries: a bus error, named
            with pytest.raises(BusError, match=r"sync read on .*did not respond.*\(after 3 tries\)"):
                bus.read()
            assert bus.read()[1].torque_enabled  # the next one goes through
        finally:
            arm.close()


def test_the_retries_are_a_checked_config_value() -> None:
    data = yaml.safe_load(default_config_path().read_text())
    data["bus"]["retries"] = 11
    with pytest.raises(ConfigError, match=r"bus.retries=11 must be an integer in \[0, 10\]"):
        parse_config(data)
    data["bus"]["retries"] = 0
    assert parse_config(data).bus.retries == 0
