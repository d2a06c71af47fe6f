"""The driver without ROS: one arm on one motor bus, with the safety rules that are always on.

Every ``step`` is one control cycle: (re)connect if needed, read all motors, let the watchdog act, advance a
trajectory, then write what the motors should be doing. Writes are reconciled against what was just read
(torque enable, torque limit), so a packet lost on the bus or a motor that rebooted is corrected next cycle.

Safety rules: every target is clamped to the joint limits (and the clamp reported); the motors' moving speed is
the max speed and their torque limit the configured one; stale commands make the arm hold where it is, then
optionally go compliant; bad commands are refused with a reason; commands are only taken while the bus is up and
the motors are stiff; a motor in hardware-error shutdown keeps its torque limit at 0 until ``reboot``.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from .bus import BusError, MotorBus
from .commands import (
    Clamp,
    CommandRejected,
    TrajectoryPlan,
    TrajectoryPoint,
    check_positions,
    check_trajectory,
    clamp_to_limits,
)
from .config import SAFE_BOUNDS, ArmConfig
from .joints import joint_angle, joint_effort, joint_velocity, motor_degrees, speed_deg_s
from .watchdog import CommandWatchdog, WatchdogAction
from .xl320 import MotorReading

Log = Callable[[int, str], None]
TORQUE_LIMIT_TOLERANCE = 0.15  # percent; the register's resolution is ~0.1 %


class Mode(Enum):
    HOLD = "hold"  # goal = where the arm was when it stopped following commands
    STREAM = "stream"  # goal = latest position command
    TRAJECTORY = "trajectory"  # goal = trajectory sampled at the cycle's time
    REST = "rest"  # goal = rest pose, at the rest speed


@dataclass(frozen=True)
class JointSample:
    names: tuple[str, ...]
    positions: tuple[float, ...]  # rad
    velocities: tuple[float, ...]  # rad/s
    efforts: tuple[float, ...]  # N*m (estimate from the load register)


@dataclass(frozen=True)
class MotorStatus:
    joint: str
    motor_id: int
    reading: MotorReading | None  # None while the bus is down


@dataclass(frozen=True)
class ArmStatus:
    bus: str
    connected: bool
    last_error: str
    failed_attempts: int
    connections: int
    compliant: bool
    mode: str
    watchdog: str
    accepted_commands: int
    rejected_commands: int
    clamped_commands: int
    last_rejection: str
    last_clamp: str
    bus_errors: int
    max_speed: float
    torque_limit: float
    motors: tuple[MotorStatus, ...]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str


class PoppyArm:
    def __init__(self, config: ArmConfig, bus: MotorBus, *, start_compliant: bool = True,
                 reconnect_period: float = 1.0, failures_before_disconnect: int = 3, log: Log | None = None) -> None:
        self.config = config
        self._bus = bus
        self._joints = config.joints
        self._ids = config.motor_ids
        self._log = log or logging.getLogger("poppy_driver").log
        self._lock = threading.RLock()
        self.reconnect_period = reconnect_period
        self.failures_before_disconnect = failures_before_disconnect
        safety = config.safety
        self.max_speed, self.rest_speed, self.torque_limit = safety.max_speed, safety.rest_speed, safety.torque_limit
        self._watchdog = CommandWatchdog(safety.command_timeout, safety.compliant_after_timeout)

        self._torque_wanted = not start_compliant
        self._mode = Mode.HOLD
        self._goal: list[float] = [0.0] * len(self._joints)
        self._plan: TrajectoryPlan | None = None
        self._plan_start = 0.0
        self._readings: dict[int, MotorReading] | None = None
        self._connected = False
        self._next_attempt = 0.0
        self._consecutive_failures = 0
        self._failed_attempts = 0
        self._connections = 0
        self._last_error = ""
        self._unreachable_since: float | None = None  # first failed attempt since the last connection
        self._last_report = 0.0
        self.report_period = 5.0  # an unreachable bus is reported again this often [s]
        self._bus_errors = 0
        self._accepted = self._rejected = self._clamped = 0
        self._last_rejection = self._last_clamp = ""

    def unreachable_for(self, now: float) -> float:
        """Seconds since the first failed attempt to reach the bus (0 while connected or before any attempt)."""
        return 0.0 if self._connected or self._unreachable_since is None else now - self._unreachable_since

    # control cycle ---------------------------------------------------------------------------------------------
    def step(self, now: float) -> JointSample | None:
        """One control cycle; the joint state read in it, or None while the bus is unavailable."""
        with self._lock:
            if not self._connected and not self._try_connect(now):
                return None
            try:
                readings = self._bus.read()
            except BusError as error:
                self._on_bus_failure(error, now)
                return None
            self._consecutive_failures = 0
            self._readings = readings
            self._apply_watchdog(now)
            if self._mode is Mode.TRAJECTORY and self._plan is not None:
                for index, value in zip(self._plan.indices, self._plan.sample(now - self._plan_start)):
                    self._goal[index] = value
            try:
                self._write(readings)
            except BusError as error:
                self._on_bus_failure(error, now)
            return self._sample(readings)

    def close(self) -> None:
        with self._lock:
            self._bus.close()
            self._connected = False

    # commands --------------------------------------------------------------------------------------------------
    def command_positions(self, values: Sequence[float], now: float) -> list[Clamp]:
        """All joints, in configured order. Raises CommandRejected with the reason; returns what was clamped."""
        with self._lock:
            try:
                self._check_accepting()
                targets = check_positions(values, self.config.joint_names)
            except CommandRejected as rejection:
                self._count_rejection(rejection)
                raise
            goal, clamps = clamp_to_limits(targets, self._joints)
            self._goal, self._mode, self._plan = list(goal), Mode.STREAM, None
            self._watchdog.feed(now)
            self._count_accepted(clamps)
            return clamps

    def command_trajectory(self, joint_names: Sequence[str], points: Sequence[TrajectoryPoint],
                           now: float) -> list[Clamp]:
        """Named joints (others keep their goal), timed from ``now``. Raises CommandRejected."""
        with self._lock:
            try:
                self._check_accepting()
                indices = check_trajectory(joint_names, points, self.config.joint_names)
            except CommandRejected as rejection:
                self._count_rejection(rejection)
                raise
            clamps: list[Clamp] = []
            safe_points = []
            for point in points:
                positions, point_clamps = clamp_to_limits(point.positions, self._joints, indices)
                safe_points.append(TrajectoryPoint(point.time_from_start, positions))
                clamps += point_clamps
            plan = TrajectoryPlan(indices, [self._goal[i] for i in indices], safe_points)
            self._plan, self._plan_start, self._mode = plan, now, Mode.TRAJECTORY
            self._watchdog.feed(now, valid_until=now + plan.duration)
            self._count_accepted(clamps)
            return clamps

    # services --------------------------------------------------------------------------------------------------
    def set_compliant(self, compliant: bool) -> Outcome:
        with self._lock:
            if not self._connected:
                return Outcome(False, f"bus not connected: {self._last_error}")
            if not compliant and (faulted := self._faulted_motors()):
                return Outcome(False, f"{faulted} in hardware-error shutdown: call reboot first")
            self._torque_wanted = not compliant
            self._mode, self._plan = Mode.HOLD, None
            self._watchdog.disarm()
            done = "compliant" if compliant else "stiff, holding the present position"
            return self._apply_now(hold_present=True, done=f"motors {done}")

    def go_to_rest(self) -> Outcome:
        with self._lock:
            if not self._connected:
                return Outcome(False, f"bus not connected: {self._last_error}")
            if faulted := self._faulted_motors():
                return Outcome(False, f"{faulted} in hardware-error shutdown: call reboot first")
            self._goal = list(self.config.rest_pose)
            self._torque_wanted, self._mode, self._plan = True, Mode.REST, None
            self._watchdog.disarm()
            speed = min(self.rest_speed, self.max_speed)
            return self._apply_now(hold_present=False, done=f"moving to the rest pose at {speed:.2f} rad/s")

    def reboot(self) -> Outcome:
        """Reboot every motor: clears hardware errors; they come back compliant, as at start-up."""
        with self._lock:
            if not self._connected:
                return Outcome(False, f"bus not connected: {self._last_error}")
            self._torque_wanted, self._mode, self._plan = False, Mode.HOLD, None
            self._watchdog.disarm()
            try:
                self._bus.reboot(self._ids)
            except BusError as error:
                self._on_bus_failure(error, time.monotonic())
                return Outcome(False, f"reboot failed: {error}")
            if (silent := self._read_after_reboot()) is not None:
                return Outcome(False, f"rebooted, but the motors do not answer yet: {silent}")
            if faulted := self._faulted_motors():
                return Outcome(False, f"rebooted, but {faulted} still report hardware errors")
            return Outcome(True, f"rebooted motors {list(self._ids)}: errors cleared, motors compliant")

    # run-time settings -----------------------------------------------------------------------------------------
    def set_max_speed(self, rad_s: float) -> None:
        with self._lock:
            self.max_speed = SAFE_BOUNDS["max_speed"].check("max_speed", rad_s)

    def set_rest_speed(self, rad_s: float) -> None:
        with self._lock:
            self.rest_speed = SAFE_BOUNDS["rest_speed"].check("rest_speed", rad_s)

    def set_torque_limit(self, percent: float) -> None:
        with self._lock:
            self.torque_limit = SAFE_BOUNDS["torque_limit"].check("torque_limit", percent)

    def set_watchdog(self, timeout: float, compliant_after: float) -> None:
        with self._lock:
            self._watchdog.timeout = SAFE_BOUNDS["command_timeout"].check("command_timeout", timeout)
            self._watchdog.compliant_after = SAFE_BOUNDS["compliant_after_timeout"].check(
                "compliant_after_timeout", compliant_after)

    # reporting -------------------------------------------------------------------------------------------------
    def bus_state(self) -> tuple[bool, bool]:
        """(the bus answers, torque off): the part of ``status`` the signed arm state carries, cheap at loop rate."""
        with self._lock:
            return self._connected, not self._torque_wanted

    def status(self) -> ArmStatus:
        with self._lock:
            readings = self._readings if self._connected else None
            motors = tuple(MotorStatus(j.name, j.motor_id, readings.get(j.motor_id) if readings else None)
                           for j in self._joints)
            return ArmStatus(
                bus=self._bus.description, connected=self._connected, last_error=self._last_error,
                failed_attempts=self._failed_attempts, connections=self._connections,
                compliant=not self._torque_wanted, mode=self._mode.value, watchdog=self._watchdog.state.value,
                accepted_commands=self._accepted, rejected_commands=self._rejected,
                clamped_commands=self._clamped, last_rejection=self._last_rejection, last_clamp=self._last_clamp,
                bus_errors=self._bus_errors, max_speed=self.max_speed, torque_limit=self.torque_limit,
                motors=motors,
            )

    # internals -------------------------------------------------------------------------------------------------
    def _try_connect(self, now: float) -> bool:
        if now < self._next_attempt:
            return False
        try:
            self._bus.open()
            readings = self._bus.read()
        except BusError as error:
            self._bus.close()
            self._failed_attempts += 1
            self._next_attempt = now + self.reconnect_period
            if self._unreachable_since is None:
                self._unreachable_since = now
            if str(error) != self._last_error or now - self._last_report >= self.report_period:
                waited = now - self._unreachable_since
                self._log(logging.ERROR, f"{self._bus.description}: {error}; retrying every "
                                         f"{self.reconnect_period:g} s" + (f" (unreachable for {waited:.0f} s, "
                                         f"{self._failed_attempts} attempts)" if waited > 0 else ""))
                self._last_report = now
            self._last_error = str(error)
            return False
        self._unreachable_since = None
        self._connected, self._readings = True, readings
        self._consecutive_failures = self._failed_attempts = 0
        self._connections += 1
        self._hold_present()  # whatever happened while away, resume from where the arm is now
        self._watchdog.disarm()
        state = "compliant" if not self._torque_wanted else "holding the present position"
        self._log(logging.INFO, f"connected: {self._bus.description}, motors {list(self._ids)}; {state}")
        return True

    def _on_bus_failure(self, error: BusError, now: float) -> None:
        self._bus_errors += 1
        self._consecutive_failures += 1
        self._last_error = str(error)
        if self._consecutive_failures < self.failures_before_disconnect:
            self._log(logging.DEBUG, f"bus error (tolerated): {error}")
            return
        self._bus.close()
        self._connected, self._readings = False, None
        self._next_attempt = now + self.reconnect_period
        self._log(logging.ERROR, f"lost {self._bus.description}: {error}; retrying every "
                                 f"{self.reconnect_period:g} s")

    def _apply_watchdog(self, now: float) -> None:
        action = self._watchdog.update(now)
        if action is WatchdogAction.HOLD:
            self._hold_present()
            self._log(logging.WARNING, f"no fresh command for {self._watchdog.timeout:g} s: holding position")
        elif action is WatchdogAction.GO_COMPLIANT:
            self._torque_wanted = False
            self._log(logging.WARNING, f"still no command {self._watchdog.compliant_after:g} s later: going compliant")

    def _hold_present(self) -> None:
        if self._readings:
            self._goal = [joint_angle(j, self._readings[j.motor_id].position_deg) for j in self._joints]
        self._mode, self._plan = Mode.HOLD, None

    def _write(self, readings: dict[int, MotorReading]) -> None:
        if not self._torque_wanted:
            self._hold_present()  # track the arm while limp, so stiffening never jumps
            release = {i: False for i, r in readings.items() if r.torque_enabled}
            if release:
                self._bus.write_torque_enable(release)
            return
        speed = speed_deg_s(min(self.rest_speed, self.max_speed) if self._mode in (Mode.REST, Mode.HOLD)
                            else self.max_speed)
        goals = {j.motor_id: (motor_degrees(j, goal), speed) for j, goal in zip(self._joints, self._goal)}
        self._bus.write_goals(goals)
        limits = {i: self.torque_limit for i, r in readings.items()
                  if not r.hardware_error and abs(r.torque_limit_percent - self.torque_limit) > TORQUE_LIMIT_TOLERANCE}
        if limits:
            self._bus.write_torque_limits(limits)
        engage = {i: True for i, r in readings.items() if not r.torque_enabled}
        if engage:
            self._bus.write_torque_enable(engage)

    def _apply_now(self, hold_present: bool, done: str) -> Outcome:
        """Write the wanted state at once and read it back; a service answers only once the motors agree."""
        try:
            for attempt in range(5):
                self._readings = readings = self._bus.read()
                if attempt == 0 and hold_present:
                    self._hold_present()  # from the freshest reading
                elif attempt > 0 and all(r.torque_enabled == self._torque_wanted for r in readings.values()):
                    return Outcome(True, done)
                self._write(readings)
        except BusError as error:
            self._on_bus_failure(error, time.monotonic())
            return Outcome(False, f"bus error: {error}")
        return Outcome(False, "the motors did not confirm their torque state")

    def _read_after_reboot(self, attempts: int = 10, pause_s: float = 0.1) -> BusError | None:
        """Servos take a moment to boot: read until they answer (about a second at most)."""
        error = None
        for _ in range(attempts):
            try:
                self._readings = self._bus.read()
                return None
            except BusError as failure:
                error = failure
                time.sleep(pause_s)
        return error

    def _sample(self, readings: dict[int, MotorReading]) -> JointSample:
        motors = [(j, readings[j.motor_id]) for j in self._joints]
        return JointSample(
            names=self.config.joint_names,
            positions=tuple(joint_angle(j, r.position_deg) for j, r in motors),
            velocities=tuple(joint_velocity(j, r.speed_deg_s) for j, r in motors),
            efforts=tuple(joint_effort(j, r.load_percent) for j, r in motors),
        )

    def _check_accepting(self) -> None:
        if not self._connected:
            raise CommandRejected(f"bus not connected: {self._last_error}")
        if not self._torque_wanted:
            raise CommandRejected("motors are compliant: call set_compliant(false) or go_to_rest first")

    def _faulted_motors(self) -> str:
        if not self._readings:
            return ""
        return ", ".join(f"{j.name} ({'/'.join(self._readings[j.motor_id].errors)})" for j in self._joints
                         if self._readings[j.motor_id].hardware_error)

    def _count_rejection(self, rejection: CommandRejected) -> None:
        self._rejected += 1
        self._last_rejection = str(rejection)

    def _count_accepted(self, clamps: list[Clamp]) -> None:
        self._accepted += 1
        if clamps:
            self._clamped += 1
            self._last_clamp = "; ".join(str(c) for c in clamps)
