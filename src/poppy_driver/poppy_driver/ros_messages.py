"""Plain driver data <-> ROS messages."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from .arm import JointSample
from .commands import TrajectoryPoint
from .diagnostics import Entry


def joint_state(sample: JointSample, stamp: Time) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(sample.names)
    msg.position = list(sample.positions)
    msg.velocity = list(sample.velocities)
    msg.effort = list(sample.efforts)
    return msg


def diagnostic_array(entries: list[Entry], stamp: Time) -> DiagnosticArray:
    msg = DiagnosticArray()
    msg.header.stamp = stamp
    for entry in entries:
        status = DiagnosticStatus(level=bytes([int(entry.level)]), name=entry.name, message=entry.message,
                                  hardware_id=entry.hardware_id)
        status.values = [KeyValue(key=key, value=value) for key, value in entry.values.items()]
        msg.status.append(status)
    return msg


def trajectory_points(msg: JointTrajectory) -> list[TrajectoryPoint]:
    return [TrajectoryPoint(p.time_from_start.sec + p.time_from_start.nanosec * 1e-9, tuple(p.positions))
            for p in msg.points]
