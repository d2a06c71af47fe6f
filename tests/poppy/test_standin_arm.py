"""The stand-in arm: XL-320 control tables moved by PyBullet physics (poppy_standin.physics), its settings' bounds,
and the real driver on top of it through pypot and the pty."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from poppy_standin.physics import PhysicsArm
from poppy_standin.settings import StandInError, load
from poppy_standin.xl320 import (
    A_GOAL_POSITION,
    A_MOVING_SPEED,
    A_TORQUE_ENABLE,
    A_TORQUE_LIMIT,
    Xl320Emulator,
    Xl320Motor,
    degrees_to_units,
    units_to_degrees,
)

from poppy_driver.arm import PoppyArm
from poppy_driver.config import load_config
from poppy_driver.pypot_bus import Xl320Bus

STEP = 1.0 / 240.0


def stiff_motors(speed_units: int = 0) -> dict[int, Xl320Motor]:
    """Six motors with torque on at the driver's 70 % limit, holding joint angle 0 (speed 0 = no-load speed)."""
    motors = {i: Xl320Motor(i) for i in range(1, 7)}
    for motor in motors.values():
        motor.table[A_TORQUE_ENABLE] = 1
        motor.write16(A_TORQUE_LIMIT, round(0.7 * 1023))
        motor.write16(A_MOVING_SPEED, speed_units)
        motor.write16(A_GOAL_POSITION, degrees_to_units(0.0))
    return motors


def trajectory(arm: PhysicsArm, motors: dict[int, Xl320Motor], motor_id: int, steps: int) -> list[float]:
    """Joint angle (degrees) of ``motor_id`` after each of ``steps`` physics steps."""
    out = []
    for _ in range(steps):
        arm.advance(motors, STEP)
        out.append(math.degrees(arm.joint_angles()[motor_id]))
    return out


def settle(arm: PhysicsArm, motors: dict[int, Xl320Motor], seconds: float = 0.5) -> None:
    for _ in range(round(seconds / STEP)):
        arm.advance(motors, STEP)


def test_a_joint_under_a_weak_torque_cap_lags_a_strong_one() -> None:
    angles = {}
    for scale in (1.0, 0.3):
        arm = PhysicsArm(load("reference", overrides={"torque_scale": scale, "latency_s": 0.0}))
        motors = stiff_motors()
        settle(arm, motors)
        motors[2].write16(A_GOAL_POSITION, degrees_to_units(-60.0))  # m2 (shoulder, indirect): joint +60 degrees
        angles[scale] = trajectory(arm, motors, 2, 240)
        arm.close()
    strong, weak = angles[1.0], angles[0.3]
    assert strong[19] > weak[19] + 20.0  # after 83 ms the strong shoulder is far ahead
    assert all(abs(a - 60.0) < 1.5 for a in strong[100:])  # and holds its goal from 0.42 s on
    assert max(abs(a - 60.0) for a in weak[100:]) > 10.0  # the weak one is still off by more than 10 degrees


def test_latency_delays_the_response_by_the_configured_steps() -> None:
    onsets = {}
    for latency_steps in (0, 12):
        arm = PhysicsArm(load("reference", overrides={"latency_s": latency_steps * STEP, "backlash_deg": 0.0}))
        assert arm.latency_steps == latency_steps
        motors = stiff_motors()
        settle(arm, motors)
        start = math.degrees(arm.joint_angles()[1])
        motors[1].write16(A_GOAL_POSITION, degrees_to_units(30.0))  # m1 (base yaw, no gravity load): +30 degrees
        path = trajectory(arm, motors, 1, 120)
        onsets[latency_steps] = next(k for k, a in enumerate(path) if a - start > 0.5)
        assert all(abs(a - start) < 0.05 for a in path[:latency_steps])  # nothing moves before the command acts
        arm.close()
    assert onsets[12] - onsets[0] == 12


def test_gear_play_leaves_the_joint_short_of_a_reversed_goal() -> None:
    finals = {}
    for backlash in (0.0, 4.0):
        arm = PhysicsArm(load("reference", overrides={"backlash_deg": backlash, "latency_s": 0.0}))
        motors = stiff_motors()
        motors[1].write16(A_GOAL_POSITION, degrees_to_units(20.0))
        settle(arm, motors)
        motors[1].write16(A_GOAL_POSITION, degrees_to_units(10.0))  # reversal: back by 10 degrees
        settle(arm, motors)
        finals[backlash] = math.degrees(arm.joint_angles()[1])
        arm.close()
    assert finals[0.0] == pytest.approx(10.0, abs=0.3)
    assert finals[4.0] == pytest.approx(12.0, abs=0.3)  # half the play short, on the side it came from


def test_compliant_joints_fall_under_gravity_and_the_sensors_report_the_motor_frame() -> None:
    arm = PhysicsArm(load("reference"), start_deg={2: -60.0})  # m2 indirect: joint +60, leaning out
    motors = {i: Xl320Motor(i) for i in range(1, 7)}  # torque off
    arm.advance(motors, STEP)
    assert units_to_degrees(motors[2].read16(37)) == pytest.approx(-60.0, abs=0.5)
    settle(arm, motors, 1.0)
    joint = math.degrees(arm.joint_angles()[2])
    assert joint > 75.0  # limp: it fell further out
    assert units_to_degrees(motors[2].read16(37)) == pytest.approx(-joint, abs=0.3)  # present position, motor frame
    arm.close()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"torque_scale": 50.0}, r"--set.torque_scale=50 is outside \[0.01, 2\] x the stall torque"),
    ({"latency_s": -0.01}, r"--set.latency_s=-0.01 is outside \[0, 0.5\] s"),
    ({"backlash_deg": float("nan")}, r"--set.backlash_deg=nan is not a number; allowed: \[0, 10\] degrees")])
def test_settings_outside_physical_bounds_are_refused_naming_the_value(overrides: dict, message: str) -> None:
    with pytest.raises(StandInError, match=message):
        load("reference", overrides=overrides)
    known = r"\['reference', 'slow_laggy', 'stiff_quick', 'weak_torque', 'worn'\]"
    with pytest.raises(StandInError, match=rf"setting 'nope' is not in .*; known: {known}"):
        load("nope")


def test_the_command_refuses_a_bad_setting_in_one_line_and_opens_no_port(tmp_path: Path) -> None:
    link = tmp_path / "ttyPOPPY"
    done = subprocess.run([sys.executable, "-m", "poppy_standin.cli", "--link", str(link), "--set",
                           "position_gain=3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and not link.exists()
    assert done.stderr.strip() == "adr-standin-arm: --set.position_gain=3 is outside [0.0001, 1] PyBullet positionGain"


def test_the_driver_moves_the_physical_stand_in_and_its_limits_still_hold(tmp_path: Path) -> None:
    """Real pypot on the pty: a command beyond m2's upper limit (90 degrees) is clamped by the driver, and the
    simulated joint, moved by physics toward the clamped goal, ends at the limit, not beyond it."""
    physics = PhysicsArm(load("reference"))
    with Xl320Emulator(link=tmp_path / "ttyPOPPY", motion=physics) as emulator:
        config = load_config().with_bus(port=emulator.port)
        arm = PoppyArm(config, Xl320Bus(config.bus, config.motor_ids), reconnect_period=0.05)
        try:
            deadline = time.monotonic() + 0.2
            while time.monotonic() < deadline:
                arm.step(time.monotonic())
                time.sleep(0.01)
            assert arm.set_compliant(False).ok
            command = [0.0, math.radians(150.0), 0.0, 0.0, 0.0, 0.0]
            assert arm.command_positions(command, time.monotonic()), "the driver reports the clamp"
            sample, deadline = None, time.monotonic() + 3.0
            while time.monotonic() < deadline:  # a fresh command every step, as the policy runner sends them
                arm.command_positions(command, time.monotonic())
                sample = arm.step(time.monotonic()) or sample
                time.sleep(0.01)
        finally:
            arm.close()
        with emulator.lock:
            joint = math.degrees(physics.joint_angles()[2])
    assert units_to_degrees(emulator.goal_units(2)) == pytest.approx(-90.0, abs=0.3)  # indirect: motor -90
    assert 85.0 < joint < 90.6  # at the limit (within the gear play), never past it
    assert sample is not None and math.degrees(sample.positions[1]) == pytest.approx(joint, abs=0.5)
    physics.close()


@pytest.mark.parametrize("argv, message", [
    (["--ids", "0", "300"], "argument --ids: 0 is not a motor id (1-252)"),
    (["--ids", "-1"], "argument --ids: -1 is not a motor id (1-252)"),
    (["--ids", "1", "1"], "argument --ids: [1, 1] names a motor twice"),
    (["--link", "{missing}/tty"], "the folder {missing} does not exist"),
    (["--link", "{file}"], "argument --link: {file} is a file that exists; choose a free path (it is never replaced)"),
    (["--link", "{folder}"], "argument --link: {folder} is a folder that exists"),
    (["--link", "{foreign_link}"], "is a symlink to {file}, not an emulator's pty link"),
])
def test_a_typo_in_the_stand_ins_arguments_is_one_line_and_loses_no_file(tmp_path: Path, argv, message) -> None:
    names = {"missing": tmp_path / "missing", "file": tmp_path / "notes.txt", "folder": tmp_path / "folder",
             "foreign_link": tmp_path / "link"}
    names["file"].write_text("kept")
    names["folder"].mkdir()
    names["foreign_link"].symlink_to(names["file"])
    argv = [a.format(**names) for a in argv]
    if "--link" not in argv:
        argv += ["--link", str(tmp_path / "tty")]
    done = subprocess.run([sys.executable, "-m", "poppy_standin.cli", *argv], capture_output=True, text=True,
                          timeout=60)
    lines = [line for line in done.stderr.splitlines() if line.strip() and "pybullet build time" not in line]
    assert done.returncode == 2 and message.format(**names) in lines[-1], done.stderr
    assert "Traceback" not in done.stderr
    assert names["file"].read_text() == "kept" and names["folder"].is_dir()
    assert os.readlink(names["foreign_link"]) == str(names["file"]) and not (tmp_path / "tty").exists()


def test_a_stale_link_of_an_earlier_emulator_is_replaced(tmp_path: Path) -> None:
    link = tmp_path / "tty"
    link.symlink_to("/dev/pts/999")  # what a killed stand-in leaves behind
    with Xl320Emulator(link=link) as emulator:
        assert os.readlink(link) == emulator.port or os.readlink(link).startswith("/dev/pts/")
    assert not link.exists() and not link.is_symlink()
