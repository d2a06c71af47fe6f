"""One evaluation episode on the arm, as data (published as JSON and logged as one line)."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class EpisodeSummary:
    episode: int  # 1-based
    env_id: str
    checkpoint: str
    goal_source: str  # random | clicked
    goal: tuple[float, float, float]  # env world frame [m]
    steps: int  # commands sent (the env's episode length unless aborted)
    final_distance: float | None  # tip-goal (ErgoReacher) or puck-goal (ErgoPusher) [m] after the last step, measured
    success: bool  # final_distance < success_threshold
    success_threshold: float
    aborted: str | None  # why the episode stopped early (then no distance, no success)
    duration_s: float
    control_rate_hz: float  # commands per second actually achieved
    nominal_rate_hz: float  # the simulator's control rate
    max_command_period_s: float
    late_commands: int  # command periods > 1.5 x nominal
    max_feedback_age_s: float  # oldest joint_states message an observation was built from
    start_error_rad: float  # largest |joint - start pose| when the episode began
    final_joint_positions: dict[str, float]  # the joint_states message the distance comes from [rad]
    final_tip: tuple[float, float, float] | None  # forward kinematics of those positions, world frame [m]
    final_puck: tuple[float, float] | None  # ErgoPusher: the tracked puck the distance comes from
    puck_start: tuple[float, float] | None  # ErgoPusher, random goals: where the puck was asked to start
    simulated_final_distance: float | None  # random goals: the same episode in the reference simulator
    off_plane_m: float  # clicked goals: distance of the clicked point from the goal plane

    def to_json(self) -> str:
        return json.dumps(_finite(asdict(self)), sort_keys=True)

    def log_line(self, episodes: int) -> str:
        of = f"/{episodes}" if episodes > 0 else ""
        if self.aborted:
            return f"episode {self.episode}{of} ABORTED after {self.steps} steps: {self.aborted}"
        sim = (f", simulator {self.simulated_final_distance:.4f} m" if self.simulated_final_distance is not None
               else "")
        verdict = "SUCCESS" if self.success else "miss"
        return (f"episode {self.episode}{of}: final distance {self.final_distance:.4f} m "
                f"({verdict}, threshold {self.success_threshold:g} m{sim}); {self.steps} steps at "
                f"{self.control_rate_hz:.1f} Hz (nominal {self.nominal_rate_hz:.1f}), max period "
                f"{1000 * self.max_command_period_s:.1f} ms, oldest feedback {1000 * self.max_feedback_age_s:.1f} ms")


def _finite(value: Any) -> Any:
    """JSON has no NaN/inf: they become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
