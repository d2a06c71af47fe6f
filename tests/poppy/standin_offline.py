"""The stand-in arm driven without a bus, in simulated time: what adr-identify's excitation does to its physics.

``standin_log`` writes the goal registers of six emulated XL-320s the way the driver does (at ``driver_rate``, each
tick the newest command, the moving speed and torque limit the driver sets), lets the stand-in's physics
(``PhysicsArm``: the servo model under test) advance one tick at a time, and reads the present-position registers
back (whole position units, like the driver): an identification log with known servo values, in seconds, with no
pty, no ROS and no wall-clock dependence.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from poppy_standin.physics import PhysicsArm
from poppy_standin.xl320 import (
    A_GOAL_POSITION,
    A_MOVING_SPEED,
    A_PRESENT_POSITION,
    A_TORQUE_ENABLE,
    A_TORQUE_LIMIT,
    SPEED_UNIT_DEG_S,
    Xl320Motor,
    degrees_to_units,
    units_to_degrees,
)

from adr_core.envs.ergo_jr import JOINT_NAMES
from adr_core.identify.excitation import excitation
from adr_core.identify.log import ArmLog
from poppy_standin import settings as standin_settings


def standin_log(env_id: str, joints: tuple[str, ...], setting: str = "reference",
                overrides: Mapping[str, float] | None = None, repeats: int = 1, driver_speed: float = 1.5,
                driver_rate: float = 120.0, torque_limit: float = 70.0) -> ArmLog:
    standin = standin_settings.load(setting, overrides=overrides)
    arm = PhysicsArm(standin)
    motors = {w.motor_id: Xl320Motor(w.motor_id) for w in standin.wiring}
    for motor in motors.values():
        motor.table[A_TORQUE_ENABLE] = 1
        motor.write16(A_MOVING_SPEED, round(math.degrees(driver_speed) / SPEED_UNIT_DEG_S))
        motor.write16(A_TORQUE_LIMIT, round(torque_limit / 100 * 1023))
    program = excitation(joints, repeats)
    wires = {w.joint: w for w in standin.wiring}
    tick = 1.0 / driver_rate
    state_t, states = [], []
    k = -1
    try:
        for i in range(int((program.times[-1] + 0.5) / tick)):
            t = i * tick
            while k + 1 < len(program.times) and program.times[k + 1] <= t:
                k += 1
            goal = program.targets[k] if k >= 0 else np.zeros(len(JOINT_NAMES))
            for j, name in enumerate(JOINT_NAMES):
                wire = wires[name]
                motors[wire.motor_id].write16(A_GOAL_POSITION, degrees_to_units(wire.motor_deg(goal[j])))
            arm.advance(motors, tick)
            state_t.append(t + tick)
            states.append([wires[n].joint_rad(units_to_degrees(motors[wires[n].motor_id].read16(A_PRESENT_POSITION)))
                           for n in JOINT_NAMES])
    finally:
        arm.close()
    return ArmLog(env_id, "identify", program.times.copy(), program.targets.copy(), np.array(state_t),
                  np.array(states), program.segments, driver_speed)
