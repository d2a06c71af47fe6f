"""pypot's ``dummy`` simulator as a bus: no hardware, goal -> present position at the moving speed (no physics)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pypot.robot import from_config

from .xl320 import MotorReading


class DummyBus:
    def __init__(self, motor_ids: Sequence[int]) -> None:
        self._names = {motor_id: f"motor_{motor_id}" for motor_id in motor_ids}
        self._robot = None
        self._enabled = {motor_id: False for motor_id in motor_ids}
        self._torque_limit = {motor_id: 100.0 for motor_id in motor_ids}

    @property
    def description(self) -> str:
        return "pypot dummy simulator (no hardware)"

    def open(self) -> None:
        # Motor frame on purpose (direct, no offset): the arm applies directions and offsets for every bus alike.
        motors = {name: {"id": motor_id, "type": "XL-320", "orientation": "direct", "offset": 0.0,
                         "angle_limit": [-150.0, 150.0]} for motor_id, name in self._names.items()}
        config = {"controllers": {"dummy": {"attached_motors": list(motors), "port": "dummy", "sync_read": False,
                                            "protocol": 2}},
                  "motorgroups": {}, "motors": motors}
        self._robot = from_config(config, use_dummy_io=True)

    def close(self) -> None:
        robot, self._robot = self._robot, None
        if robot is not None:
            robot.close()

    def read(self) -> dict[int, MotorReading]:
        readings = {}
        for motor_id in self._names:
            motor = self._motor(motor_id)
            readings[motor_id] = MotorReading(
                position_deg=float(motor.present_position), speed_deg_s=0.0, load_percent=0.0,
                goal_deg=float(motor.goal_position), moving_speed_deg_s=float(motor.moving_speed),
                torque_enabled=self._enabled[motor_id], torque_limit_percent=self._torque_limit[motor_id],
                voltage_v=7.4, temperature_c=25.0, moving=motor.present_position != motor.goal_position,
                hardware_error=0,
            )
        return readings

    def write_goals(self, goals: Mapping[int, tuple[float, float]]) -> None:
        for motor_id, (degrees, degrees_per_s) in goals.items():
            motor = self._motor(motor_id)
            motor.moving_speed = abs(degrees_per_s)
            motor.goal_position = degrees

    def write_torque_limits(self, limits: Mapping[int, float]) -> None:
        self._torque_limit.update(limits)

    def write_torque_enable(self, enabled: Mapping[int, bool]) -> None:
        for motor_id, on in enabled.items():
            motor = self._motor(motor_id)
            motor.compliant = not on
            if not on:  # a limp dummy stays where it is
                motor.goal_position = motor.present_position
            self._enabled[motor_id] = on

    def reboot(self, ids: Sequence[int]) -> None:
        self.write_torque_enable({motor_id: False for motor_id in ids})
        self._torque_limit.update({motor_id: 100.0 for motor_id in ids})

    def _motor(self, motor_id: int):
        if self._robot is None:
            raise RuntimeError("dummy bus is not open")
        return getattr(self._robot, self._names[motor_id])
