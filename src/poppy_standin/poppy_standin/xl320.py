"""A bus of Dynamixel XL-320 servos speaking protocol 2.0 on a pseudo-terminal: a test double at the byte level.

Whatever opens ``emulator.port`` (pypot's ``Dxl320IO``, pyserial, a terminal) talks to it exactly as it would talk to
an Ergo Jr's motors: instruction packets in, status packets out, CRC-16 checked both ways. Implemented from the
ROBOTIS protocol 2.0 and XL-320 e-manuals (control table, status error byte, alarm shutdown), not from pypot.

Supported instructions: PING, READ, WRITE, REBOOT, SYNC_READ, SYNC_WRITE (others answer "instruction error").
How the horns move is the emulator's ``motion``: by default (``None``) each motor moves its present position toward
its goal at its moving speed while torque is on and its torque limit is above zero (kinematic, no dynamics: fast and
exact, what the driver's tests need); ``poppy_standin.physics.PhysicsArm`` moves them by PyBullet physics of the
arm instead (servo gains, torque caps, latency, backlash: the stand-in arm, ``adr-standin-arm``).
Faults for tests: ``inject_hardware_error`` (e.g. overload -> alarm shutdown: torque limit 0, alert
bit in every status packet until REBOOT), ``set_responding(False)`` (cable to the motors cut: packets are read,
never answered) and ``unplug()`` / ``replug()`` (the serial adapter disappears: the pty is closed and its path
removed; replug makes a new pty behind the same path, the motors keep their state as they stay powered).

pypot flushes the serial output buffer before every packet; on a pty that discards bytes the emulator has not read
yet. The reader thread therefore waits in ``select`` and drains the master side as soon as anything arrives.

Standalone: ``adr-standin-arm --link /tmp/ttyPOPPY`` (poppy_standin.cli) serves six motors until Ctrl-C.
"""
from __future__ import annotations

import os
import select
import threading
import time
import tty
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
STATUS_INSTRUCTION = 0x55

PING, READ, WRITE, REBOOT, SYNC_READ, SYNC_WRITE = 0x01, 0x02, 0x03, 0x08, 0x82, 0x83

# status packet error byte (protocol 2.0): bit 7 = hardware alert, bits 0-6 = error number
ERROR_INSTRUCTION, ERROR_CRC, ERROR_DATA_RANGE, ERROR_DATA_LENGTH, ERROR_ACCESS = 0x02, 0x03, 0x04, 0x05, 0x07
ALERT_BIT = 0x80

# XL-320 hardware error status (50) / shutdown (18) bits
OVERLOAD, OVERHEATING, INPUT_VOLTAGE = 0x01, 0x02, 0x04

MODEL_NUMBER = 350
CONTROL_TABLE_SIZE = 53
POSITION_UNITS, POSITION_DEGREES = 1023, 300.0
SPEED_UNIT_DEG_S = 0.111 * 6.0  # 0.111 rpm per unit
MAX_SPEED_UNITS = 1023  # "0" means this: no speed control, the motor's no-load speed

# control table addresses (XL-320 e-manual)
A_MODEL, A_FIRMWARE, A_ID, A_BAUD, A_RETURN_DELAY = 0, 2, 3, 4, 5
A_CW_LIMIT, A_CCW_LIMIT, A_CONTROL_MODE, A_TEMPERATURE_LIMIT = 6, 8, 11, 12
A_MIN_VOLTAGE, A_MAX_VOLTAGE, A_MAX_TORQUE, A_STATUS_RETURN, A_SHUTDOWN = 13, 14, 15, 17, 18
A_TORQUE_ENABLE, A_LED, A_D_GAIN, A_I_GAIN, A_P_GAIN = 24, 25, 27, 28, 29
A_GOAL_POSITION, A_MOVING_SPEED, A_TORQUE_LIMIT = 30, 32, 35
A_PRESENT_POSITION, A_PRESENT_SPEED, A_PRESENT_LOAD = 37, 39, 41
A_PRESENT_VOLTAGE, A_PRESENT_TEMPERATURE, A_REGISTERED, A_MOVING, A_HARDWARE_ERROR, A_PUNCH = 45, 46, 47, 49, 50, 51

EEPROM_WRITABLE = {A_ID, A_BAUD, A_RETURN_DELAY, *range(6, 10), A_CONTROL_MODE, A_TEMPERATURE_LIMIT, A_MIN_VOLTAGE,
                   A_MAX_VOLTAGE, A_MAX_TORQUE, A_MAX_TORQUE + 1, A_STATUS_RETURN, A_SHUTDOWN}
RAM_WRITABLE = {A_TORQUE_ENABLE, A_LED, A_D_GAIN, A_I_GAIN, A_P_GAIN, *range(30, 34), 35, 36, 51, 52}


def crc16(data: bytes) -> int:
    """CRC-16 of protocol 2.0 (polynomial 0x8005, initial value 0, not reflected), bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def packet(motor_id: int, instruction: int, params: bytes) -> bytes:
    """A complete protocol 2.0 packet (no byte stuffing: pypot sends none and expects none)."""
    body = HEADER + bytes([motor_id]) + (len(params) + 3).to_bytes(2, "little") + bytes([instruction]) + params
    return body + crc16(body).to_bytes(2, "little")


def status_packet(motor_id: int, error: int, params: bytes = b"") -> bytes:
    return packet(motor_id, STATUS_INSTRUCTION, bytes([error]) + params)


def degrees_to_units(degrees: float) -> int:
    """Motor-frame degrees (0 at the middle of the 300 degree range) to position units, as the e-manual defines."""
    return round((degrees + POSITION_DEGREES / 2) * POSITION_UNITS / POSITION_DEGREES)


def units_to_degrees(units: float) -> float:
    return units * POSITION_DEGREES / POSITION_UNITS - POSITION_DEGREES / 2


def signed_to_register(value: float) -> int:
    """Speed/load registers: 0-1023 counter-clockwise (positive), 1024-2047 clockwise (negative)."""
    magnitude = min(1023, round(abs(value)))
    return magnitude + (1024 if value < 0 and magnitude else 0)


@dataclass
class Xl320Motor:
    """One servo: its control table and a first-order motion model."""

    motor_id: int
    position_units: float = 512.0
    external_load_percent: float = 0.0  # signed; what a hand or gravity pushes against the horn
    booting_until: float = 0.0  # monotonic time until which a rebooting servo stays silent
    model_number: int = MODEL_NUMBER  # another model's number stands in for a bus of other servos (e.g. 12, AX-12)
    table: bytearray = field(default_factory=lambda: bytearray(CONTROL_TABLE_SIZE))

    def __post_init__(self) -> None:
        self.power_on()

    def power_on(self) -> None:
        """Factory EEPROM as shipped for an Ergo Jr (return delay 0, as pypot sets it) and RAM after boot."""
        t = self.table
        self.write16(A_MODEL, self.model_number)
        t[A_FIRMWARE], t[A_ID], t[A_BAUD], t[A_RETURN_DELAY] = 29, self.motor_id, 3, 0
        self.write16(A_CW_LIMIT, 0)
        self.write16(A_CCW_LIMIT, POSITION_UNITS)
        t[A_CONTROL_MODE], t[A_TEMPERATURE_LIMIT], t[A_MIN_VOLTAGE], t[A_MAX_VOLTAGE] = 2, 65, 60, 90
        self.write16(A_MAX_TORQUE, 1023)
        t[A_STATUS_RETURN], t[A_SHUTDOWN] = 2, OVERLOAD | OVERHEATING
        self.reboot()

    def reboot(self) -> None:
        """RAM back to its boot values: torque off, torque limit = max torque, errors cleared. Position stays."""
        t = self.table
        t[A_TORQUE_ENABLE], t[A_LED], t[A_D_GAIN], t[A_I_GAIN], t[A_P_GAIN] = 0, 0, 0, 0, 32
        self.write16(A_GOAL_POSITION, round(self.position_units))
        self.write16(A_MOVING_SPEED, 0)
        self.write16(A_TORQUE_LIMIT, self.read16(A_MAX_TORQUE))
        t[A_PRESENT_VOLTAGE], t[A_PRESENT_TEMPERATURE], t[A_REGISTERED], t[A_HARDWARE_ERROR] = 74, 35, 0, 0
        self.write16(A_PUNCH, 32)
        self._publish_motion(0.0)

    def read16(self, address: int) -> int:
        return int.from_bytes(self.table[address:address + 2], "little")

    def write16(self, address: int, value: int) -> None:
        self.table[address:address + 2] = int(value).to_bytes(2, "little")

    @property
    def torque_enabled(self) -> bool:
        return bool(self.table[A_TORQUE_ENABLE])

    @property
    def hardware_error(self) -> int:
        return self.table[A_HARDWARE_ERROR]

    def write(self, address: int, data: bytes) -> int:
        """A WRITE from the bus; returns the status error number (0 when accepted)."""
        addresses = range(address, address + len(data))
        if address + len(data) > CONTROL_TABLE_SIZE:
            return ERROR_DATA_RANGE
        for a in addresses:
            eeprom = a < A_TORQUE_ENABLE
            if (eeprom and (a not in EEPROM_WRITABLE or self.torque_enabled)) or (not eeprom and a not in RAM_WRITABLE):
                return ERROR_ACCESS
        self.table[address:address + len(data)] = data
        if A_GOAL_POSITION in addresses or A_GOAL_POSITION + 1 in addresses:
            low, high = self.read16(A_CW_LIMIT), self.read16(A_CCW_LIMIT)
            self.write16(A_GOAL_POSITION, min(max(self.read16(A_GOAL_POSITION), low), high))
        return 0

    def inject_hardware_error(self, bits: int) -> None:
        """Raise hardware error bits; those enabled in Shutdown(18) cut the output (XL-320: torque limit -> 0)."""
        self.table[A_HARDWARE_ERROR] |= bits
        if bits & self.table[A_SHUTDOWN]:
            self.write16(A_TORQUE_LIMIT, 0)

    def step(self, dt: float) -> None:
        velocity_units = 0.0
        if self.torque_enabled and self.read16(A_TORQUE_LIMIT) > 0:
            speed = self.read16(A_MOVING_SPEED) & 0x3FF or MAX_SPEED_UNITS
            max_step = speed * SPEED_UNIT_DEG_S * dt * POSITION_UNITS / POSITION_DEGREES
            error = self.read16(A_GOAL_POSITION) - self.position_units
            move = max(-max_step, min(max_step, error))
            self.position_units += move
            velocity_units = (move / dt) / (SPEED_UNIT_DEG_S * POSITION_UNITS / POSITION_DEGREES) if dt > 0 else 0.0
        self._publish_motion(velocity_units)

    # what a motion model reads and writes -------------------------------------------------------------------
    @property
    def goal_degrees(self) -> float:
        """Goal position (motor frame, degrees)."""
        return units_to_degrees(self.read16(A_GOAL_POSITION))

    @property
    def moving_speed_deg_s(self) -> float | None:
        """Moving speed register in degrees/s; None = 0 = no speed control (the motor's no-load speed)."""
        units = self.read16(A_MOVING_SPEED) & 0x3FF
        return units * SPEED_UNIT_DEG_S if units else None

    @property
    def torque_fraction(self) -> float:
        """Output available: 0 with torque off (compliant) or after an alarm shutdown, else torque limit / 1023."""
        return self.read16(A_TORQUE_LIMIT) / 1023.0 if self.torque_enabled else 0.0

    def publish(self, degrees: float, velocity_deg_s: float, load_fraction: float) -> None:
        """Present position (motor frame, degrees), speed and load (signed fraction of the stall torque) as the
        sensors report them: position in whole units, speed in 0.111 rpm units, load in 0.1 % units."""
        self.position_units = min(max(degrees_to_units(degrees), 0), POSITION_UNITS)
        self.external_load_percent = 100.0 * load_fraction
        self._publish_motion(velocity_deg_s / SPEED_UNIT_DEG_S)

    def _publish_motion(self, velocity_units: float) -> None:
        self.write16(A_PRESENT_POSITION, round(self.position_units))
        self.write16(A_PRESENT_SPEED, signed_to_register(velocity_units))
        self.write16(A_PRESENT_LOAD, signed_to_register(self.external_load_percent * 10.23))
        self.table[A_MOVING] = int(abs(velocity_units) > 0.5)


class Motion(Protocol):
    """What moves the horns: reads each motor's control table (goal, speed, torque), advances ``dt`` seconds and
    writes the present position, speed and load back (``Xl320Motor.publish``)."""

    def advance(self, motors: Mapping[int, Xl320Motor], dt: float) -> None: ...


def check_link_path(link: Path) -> None:
    """``link`` may become the emulator's symlink: a free path in an existing folder, or a stale link of an earlier
    emulator (a symlink to a pty). Anything else (a file, a folder, a link to something else) is refused, never
    replaced: a typo must not delete a file."""
    if link.is_symlink():
        target = os.readlink(link)
        if not target.startswith("/dev/pts/"):
            raise FileExistsError(f"{link} is a symlink to {target}, not an emulator's pty link; choose a free path")
        return
    if link.exists():
        kind = "a folder" if link.is_dir() else "a file"
        raise FileExistsError(f"{link} is {kind} that exists; choose a free path (it is never replaced)")
    if not link.parent.is_dir():
        raise FileNotFoundError(f"{link}: the folder {link.parent} does not exist")


class Xl320Emulator:
    """Motors ``ids`` behind one pty. Use as a context manager or call ``start()`` / ``stop()``.
    ``motion``: what moves the horns (None: each motor at its moving speed, no dynamics)."""

    def __init__(self, ids: Iterable[int] = range(1, 7), link: Path | str | None = None,
                 positions_deg: dict[int, float] | None = None, tick_s: float = 0.002,
                 model_numbers: dict[int, int] | None = None, motion: Motion | None = None) -> None:
        positions_deg, model_numbers = positions_deg or {}, model_numbers or {}
        self.motors = {i: Xl320Motor(i, float(degrees_to_units(positions_deg.get(i, 0.0))),
                                     model_number=model_numbers.get(i, MODEL_NUMBER)) for i in ids}
        self.motion = motion
        self.link = Path(link) if link is not None else None
        self.tick_s = tick_s
        self.lock = threading.RLock()
        self.instructions: Counter[int] = Counter()
        self.crc_errors = 0
        self.responding = True
        self.boot_time_s = 0.05  # silence of a motor after REBOOT
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._buffer = bytearray()

    # lifecycle -------------------------------------------------------------------------------------------------
    def __enter__(self) -> Xl320Emulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> str:
        """The path a driver opens: the stable link when one was asked for, else the pty's /dev/pts/N."""
        if self.link is not None:
            return str(self.link)
        if self._slave is None:
            raise RuntimeError("emulator not started")
        return os.ttyname(self._slave)

    @property
    def plugged(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None:
            return
        if self.link is not None:
            check_link_path(self.link)
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no line editing: bytes pass untouched
        if self.link is not None:
            self.link.unlink(missing_ok=True)
            self.link.symlink_to(os.ttyname(self._slave))
        self._buffer.clear()
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="xl320-emulator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = None
        if self.link is not None:
            self.link.unlink(missing_ok=True)

    unplug = stop  # the USB adapter leaves: the driver's fd hangs up and the path disappears
    replug = start  # a new pty behind the same link; the motors kept their power and state

    def set_responding(self, responding: bool) -> None:
        """False: the adapter stays but the motors are cut off (every request times out)."""
        self.responding = responding

    # test helpers ----------------------------------------------------------------------------------------------
    def motor(self, motor_id: int) -> Xl320Motor:
        return self.motors[motor_id]

    def register(self, motor_id: int, address: int, size: int = 2) -> int:
        with self.lock:
            table = self.motors[motor_id].table
            return int.from_bytes(table[address:address + size], "little")

    def goal_units(self, motor_id: int) -> int:
        return self.register(motor_id, A_GOAL_POSITION)

    def present_units(self, motor_id: int) -> int:
        return self.register(motor_id, A_PRESENT_POSITION)

    def torque_enabled(self, motor_id: int) -> bool:
        return bool(self.register(motor_id, A_TORQUE_ENABLE, 1))

    def inject_hardware_error(self, motor_id: int, bits: int = OVERLOAD) -> None:
        with self.lock:
            self.motors[motor_id].inject_hardware_error(bits)

    def set_position_deg(self, motor_id: int, degrees: float) -> None:
        """Move a horn by hand (only meaningful while the motor is compliant)."""
        with self.lock:
            motor = self.motors[motor_id]
            motor.position_units = float(degrees_to_units(degrees))
            motor.step(0.0)

    def advance(self, dt: float) -> None:
        """Move every horn by ``dt`` seconds (the serving thread calls this every tick, under ``lock``)."""
        if self.motion is not None:
            self.motion.advance(self.motors, dt)
            return
        for motor in self.motors.values():
            motor.step(dt)

    # bus -------------------------------------------------------------------------------------------------------
    def _serve(self) -> None:
        assert self._master is not None
        last = time.monotonic()
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], self.tick_s)
            now = time.monotonic()
            with self.lock:
                self.advance(now - last)
            last = now
            if not ready:
                continue
            try:
                chunk = os.read(self._master, 4096)
            except OSError:  # EIO while no process holds the slave side open
                time.sleep(self.tick_s)
                continue
            self._buffer += chunk
            for request in self._take_packets():
                reply = self._answer(request)
                if reply and self.responding:
                    os.write(self._master, reply)

    def _take_packets(self) -> list[bytes]:
        packets: list[bytes] = []
        while True:
            start = self._buffer.find(HEADER)
            if start < 0:
                del self._buffer[:-3]  # keep a possible partial header
                return packets
            del self._buffer[:start]
            if len(self._buffer) < 7:
                return packets
            total = 7 + int.from_bytes(self._buffer[5:7], "little")
            if len(self._buffer) < total:
                return packets
            packets.append(bytes(self._buffer[:total]))
            del self._buffer[:total]

    def _answer(self, raw: bytes) -> bytes:
        motor_id, instruction, params = raw[4], raw[7], raw[8:-2]
        with self.lock:
            if crc16(raw[:-2]) != int.from_bytes(raw[-2:], "little"):
                self.crc_errors += 1
                return self._status(motor_id, ERROR_CRC) if motor_id in self.motors else b""
            self.instructions[instruction] += 1
            if instruction == SYNC_READ:
                return self._sync_read(params)
            if instruction == SYNC_WRITE:
                self._sync_write(params)
                return b""
            targets = list(self.motors) if motor_id == BROADCAST_ID else [motor_id] if motor_id in self.motors else []
            now = time.monotonic()
            replies = [self._single(self.motors[i], instruction, params) for i in targets
                       if now >= self.motors[i].booting_until]
            # a broadcast READ/WRITE gets no status packet; a broadcast PING gets one per motor
            return b"".join(replies) if motor_id != BROADCAST_ID or instruction == PING else b""

    def _single(self, motor: Xl320Motor, instruction: int, params: bytes) -> bytes:
        if instruction == PING:
            model = motor.model_number.to_bytes(2, "little") + bytes([motor.table[A_FIRMWARE]])
            return self._status(motor.motor_id, 0, model)
        if instruction == READ:
            if len(params) != 4:
                return self._status(motor.motor_id, ERROR_DATA_LENGTH)
            address, size = int.from_bytes(params[:2], "little"), int.from_bytes(params[2:4], "little")
            if address + size > CONTROL_TABLE_SIZE:
                return self._status(motor.motor_id, ERROR_DATA_RANGE)
            return self._status(motor.motor_id, 0, bytes(motor.table[address:address + size]))
        if instruction == WRITE:
            if len(params) < 3:
                return self._status(motor.motor_id, ERROR_DATA_LENGTH)
            error = motor.write(int.from_bytes(params[:2], "little"), params[2:])
            return self._status(motor.motor_id, error)
        if instruction == REBOOT:
            reply = self._status(motor.motor_id, 0)
            motor.reboot()
            motor.booting_until = time.monotonic() + self.boot_time_s  # it boots, then answers again
            return reply
        return self._status(motor.motor_id, ERROR_INSTRUCTION)

    def _sync_read(self, params: bytes) -> bytes:
        address, size = int.from_bytes(params[:2], "little"), int.from_bytes(params[2:4], "little")
        replies = []
        now = time.monotonic()
        for motor_id in params[4:]:  # each motor answers in the order of the request
            motor = self.motors.get(motor_id)
            if motor is not None and now >= motor.booting_until:
                data = bytes(motor.table[address:address + size]) if address + size <= CONTROL_TABLE_SIZE else b""
                replies.append(self._status(motor_id, 0 if data else ERROR_DATA_RANGE, data))
        return b"".join(replies)

    def _sync_write(self, params: bytes) -> None:
        address, size = int.from_bytes(params[:2], "little"), int.from_bytes(params[2:4], "little")
        body = params[4:]
        for offset in range(0, len(body) - size, size + 1):
            motor = self.motors.get(body[offset])
            if motor is not None:
                motor.write(address, body[offset + 1:offset + 1 + size])

    def _status(self, motor_id: int, error: int, params: bytes = b"") -> bytes:
        alert = ALERT_BIT if self.motors[motor_id].hardware_error else 0
        return status_packet(motor_id, error | alert, params)
