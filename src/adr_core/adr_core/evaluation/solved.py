"""The paper's "solved" criterion of each environment as data (for the lines in the figures and the saved files).

The numbers come from the env modules themselves (the constants their ``is_solved`` uses).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Metric = Literal["return", "final_distance"]


@dataclass(frozen=True)
class SolvedCriterion:
    metric: Metric  # what is compared: the episode return or the final distance
    threshold: float
    higher_is_better: bool

    @property
    def label(self) -> str:
        what = "return" if self.metric == "return" else "final distance"
        return f"solved: {what} {'>' if self.higher_is_better else '<'} {self.threshold:g}"

    @property
    def axis_label(self) -> str:
        return "episode return" if self.metric == "return" else "final distance (m)"


def solved_criterion(env_id: str) -> SolvedCriterion:
    if env_id == "adr/LunarLander-v0":
        from ..envs.lunar_lander import SOLVED_RETURN
        return SolvedCriterion("return", SOLVED_RETURN, True)
    if env_id == "adr/Pusher3DOF-v0":
        from ..envs.pusher3dof import SOLVED_DISTANCE
        return SolvedCriterion("final_distance", SOLVED_DISTANCE, False)
    if env_id == "adr/ErgoReacher-v0":
        from ..envs.ergo_reacher import SOLVED_DISTANCE
        return SolvedCriterion("final_distance", SOLVED_DISTANCE, False)
    if env_id == "adr/ErgoPusher-v0":
        from ..envs.ergo_pusher import SOLVED_DISTANCE
        return SolvedCriterion("final_distance", SOLVED_DISTANCE, False)
    raise ValueError(f"no solved criterion known for {env_id!r}")
