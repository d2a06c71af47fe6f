"""What the arm needs from a motor bus. Values are in the motor frame: degrees, degrees/s, percent."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from .xl320 import MotorReading


class BusError(Exception):
    """The port, the bus or one of its motors cannot be reached (unplugged, timeout, garbled answer)."""


class MotorBus(Protocol):
    @property
    def description(self) -> str:
        """Where the motors are, for logs and diagnostics (e.g. 'XL-320 bus on /dev/ttyAMA0 at 1000000 baud')."""
        ...

    def open(self) -> None:
        """Connect and check that every motor answers; raises BusError otherwise."""

    def close(self) -> None:
        """Release the port; never raises."""

    def read(self) -> dict[int, MotorReading]:
        """The registers of every motor, by id."""

    def write_goals(self, goals: Mapping[int, tuple[float, float]]) -> None:
        """Goal position [deg] and moving speed [deg/s] per motor id."""

    def write_torque_limits(self, limits: Mapping[int, float]) -> None:
        """Torque limit [% of stall torque] per motor id."""

    def write_torque_enable(self, enabled: Mapping[int, bool]) -> None:
        ...

    def reboot(self, ids: Sequence[int]) -> None:
        """Restart the motors (clears hardware errors; they come back with torque off)."""
