"""The shipped Ergo Jr description, its validation, and the joint <-> motor frame conversions."""
from __future__ import annotations

import copy
import math

import pytest
import yaml

from poppy_driver.config import ConfigError, default_config_path, load_config, parse_config
from poppy_driver.joints import joint_angle, joint_effort, joint_velocity, motor_degrees
from poppy_driver.xl320 import BLOCK_LENGTH, describe_hardware_error, parse_block, speed_units


def raw_config() -> dict:
    return yaml.safe_load(default_config_path().read_text())


def test_shipped_config_matches_pypots_ergo_jr() -> None:
    config = load_config()
    assert config.joint_names == ("m1", "m2", "m3", "m4", "m5", "m6")
    assert config.motor_ids == (1, 2, 3, 4, 5, 6)
    assert config.bus.baudrate == 1_000_000
    assert [j.direction for j in config.joints] == [1, -1, -1, 1, -1, -1]  # direct, indirect, ... as in pypot
    m2 = config.joints[1]
    assert (math.degrees(m2.lower_rad), math.degrees(m2.upper_rad)) == pytest.approx((-125.0, 90.0))
    assert [round(math.degrees(a)) for a in config.rest_pose] == [0, -65, 55, 0, -20, 20]


@pytest.mark.parametrize(("edit", "field"), [
    (lambda c: c["joints"][2].update(id=1), "joints[].id"),
    (lambda c: c["joints"][0].update(orientation="sideways"), "joints[0].orientation"),
    (lambda c: c["joints"][3].pop("lower_deg"), "joints[3].lower_deg"),
    (lambda c: c["joints"][4].update(lower_deg=100.0), "joints[4]"),
    (lambda c: c["rest_pose_deg"].update(m2=-150.0), "rest_pose_deg.m2"),
    (lambda c: c["rest_pose_deg"].update(m9=0.0), "rest_pose_deg"),
    (lambda c: c["safety"].update(max_speed_rad_s=50.0), "safety.max_speed_rad_s"),
    (lambda c: c["safety"].update(torque_limit_percent=-1.0), "safety.torque_limit_percent"),
    (lambda c: c["bus"].pop("port"), "bus.port"),
])
def test_bad_config_names_the_field(edit, field: str) -> None:
    data = copy.deepcopy(raw_config())
    edit(data)
    with pytest.raises(ConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_config(data)


def test_directions_and_offsets_round_trip() -> None:
    m1, m2 = load_config().joints[:2]
    assert motor_degrees(m1, math.radians(30.0)) == pytest.approx(30.0)
    assert motor_degrees(m2, math.radians(30.0)) == pytest.approx(-30.0)  # indirect
    assert joint_angle(m2, -30.0) == pytest.approx(math.radians(30.0))
    assert joint_velocity(m2, 90.0) == pytest.approx(-math.pi / 2)
    assert joint_effort(m1, 50.0) == pytest.approx(0.195)  # half the 0.39 N*m stall torque
    shifted = type(m2)(**{**m2.__dict__, "offset_deg": 10.0})
    assert joint_angle(shifted, motor_degrees(shifted, 0.25)) == pytest.approx(0.25)


def test_register_block_is_decoded_in_pypot_units() -> None:
    raw = [0] * BLOCK_LENGTH

    def put16(address: int, value: int) -> None:
        raw[address - 24], raw[address - 23] = value & 0xFF, value >> 8

    raw[0] = 1  # torque enable
    put16(30, 1023)  # goal: +150 deg
    put16(35, 716)  # torque limit 70 %
    put16(37, 0)  # present: -150 deg
    put16(39, 1024 + 150)  # present speed: clockwise 150 units = -99.9 deg/s
    put16(41, 512)  # load: +50 %
    raw[45 - 24], raw[46 - 24], raw[50 - 24] = 74, 41, 0x01
    reading = parse_block(raw)
    assert reading.torque_enabled and reading.goal_deg == 150.0 and reading.position_deg == -150.0
    assert reading.torque_limit_percent == pytest.approx(70.0)
    assert reading.speed_deg_s == pytest.approx(-99.9)
    assert reading.load_percent == pytest.approx(50.0, abs=0.1)
    assert (reading.voltage_v, reading.temperature_c) == pytest.approx((7.4, 41.0))
    assert reading.errors == ["overload"]
    assert describe_hardware_error(0x06) == ["overheating", "input voltage"]


def test_moving_speed_is_never_zero_which_would_mean_full_speed() -> None:
    assert speed_units(0.0) == 1
    assert speed_units(100.0) == 150
