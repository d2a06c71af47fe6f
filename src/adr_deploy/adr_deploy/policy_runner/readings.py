"""What the runner measures: joint states from the driver and (ErgoPusher) the puck from a tracker."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .errors import DeployError


@dataclass(frozen=True)
class JointReading:
    """One sensor_msgs/JointState of the driver: radians and rad/s in the joint frame, by joint name."""

    positions: Mapping[str, float]
    velocities: Mapping[str, float]
    received_at: float  # monotonic clock of the runner [s]

    @classmethod
    def from_message(cls, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float],
                     received_at: float) -> JointReading:
        if len(positions) != len(names) or (velocities and len(velocities) != len(names)):
            raise DeployError(f"joint_states with {len(names)} names, {len(positions)} positions and "
                              f"{len(velocities)} velocities")
        speeds = velocities if velocities else [0.0] * len(names)
        return cls(dict(zip(names, map(float, positions))), dict(zip(names, map(float, speeds))), received_at)

    def missing(self, names: Sequence[str]) -> list[str]:
        return [name for name in names if name not in self.positions]


@dataclass(frozen=True)
class PuckReading:
    """Puck centre in the env's world frame (table plane) and its velocity, both in metres (per second)."""

    position: tuple[float, float]
    velocity: tuple[float, float]
    received_at: float


class PuckTrack:
    """Puck positions from a tracker -> ``PuckReading`` with the velocity as the difference of the last two."""

    def __init__(self) -> None:
        self._last: tuple[float, tuple[float, float]] | None = None
        self.latest: PuckReading | None = None

    def update(self, x: float, y: float, stamp: float, received_at: float) -> PuckReading:
        velocity = (0.0, 0.0)
        if self._last is not None and stamp > self._last[0]:
            dt = stamp - self._last[0]
            velocity = ((x - self._last[1][0]) / dt, (y - self._last[1][1]) / dt)
        self._last = (stamp, (x, y))
        self.latest = PuckReading((x, y), velocity, received_at)
        return self.latest
