"""The XL-320 bus through pypot's ``Dxl320IO`` with sync read, as pypot's own Ergo Jr configuration uses it."""
from __future__ import annotations

import functools
import logging
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import serial
from pypot.dynamixel.conversion import dynamixelModels
from pypot.dynamixel.io import Dxl320IO, DxlError
from pypot.dynamixel.io.abstract_io import DxlCommunicationError, _DxlAccess, _DxlControl
from pypot.dynamixel.protocol import v2

from .bus import BusError
from .config import BusConfig
from .xl320 import (
    BLOCK_LENGTH,
    BLOCK_START,
    MODEL,
    MODEL_NUMBER,
    REBOOT_INSTRUCTION,
    MotorReading,
    parse_block,
    position_units,
    speed_units,
    torque_units,
)

T = TypeVar("T")

# What a dead port, a silent motor or a garbled answer raises somewhere between pypot, pyserial and termios.
_BUS_FAULTS = (DxlError, serial.SerialException, OSError, termios.error, ValueError, IndexError)

# pypot generates its getters from such descriptions; this one reads the driver's whole register block raw.
_REGISTER_BLOCK = _DxlControl("poppy_driver register block", BLOCK_START, 1, BLOCK_LENGTH, _DxlAccess.readonly,
                              [MODEL], lambda value, model: value, lambda value, model: value, None, None)
_MODEL_NUMBER_REGISTER = _DxlControl("model number", 0, 1, 2, _DxlAccess.readonly, [MODEL],
                                     lambda value, model: value, lambda value, model: value, None, None)
REBOOT_TIME_S = 0.1  # an XL-320 answers the REBOOT, then needs a moment before it answers again


class _NoFullAnswer(Exception):
    """A sync read that only some motors answered (pypot returns what it got)."""


class Xl320Bus:
    def __init__(self, config: BusConfig, motor_ids: Sequence[int]) -> None:
        self._config = config
        self._ids = list(motor_ids)
        self._io: Dxl320IO | None = None
        self.retried = 0  # answers tried again (timed out, garbled, partial) since the bus was made
        logging.getLogger("pypot").setLevel(logging.ERROR)  # the driver reports bus trouble itself

    @property
    def description(self) -> str:
        return f"XL-320 bus on {self._config.port} at {self._config.baudrate} baud"

    def open(self) -> None:
        self.close()
        try:
            io = Dxl320IO(self._config.port, baudrate=self._config.baudrate, timeout=self._config.timeout_s,
                          use_sync_read=True)
        except _BUS_FAULTS as error:
            raise BusError(f"cannot open {self._config.port}: {error}") from error
        try:
            found = io.scan(self._ids)
        except _BUS_FAULTS as error:
            io.close()
            raise BusError(f"scanning {self._config.port} failed: {error}") from error
        missing = [i for i in self._ids if i not in found]
        if missing:
            io.close()
            raise BusError(f"motors {missing} do not answer on {self._config.port}")
        try:
            self._check_models(io)
        except BusError:
            io.close()
            raise
        self._io = io

    def _check_models(self, io: Dxl320IO) -> None:
        """Refuse a bus whose motors are not XL-320s (another model's control table puts other registers at the
        addresses this driver writes: torque, goal, limits) before anything is written."""
        try:
            models = io._get_control_value(_MODEL_NUMBER_REGISTER, self._ids, convert=False)
        except _BUS_FAULTS as error:
            raise BusError(f"reading the model numbers on {self._config.port} failed: {error}") from error
        if len(models) != len(self._ids):
            raise BusError(f"reading the model numbers on {self._config.port}: {len(models)} of {len(self._ids)} "
                           f"motors answered")
        # convert=False: the two little-endian bytes (pypot decodes a lone motor's read to an int)
        numbers = [int(raw) if isinstance(raw, int) else raw[0] | raw[1] << 8 for raw in models]
        wrong = {i: m for i, m in zip(self._ids, numbers) if m != MODEL_NUMBER}
        if wrong:
            named = ", ".join(f"motor {i}: model number {m} ({dynamixelModels.get(m, 'unknown model')})"
                              for i, m in wrong.items())
            raise BusError(f"not an Ergo Jr bus on {self._config.port}: this driver drives {MODEL} motors "
                           f"(model number {MODEL_NUMBER}), found {named}; nothing was written")

    def close(self) -> None:
        io, self._io = self._io, None
        if io is not None:
            try:
                io.close()
            except _BUS_FAULTS:
                pass

    def read(self) -> dict[int, MotorReading]:
        io = self._connected()

        def sync_read() -> tuple:
            blocks = io._get_control_value(_REGISTER_BLOCK, self._ids, convert=False)
            if len(blocks) != len(self._ids):  # pypot returns () when a motor after the first does not answer
                raise _NoFullAnswer(f"{len(blocks)} of {len(self._ids)} motors answered")
            return blocks

        blocks = self._guard("sync read", sync_read)
        return {motor_id: parse_block(block) for motor_id, block in zip(self._ids, blocks)}

    def write_goals(self, goals: Mapping[int, tuple[float, float]]) -> None:
        values = {i: (position_units(deg), speed_units(deg_s)) for i, (deg, deg_s) in goals.items()}
        self._write("goal position/speed", lambda io: io._set_goal_pos_speed(values, convert=False))

    def write_torque_limits(self, limits: Mapping[int, float]) -> None:
        values = {i: torque_units(percent) for i, percent in limits.items()}
        self._write("torque limit", lambda io: io.set_torque_limit(values, convert=False))

    def write_torque_enable(self, enabled: Mapping[int, bool]) -> None:
        values = {i: int(on) for i, on in enabled.items()}
        self._write("torque enable", lambda io: io._set_torque_enable(values, convert=False))

    def reboot(self, ids: Sequence[int]) -> None:
        io = self._connected()
        for motor_id in ids:
            packet = v2.DxlInstructionPacket(motor_id, REBOOT_INSTRUCTION, ())
            self._guard(f"reboot of motor {motor_id}", functools.partial(io._send_packet, packet))
        time.sleep(REBOOT_TIME_S)

    def _connected(self) -> Dxl320IO:
        if self._io is None:
            raise BusError(f"{self._config.port} is not open")
        return self._io

    def _write(self, what: str, send: Callable[[Dxl320IO], None]) -> None:
        """A sync write gets no answer, and pypot's next packet starts by flushing the output buffer: wait until
        the bytes are out (tcdrain on a UART) and a moment more, or the flush may discard them."""
        if not self._ids:
            return
        io = self._connected()
        self._guard(what, lambda: send(io))
        self._guard(what, lambda: io._serial.flush())
        if self._config.write_settle_s:
            time.sleep(self._config.write_settle_s)

    def _guard(self, what: str, action: Callable[[], T]) -> T:
        """``action``, tried again up to ``retries`` times when its answer timed out, came garbled or came from only
        some motors (a bus drops a reply now and then: the Dynamixel SDKs retry too); a fault of the port itself
        (gone, unplugged) is a BusError at once. Each retry is counted in ``retried``."""
        tries = 1 + self._config.retries
        for attempt in range(1, tries + 1):
            try:
                return action()
            except (DxlCommunicationError, _NoFullAnswer) as error:
                if attempt == tries:
                    after = f" (after {tries} tries)" if tries > 1 else ""
                    raise BusError(f"{what} on {self._config.port}: {error}{after}") from error
                self.retried += 1
            except _BUS_FAULTS as error:
                raise BusError(f"{what} on {self._config.port}: {error}") from error
        raise AssertionError("unreachable")
