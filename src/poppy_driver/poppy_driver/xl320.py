"""XL-320 control table as the driver reads it: one contiguous block per motor, converted with pypot's formulas."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pypot.dynamixel import conversion

MODEL = "XL-320"
MODEL_NUMBER = 350

# One sync read covers Torque Enable (24) .. Hardware Error Status (50): commanded and measured state together.
BLOCK_START = 24
BLOCK_LENGTH = 27
_TORQUE_ENABLE, _GOAL_POSITION, _MOVING_SPEED, _TORQUE_LIMIT = 24, 30, 32, 35
_PRESENT_POSITION, _PRESENT_SPEED, _PRESENT_LOAD = 37, 39, 41
_PRESENT_VOLTAGE, _PRESENT_TEMPERATURE, _MOVING, _HARDWARE_ERROR = 45, 46, 49, 50

REBOOT_INSTRUCTION = 0x08  # protocol 2.0; pypot has no packet class for it

# Hardware Error Status (50) / Shutdown (18) bits of the XL-320
HARDWARE_ERRORS = {0x01: "overload", 0x02: "overheating", 0x04: "input voltage"}


@dataclass(frozen=True)
class MotorReading:
    """One motor's registers in the motor frame (degrees, degrees/s, percent, volts, Celsius)."""

    position_deg: float
    speed_deg_s: float
    load_percent: float
    goal_deg: float
    moving_speed_deg_s: float
    torque_enabled: bool
    torque_limit_percent: float
    voltage_v: float
    temperature_c: float
    moving: bool
    hardware_error: int

    @property
    def errors(self) -> list[str]:
        return describe_hardware_error(self.hardware_error)


def parse_block(raw: Sequence[int]) -> MotorReading:
    if len(raw) != BLOCK_LENGTH:
        raise ValueError(f"register block: expected {BLOCK_LENGTH} bytes, got {len(raw)}")

    def u8(address: int) -> int:
        return raw[address - BLOCK_START]

    def u16(address: int) -> int:
        return u8(address) | u8(address + 1) << 8

    return MotorReading(
        position_deg=conversion.dxl_to_degree(u16(_PRESENT_POSITION), MODEL),
        speed_deg_s=conversion.dxl_to_speed(u16(_PRESENT_SPEED), MODEL),
        load_percent=conversion.dxl_to_load(u16(_PRESENT_LOAD), MODEL),
        goal_deg=conversion.dxl_to_degree(u16(_GOAL_POSITION), MODEL),
        moving_speed_deg_s=conversion.dxl_to_speed(u16(_MOVING_SPEED), MODEL),
        torque_enabled=bool(u8(_TORQUE_ENABLE)),
        torque_limit_percent=conversion.dxl_to_torque(u16(_TORQUE_LIMIT), MODEL),
        voltage_v=conversion.dxl_to_voltage(u8(_PRESENT_VOLTAGE), MODEL),
        temperature_c=conversion.dxl_to_temperature(u8(_PRESENT_TEMPERATURE), MODEL),
        moving=bool(u8(_MOVING)),
        hardware_error=u8(_HARDWARE_ERROR),
    )


def position_units(degrees: float) -> int:
    return conversion.degree_to_dxl(degrees, MODEL)


def speed_units(degrees_per_s: float) -> int:
    """Moving speed register; never 0, which on an XL-320 means "no speed control, full speed"."""
    return max(1, conversion.speed_to_dxl(abs(degrees_per_s), MODEL))


def torque_units(percent: float) -> int:
    return conversion.torque_to_dxl(percent, MODEL)


def describe_hardware_error(bits: int) -> list[str]:
    names = [name for bit, name in HARDWARE_ERRORS.items() if bits & bit]
    unknown = bits & ~sum(HARDWARE_ERRORS)
    return names + ([f"unknown bits 0x{unknown:02x}"] if unknown else [])
