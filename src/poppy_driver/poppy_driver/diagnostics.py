"""What the driver reports on /diagnostics, as plain data: one entry for the bus, one per motor."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from .arm import ArmStatus, MotorStatus

HOT_C = 60.0  # the XL-320's default temperature limit is 65 C


class Level(IntEnum):  # diagnostic_msgs/DiagnosticStatus levels
    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


@dataclass(frozen=True)
class Entry:
    level: Level
    name: str
    message: str
    hardware_id: str
    values: dict[str, str] = field(default_factory=dict)


def build_entries(status: ArmStatus, prefix: str, hardware_id: str, loop_rate_hz: float) -> list[Entry]:
    return [_bus_entry(status, prefix, hardware_id, loop_rate_hz)] + [
        _motor_entry(motor, status.connected, prefix, hardware_id) for motor in status.motors]


def _bus_entry(status: ArmStatus, prefix: str, hardware_id: str, loop_rate_hz: float) -> Entry:
    if not status.connected:
        level = Level.ERROR
        message = f"bus unavailable: {status.last_error or 'not connected yet'}; retrying"
    else:
        level = Level.OK
        state = "compliant" if status.compliant else f"stiff ({status.mode})"
        message = f"connected, {state}, watchdog {status.watchdog}"
    values = {
        "bus": status.bus,
        "connected": str(status.connected),
        "last bus error": status.last_error,
        "failed connection attempts": str(status.failed_attempts),
        "connections": str(status.connections),
        "bus errors": str(status.bus_errors),
        "control loop rate [Hz]": f"{loop_rate_hz:.1f}",
        "compliant": str(status.compliant),
        "mode": status.mode,
        "watchdog": status.watchdog,
        "max speed [rad/s]": f"{status.max_speed:.3f}",
        "torque limit [%]": f"{status.torque_limit:.1f}",
        "accepted commands": str(status.accepted_commands),
        "rejected commands": str(status.rejected_commands),
        "last rejection": status.last_rejection,
        "clamped commands": str(status.clamped_commands),
        "last clamp": status.last_clamp,
    }
    return Entry(level, f"{prefix}: bus", message, hardware_id, values)


def _motor_entry(motor: MotorStatus, connected: bool, prefix: str, hardware_id: str) -> Entry:
    name = f"{prefix}: {motor.joint} (id {motor.motor_id})"
    reading = motor.reading
    if reading is None:
        message = "no data: bus unavailable" if not connected else "no data yet"
        return Entry(Level.STALE, name, message, hardware_id, {"motor id": str(motor.motor_id)})
    if reading.hardware_error:
        level, message = Level.ERROR, f"hardware error: {', '.join(reading.errors)} (shut down; reboot to clear)"
    elif reading.temperature_c >= HOT_C:
        level, message = Level.WARN, f"hot: {reading.temperature_c:.0f} C"
    else:
        level, message = Level.OK, "ok"
    values = {
        "motor id": str(motor.motor_id),
        "hardware error status": f"0x{reading.hardware_error:02x}",
        "torque enabled": str(reading.torque_enabled),
        "torque limit [%]": f"{reading.torque_limit_percent:.1f}",
        "load [%]": f"{reading.load_percent:.1f}",
        "temperature [C]": f"{reading.temperature_c:.0f}",
        "voltage [V]": f"{reading.voltage_v:.1f}",
        "present position [deg, motor frame]": f"{reading.position_deg:.2f}",
        "goal position [deg, motor frame]": f"{reading.goal_deg:.2f}",
        "moving speed [deg/s]": f"{reading.moving_speed_deg_s:.1f}",
    }
    return Entry(level, name, message, hardware_id, values)
