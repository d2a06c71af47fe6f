"""The stand-in arm's servo model and wiring, read from YAML and checked against physical bounds.

A value outside its bounds (a negative latency, a torque scale of 50) is refused with one line naming the key, its
value and what is allowed, before anything is started (no pty, no physics, nothing on a bus)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

DEFAULT_FILE = Path(__file__).resolve().parent / "config" / "standin.yaml"


class StandInError(ValueError):
    """A stand-in setting that cannot be used; the message names it and what is allowed."""


# physical bounds of every servo key (inclusive), with the unit for messages
BOUNDS: dict[str, tuple[float, float, str]] = {
    "position_gain": (1e-4, 1.0, "PyBullet positionGain"),
    "stall_torque_nm": (0.01, 2.0, "N*m"),
    "torque_scale": (0.01, 2.0, "x the stall torque"),
    "no_load_speed_rad_s": (0.5, 30.0, "rad/s"),
    "latency_s": (0.0, 0.5, "s"),
    "backlash_deg": (0.0, 10.0, "degrees"),
    "compliant_friction_nm": (0.0, 0.5, "N*m"),
}


@dataclass(frozen=True)
class ServoModel:
    position_gain: float
    stall_torque_nm: float
    torque_scale: float
    no_load_speed_rad_s: float
    latency_s: float
    backlash_deg: float
    compliant_friction_nm: float

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str) -> ServoModel:
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise StandInError(f"{where}: unknown key(s) {unknown}; known: {known}")
        missing = [k for k in known if k not in data]
        if missing:
            raise StandInError(f"{where}: missing key(s) {missing}")
        return cls(**{k: check(k, data[k], where) for k in known})

    def with_values(self, values: Mapping[str, Any], where: str) -> ServoModel:
        return ServoModel.from_mapping({**self.__dict__, **values}, where)

    @property
    def max_torque_nm(self) -> float:
        """Torque at a torque-limit register of 100 %."""
        return self.stall_torque_nm * self.torque_scale


def check(key: str, value: Any, where: str) -> float:
    return check_value(key, value, where, BOUNDS)


def check_value(key: str, value: Any, where: str, bounds: Mapping[str, tuple[float, float, str]]) -> float:
    """``value`` of ``key`` as a float within its physical ``bounds``; else one line naming key, value, bounds."""
    low, high, unit = bounds[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StandInError(f"{where}.{key}={value!r} is not a number; allowed: [{low:g}, {high:g}] {unit}")
    if not low <= value <= high:
        raise StandInError(f"{where}.{key}={value:g} is outside [{low:g}, {high:g}] {unit}")
    return float(value)


@dataclass(frozen=True)
class Wire:
    """Motor ``motor_id`` drives URDF joint ``joint``: joint angle = direction * motor angle - offset_deg."""

    motor_id: int
    joint: str
    direction: int
    offset_deg: float

    def joint_rad(self, motor_deg: float) -> float:
        return math.radians(self.direction * motor_deg - self.offset_deg)

    def motor_deg(self, joint_rad: float) -> float:
        return self.direction * (math.degrees(joint_rad) + self.offset_deg)


@dataclass(frozen=True)
class StandIn:
    name: str
    servo: ServoModel
    wiring: tuple[Wire, ...]
    source: Any = None  # the whole stand-in file (its puck and tracker sections are read by --task pusher)


def load(setting: str = "reference", path: Path | str | None = None,
         overrides: Mapping[str, Any] | None = None) -> StandIn:
    """The named setting of the stand-in file (default: the packaged one), then ``overrides`` (key -> value)."""
    source = Path(path) if path else DEFAULT_FILE
    try:
        data = yaml.safe_load(source.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise StandInError(f"cannot read stand-in file {source}: {str(error).splitlines()[0]}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("servo"), Mapping):
        raise StandInError(f"{source}: expected a mapping with 'servo', 'wiring' and 'settings'")
    servo = ServoModel.from_mapping(data["servo"], "servo")
    settings = data.get("settings") or {}
    if setting not in settings:
        raise StandInError(f"setting {setting!r} is not in {source}; known: {sorted(settings)}")
    servo = servo.with_values(settings[setting] or {}, f"settings.{setting}")
    if overrides:
        servo = servo.with_values(overrides, "--set")
    return StandIn(setting, servo, _wiring(data.get("wiring")), data)


def _wiring(entries: Any) -> tuple[Wire, ...]:
    if not isinstance(entries, list) or not entries:
        raise StandInError("wiring: expected a non-empty list of {id, joint, orientation, offset_deg}")
    from adr_core.envs.ergo_jr import JOINT_NAMES

    wires = []
    for index, entry in enumerate(entries):
        where = f"wiring[{index}]"
        if not isinstance(entry, Mapping):
            raise StandInError(f"{where}: expected a mapping")
        if entry.get("joint") not in JOINT_NAMES:
            raise StandInError(f"{where}.joint={entry.get('joint')!r} is not a joint of the arm {list(JOINT_NAMES)}")
        if entry.get("orientation") not in ("direct", "indirect"):
            raise StandInError(f"{where}.orientation={entry.get('orientation')!r}: allowed: direct, indirect")
        motor_id = entry.get("id")
        if not isinstance(motor_id, int) or not 0 <= motor_id <= 252:
            raise StandInError(f"{where}.id={motor_id!r}: allowed: an integer in [0, 252]")
        offset = entry.get("offset_deg", 0.0)
        if not isinstance(offset, (int, float)) or not -180.0 <= offset <= 180.0:
            raise StandInError(f"{where}.offset_deg={offset!r}: allowed: a number in [-180, 180]")
        wires.append(Wire(motor_id, entry["joint"], 1 if entry["orientation"] == "direct" else -1, float(offset)))
    for attribute in ("motor_id", "joint"):
        values = [getattr(w, attribute) for w in wires]
        if len(set(values)) != len(values):
            raise StandInError(f"wiring: {attribute} repeated in {values}")
    return tuple(wires)


def parse_assignment(text: str) -> tuple[str, float]:
    """``key=value`` of ``--set``; the key must be a servo key."""
    key, sep, value = text.partition("=")
    if not sep or key not in BOUNDS:
        raise StandInError(f"--set {text!r}: expected key=value with key one of {sorted(BOUNDS)}")
    try:
        return key, float(value)
    except ValueError:
        raise StandInError(f"--set {text!r}: {value!r} is not a number") from None


__all__ = ["BOUNDS", "DEFAULT_FILE", "ServoModel", "StandIn", "StandInError", "Wire", "check_value", "load",
           "parse_assignment"]
