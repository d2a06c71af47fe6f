"""The arm's description (bus, joints, rest pose, safety defaults) loaded from YAML and checked field by field."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration value is missing or outside what the driver accepts; the message names the field."""


@dataclass(frozen=True)
class Bounds:
    low: float
    high: float
    unit: str

    def check(self, name: str, value: float) -> float:
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise ConfigError(f"{name}={value} is outside [{self.low}, {self.high}] {self.unit}")
        return float(value)


# Hard bounds of the run-time settings: no YAML file nor parameter change gets past them.
SAFE_BOUNDS: dict[str, Bounds] = {
    "max_speed": Bounds(0.05, 7.0, "rad/s"),  # XL-320 no-load speed is 114 rpm = 11.9 rad/s
    "rest_speed": Bounds(0.05, 2.0, "rad/s"),
    "torque_limit": Bounds(0.0, 100.0, "% of stall torque"),
    "command_timeout": Bounds(0.05, 10.0, "s"),
    "compliant_after_timeout": Bounds(0.0, 600.0, "s (0: never)"),
}


@dataclass(frozen=True)
class BusConfig:
    port: str
    baudrate: int
    timeout_s: float
    write_settle_s: float
    retries: int = 2  # a timed-out or garbled answer is tried again this many times before it is a bus error


@dataclass(frozen=True)
class JointConfig:
    """One joint and its motor. Joint angle [rad] = radians(direction * motor_deg - offset_deg)."""

    name: str
    motor_id: int
    direction: int  # +1 (pypot "direct") or -1 ("indirect")
    offset_deg: float
    lower_rad: float
    upper_rad: float


@dataclass(frozen=True)
class SafetyConfig:
    max_speed: float  # rad/s
    rest_speed: float  # rad/s
    torque_limit: float  # percent
    command_timeout: float  # s
    compliant_after_timeout: float  # s, 0 = never


@dataclass(frozen=True)
class ArmConfig:
    bus: BusConfig
    joints: tuple[JointConfig, ...]
    rest_pose: tuple[float, ...]  # rad, in joint order
    safety: SafetyConfig

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def motor_ids(self) -> tuple[int, ...]:
        return tuple(j.motor_id for j in self.joints)

    def with_bus(self, port: str | None = None, baudrate: int | None = None) -> ArmConfig:
        bus = replace(self.bus, port=port or self.bus.port, baudrate=baudrate or self.bus.baudrate)
        return replace(self, bus=bus)


def default_config_path() -> Path:
    """The Ergo Jr file shipped with the package (installed share/ first, then the source tree)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return Path(get_package_share_directory("poppy_driver")) / "config" / "ergo_jr.yaml"
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    return Path(__file__).resolve().parents[1] / "config" / "ergo_jr.yaml"


def load_config(path: Path | str | None = None) -> ArmConfig:
    path = Path(path) if path else default_config_path()
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ConfigError(f"cannot read arm config {path}: {error}") from error
    return parse_config(data, source=str(path))


def parse_config(data: Any, source: str = "config") -> ArmConfig:
    root = _mapping(data, source)
    bus = _mapping(root.get("bus"), "bus")
    bus_config = BusConfig(
        port=str(_field(bus, "port", "bus")),
        baudrate=int(_field(bus, "baudrate", "bus")),
        timeout_s=Bounds(0.001, 1.0, "s").check("bus.timeout_s", float(_field(bus, "timeout_s", "bus"))),
        write_settle_s=Bounds(0.0, 0.05, "s").check("bus.write_settle_s", float(bus.get("write_settle_s", 0.0))),
        retries=_count(bus.get("retries", 2), "bus.retries", 10),
    )
    joints_data = root.get("joints")
    if not isinstance(joints_data, list) or not joints_data:
        raise ConfigError("joints: expected a non-empty list")
    joints = tuple(_joint(entry, f"joints[{index}]") for index, entry in enumerate(joints_data))
    _check_unique([j.name for j in joints], "joints[].name")
    _check_unique([j.motor_id for j in joints], "joints[].id")

    rest = _mapping(root.get("rest_pose_deg"), "rest_pose_deg")
    unknown = set(rest) - {j.name for j in joints}
    if unknown:
        raise ConfigError(f"rest_pose_deg: unknown joints {sorted(unknown)}")
    rest_pose = []
    for joint in joints:
        angle = math.radians(float(_field(rest, joint.name, "rest_pose_deg")))
        if not joint.lower_rad <= angle <= joint.upper_rad:
            raise ConfigError(f"rest_pose_deg.{joint.name}={math.degrees(angle):g} is outside the joint's limits")
        rest_pose.append(angle)

    safety = _mapping(root.get("safety"), "safety")
    safety_config = SafetyConfig(
        max_speed=_bounded(safety, "max_speed_rad_s", "max_speed"),
        rest_speed=_bounded(safety, "rest_speed_rad_s", "rest_speed"),
        torque_limit=_bounded(safety, "torque_limit_percent", "torque_limit"),
        command_timeout=_bounded(safety, "command_timeout_s", "command_timeout"),
        compliant_after_timeout=_bounded(safety, "compliant_after_timeout_s", "compliant_after_timeout"),
    )
    return ArmConfig(bus_config, joints, tuple(rest_pose), safety_config)


def _joint(data: Any, where: str) -> JointConfig:
    entry = _mapping(data, where)
    orientation = str(_field(entry, "orientation", where))
    if orientation not in ("direct", "indirect"):
        raise ConfigError(f"{where}.orientation={orientation!r}: expected 'direct' or 'indirect'")
    motor_id = int(_field(entry, "id", where))
    if not 0 <= motor_id <= 252:
        raise ConfigError(f"{where}.id={motor_id} is outside [0, 252]")
    lower, upper = float(_field(entry, "lower_deg", where)), float(_field(entry, "upper_deg", where))
    if not -150.0 <= lower < upper <= 150.0:
        raise ConfigError(f"{where}: need -150 <= lower_deg < upper_deg <= 150, got [{lower}, {upper}]")
    return JointConfig(
        name=str(_field(entry, "name", where)),
        motor_id=motor_id,
        direction=1 if orientation == "direct" else -1,
        offset_deg=float(entry.get("offset_deg", 0.0)),
        lower_rad=math.radians(lower),
        upper_rad=math.radians(upper),
    )


def _count(value: Any, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise ConfigError(f"{name}={value!r} must be an integer in [0, {high}]")
    return value


def _bounded(section: Mapping[str, Any], key: str, bound: str) -> float:
    return SAFE_BOUNDS[bound].check(f"safety.{key}", float(_field(section, key, "safety")))


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _field(section: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in section:
        raise ConfigError(f"{where}.{key} is missing")
    return section[key]


def _check_unique(values: list[Any], where: str) -> None:
    duplicates = sorted({v for v in values if values.count(v) > 1}, key=str)
    if duplicates:
        raise ConfigError(f"{where}: duplicates {duplicates}")
