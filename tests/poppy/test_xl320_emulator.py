"""The emulated XL-320 bus speaks protocol 2.0 the way pypot (and the e-manual) expect, byte for byte."""
from __future__ import annotations

import os
import termios
import time

import pytest
import serial
from poppy_standin.xl320 import (
    A_GOAL_POSITION,
    A_HARDWARE_ERROR,
    A_MOVING_SPEED,
    A_PRESENT_POSITION,
    A_TORQUE_ENABLE,
    A_TORQUE_LIMIT,
    ALERT_BIT,
    ERROR_ACCESS,
    ERROR_CRC,
    OVERLOAD,
    PING,
    READ,
    REBOOT,
    SYNC_READ,
    WRITE,
    Xl320Emulator,
    crc16,
    degrees_to_units,
    packet,
)
from pypot.dynamixel.io import Dxl320IO, DxlError
from pypot.dynamixel.protocol import v2


def exchange(emu: Xl320Emulator, request: bytes, expect: int) -> bytes:
    with serial.Serial(emu.port, 1_000_000, timeout=0.2) as port:
        port.write(request)
        return port.read(expect)


def test_crc_is_the_protocol_crc_and_pypots() -> None:
    assert packet(1, PING, b"").hex() == "fffffd0001030001194e"  # PING id 1, the e-manual's example
    data = bytes(range(200))
    assert crc16(data) == v2.crc16(bytearray(data), len(data))


def test_ping_answers_model_350(emulator: Xl320Emulator) -> None:
    reply = exchange(emulator, packet(3, PING, b""), 14)
    assert reply[:8] == bytes.fromhex("fffffd0003070055")
    assert reply[8] == 0 and int.from_bytes(reply[9:11], "little") == 350
    assert crc16(reply[:-2]) == int.from_bytes(reply[-2:], "little")


def test_bad_crc_gets_a_crc_error_and_read_only_write_an_access_error(emulator: Xl320Emulator) -> None:
    corrupted = bytearray(packet(2, READ, bytes([37, 0, 2, 0])))
    corrupted[-1] ^= 0xFF
    assert exchange(emulator, bytes(corrupted), 11)[8] == ERROR_CRC
    write_present = packet(2, WRITE, bytes([A_PRESENT_POSITION, 0, 0, 0]))
    assert exchange(emulator, write_present, 11)[8] == ERROR_ACCESS
    assert emulator.crc_errors == 1


def test_pypot_scans_and_reads_through_sync_read(emulator: Xl320Emulator) -> None:
    io = Dxl320IO(emulator.port, baudrate=1_000_000, timeout=0.05, use_sync_read=True)
    try:
        assert io.scan(range(1, 9)) == [1, 2, 3, 4, 5, 6]
        assert io.get_model([1, 6]) == ("XL-320", "XL-320")
        positions = io.get_present_position([1, 2, 3, 4, 5, 6])
        assert positions == pytest.approx((10.0, -20.0, 30.0, -40.0, 15.0, -5.0), abs=0.3)
        assert emulator.instructions[SYNC_READ] >= 1
    finally:
        io.close()


def test_motor_moves_toward_goal_at_moving_speed_only_with_torque(emulator: Xl320Emulator) -> None:
    motor = emulator.motor(1)
    with emulator.lock:
        motor.write(A_GOAL_POSITION, degrees_to_units(60.0).to_bytes(2, "little"))
        motor.write(A_MOVING_SPEED, (150).to_bytes(2, "little"))  # 150 * 0.666 = 100 deg/s
    time.sleep(0.1)
    assert emulator.present_units(1) == degrees_to_units(10.0)  # torque off: limp, it stays
    with emulator.lock:
        motor.write(A_TORQUE_ENABLE, b"\x01")
    time.sleep(0.2)
    moved = (emulator.present_units(1) - degrees_to_units(10.0)) * 300 / 1023
    assert 10.0 < moved < 30.0  # ~20 degrees in 0.2 s at 100 deg/s (thread timing leaves slack)
    time.sleep(0.5)
    assert emulator.present_units(1) == degrees_to_units(60.0)


def test_overload_shuts_down_and_raises_the_alert_until_reboot(emulator: Xl320Emulator) -> None:
    emulator.inject_hardware_error(4, OVERLOAD)
    assert emulator.register(4, A_TORQUE_LIMIT) == 0  # XL-320 alarm shutdown
    reply = exchange(emulator, packet(4, READ, bytes([A_HARDWARE_ERROR, 0, 1, 0])), 12)
    assert reply[8] == ALERT_BIT and reply[9] == OVERLOAD
    exchange(emulator, packet(4, REBOOT, b""), 11)
    assert emulator.register(4, A_HARDWARE_ERROR, 1) == 0
    assert emulator.register(4, A_TORQUE_LIMIT) == 1023


def test_silent_motors_time_out_and_an_unplugged_port_fails(emulator: Xl320Emulator) -> None:
    io = Dxl320IO(emulator.port, baudrate=1_000_000, timeout=0.02, use_sync_read=True)
    try:
        emulator.set_responding(False)
        assert io.scan([1, 2]) == []
        emulator.set_responding(True)
        assert io.scan([1, 2]) == [1, 2]
        emulator.unplug()
        assert not os.path.exists(emulator.port)
        with pytest.raises((DxlError, serial.SerialException, OSError, termios.error)):  # EIO, as a hung-up tty
            io.get_present_position([1, 2])
    finally:
        io.close()
    emulator.replug()
    io = Dxl320IO(emulator.port, baudrate=1_000_000, timeout=0.05, use_sync_read=True)
    try:
        assert io.get_present_position([1]) == pytest.approx((10.0,), abs=0.3)  # state kept across the replug
    finally:
        io.close()
