"""Checking, clamping and timing position commands, in the joint frame (rad). No ROS, no bus."""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from .config import JointConfig


class CommandRejected(ValueError):
    """A command the driver refuses; the message is the reason given to the sender."""


@dataclass(frozen=True)
class Clamp:
    joint: str
    requested: float
    applied: float

    def __str__(self) -> str:
        return f"{self.joint} {self.requested:.3f} rad clamped to {self.applied:.3f}"


def check_positions(values: Sequence[float], joint_names: Sequence[str]) -> tuple[float, ...]:
    """A full position vector in configured joint order (ros2_control's forward position controller layout)."""
    if len(values) != len(joint_names):
        raise CommandRejected(f"expected {len(joint_names)} positions ({', '.join(joint_names)}), got {len(values)}")
    _check_finite(values, joint_names)
    return tuple(float(v) for v in values)


def clamp_to_limits(targets: Sequence[float], joints: Sequence[JointConfig],
                    indices: Sequence[int] | None = None) -> tuple[tuple[float, ...], list[Clamp]]:
    """Targets for ``joints[indices]`` (all joints by default) within each joint's limits, and what was clamped."""
    indices = range(len(joints)) if indices is None else indices
    clamped, clamps = [], []
    for target, index in zip(targets, indices):
        joint = joints[index]
        applied = min(max(target, joint.lower_rad), joint.upper_rad)
        if applied != target:
            clamps.append(Clamp(joint.name, target, applied))
        clamped.append(applied)
    return tuple(clamped), clamps


@dataclass(frozen=True)
class TrajectoryPoint:
    time_from_start: float  # s
    positions: tuple[float, ...]  # rad, in the order of the trajectory's joint names


class TrajectoryPlan:
    """Linear interpolation through timed points for a subset of joints, starting from where their goals are now.

    Before the first point the goal moves linearly from the start positions (reached at t=0) to the first point.
    After the last point the goal stays there.
    """

    def __init__(self, indices: Sequence[int], start: Sequence[float], points: Sequence[TrajectoryPoint]) -> None:
        self.indices = tuple(indices)
        self._times = [0.0] + [p.time_from_start for p in points]
        self._positions = [tuple(start)] + [p.positions for p in points]

    @property
    def duration(self) -> float:
        return self._times[-1]

    def sample(self, elapsed: float) -> tuple[float, ...]:
        elapsed = max(elapsed, 0.0)
        if elapsed >= self._times[-1]:
            return self._positions[-1]
        after = bisect.bisect_right(self._times, elapsed)
        t0, t1 = self._times[after - 1], self._times[after]
        fraction = (elapsed - t0) / (t1 - t0) if t1 > t0 else 1.0
        before, following = self._positions[after - 1], self._positions[after]
        return tuple(a + fraction * (b - a) for a, b in zip(before, following))


def check_trajectory(joint_names: Sequence[str], points: Sequence[TrajectoryPoint],
                     known_joints: Sequence[str]) -> list[int]:
    """Indices (in ``known_joints``) of the trajectory's joints, once names, sizes, values and times are sound."""
    if not joint_names:
        raise CommandRejected("trajectory names no joints")
    unknown = [name for name in joint_names if name not in known_joints]
    if unknown:
        raise CommandRejected(f"unknown joints {unknown}; this arm has {list(known_joints)}")
    if len(set(joint_names)) != len(joint_names):
        raise CommandRejected(f"joint names repeat: {list(joint_names)}")
    if not points:
        raise CommandRejected("trajectory has no points")
    previous = 0.0
    for number, point in enumerate(points):
        if len(point.positions) != len(joint_names):
            raise CommandRejected(f"point {number}: {len(point.positions)} positions for {len(joint_names)} joints")
        _check_finite(point.positions, joint_names, f"point {number}: ")
        if not math.isfinite(point.time_from_start) or point.time_from_start < previous:
            raise CommandRejected(f"point {number}: time_from_start {point.time_from_start} s goes backwards")
        previous = point.time_from_start
    return [list(known_joints).index(name) for name in joint_names]


def _check_finite(values: Sequence[float], names: Sequence[str], prefix: str = "") -> None:
    bad = [name for name, value in zip(names, values) if not math.isfinite(value)]
    if bad:
        raise CommandRejected(f"{prefix}non-finite position for {', '.join(bad)}")
