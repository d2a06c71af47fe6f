"""Joint frame (ROS: rad, rad/s, N*m) <-> motor frame (pypot: degrees, degrees/s, percent of stall torque)."""
from __future__ import annotations

import math

from .config import JointConfig

XL320_STALL_TORQUE_NM = 0.39  # at 7.4 V (XL-320 e-manual)


def motor_degrees(joint: JointConfig, angle_rad: float) -> float:
    return joint.direction * (math.degrees(angle_rad) + joint.offset_deg)


def joint_angle(joint: JointConfig, motor_deg: float) -> float:
    return math.radians(joint.direction * motor_deg - joint.offset_deg)


def joint_velocity(joint: JointConfig, motor_deg_s: float) -> float:
    return math.radians(joint.direction * motor_deg_s)


def joint_effort(joint: JointConfig, load_percent: float) -> float:
    """A rough torque estimate: the XL-320's load register is a percentage of its output, not a calibrated torque."""
    return joint.direction * load_percent / 100.0 * XL320_STALL_TORQUE_NM


def speed_deg_s(speed_rad_s: float) -> float:
    return math.degrees(speed_rad_s)
