"""The policy runner's outputs as ROS messages: the goal for rviz and its state for /diagnostics."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped

from .policy_runner.summary import EpisodeSummary


def goal_point(world: tuple[float, float, float], frame_id: str, stamp: Time) -> PointStamped:
    msg = PointStamped()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    msg.point.x, msg.point.y, msg.point.z = world
    return msg


def runner_diagnostics(name: str, state: str, error: str | None, env_id: str, checkpoint: str, goal_mode: str,
                       summaries: list[EpisodeSummary], stamp: Time) -> DiagnosticArray:
    complete = [s for s in summaries if s.aborted is None]
    last = summaries[-1] if summaries else None
    values = {
        "state": state, "env": env_id, "checkpoint": checkpoint, "goal mode": goal_mode,
        "episodes done": str(len(summaries)), "aborted episodes": str(len(summaries) - len(complete)),
        "successes": str(sum(s.success for s in complete)),
        "last final distance [m]": f"{last.final_distance:.4f}" if last and last.final_distance is not None else "",
        "last control rate [Hz]": f"{last.control_rate_hz:.1f}" if last else "",
    }
    status = DiagnosticStatus(level=DiagnosticStatus.ERROR if error else DiagnosticStatus.OK, name=name,
                              message=error or state, hardware_id=env_id)
    status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
    msg = DiagnosticArray()
    msg.header.stamp = stamp
    msg.status.append(status)
    return msg
