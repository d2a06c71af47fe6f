"""What deploying one simulator's policy means on the arm, read from the env modules themselves.

Every number here (joints, scales, control period, start pose, base position, success threshold) is imported from
``adr_core.envs.ergo_reacher`` / ``ergo_pusher`` / ``ergo_jr`` and ``adr_core.evaluation.solved_criterion``, so the
runner cannot drift from the simulator it was trained in.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from adr_core.envs import ergo_pusher, ergo_reacher
from adr_core.envs.ergo_jr import JOINT_NAMES, PHYSICS_DT
from adr_core.evaluation.solved import solved_criterion

from .errors import DeployError

# The envs command their non-actuated servos to 0 rad (``sim.command(self._held, [0.0] * len(HELD), ...)``) and
# reset every joint to 0 (+- START_NOISE on the actuated ones): the runner holds and starts there too.
HELD_TARGET_RAD = 0.0
START_POSE_RAD = 0.0
START_TOLERANCE_RAD = ergo_reacher.START_NOISE  # = ergo_pusher.START_NOISE: the envs' own spread of start poses


@dataclass(frozen=True)
class DeployTask:
    env_id: str
    actuated: tuple[str, ...]  # joints the policy drives, in action/observation order
    held: tuple[str, ...]  # joints held at HELD_TARGET_RAD
    action_scale: float  # target = clip(action, -1, 1) * action_scale [rad]
    velocity_scale: float  # observation = velocity / velocity_scale
    control_period_s: float  # one env step: frame_skip physics steps
    base_position: tuple[float, float, float]  # where the URDF's base_link sits in the env's world frame [m]
    goal_axes: tuple[int, ...]  # world axes of the goal in the observation: (1, 2) = y, z; (0, 1) = x, y
    solved_distance: float  # success: final distance < this [m]
    obs_dim: int
    act_dim: int
    needs_puck: bool  # ErgoPusher: the observation and the distance need the puck's position

    @property
    def control_rate_hz(self) -> float:
        return 1.0 / self.control_period_s

    @property
    def joint_names(self) -> tuple[str, ...]:
        return JOINT_NAMES

    @property
    def start_pose(self) -> dict[str, float]:
        return {name: START_POSE_RAD for name in JOINT_NAMES}


def _threshold(env_id: str) -> float:
    criterion = solved_criterion(env_id)
    assert criterion.metric == "final_distance" and not criterion.higher_is_better
    return criterion.threshold


def _task(env: ModuleType, goal_axes: tuple[int, int], obs_dim: int, needs_puck: bool) -> DeployTask:
    """The deploy view of an Ergo env module (ergo_reacher or ergo_pusher)."""
    return DeployTask(
        env_id=env.ENV_ID, actuated=env.ACTUATED, held=env.HELD, action_scale=env.ACTION_SCALE,
        velocity_scale=env.VELOCITY_SCALE, control_period_s=env.FRAME_SKIP * PHYSICS_DT,
        base_position=env.BASE_POSITION, goal_axes=goal_axes, solved_distance=_threshold(env.ENV_ID),
        obs_dim=obs_dim, act_dim=len(env.ACTUATED), needs_puck=needs_puck)


def _reacher() -> DeployTask:
    return _task(ergo_reacher, goal_axes=(1, 2), obs_dim=2 * len(ergo_reacher.ACTUATED) + 2, needs_puck=False)


def _pusher() -> DeployTask:
    return _task(ergo_pusher, goal_axes=(0, 1), obs_dim=ergo_pusher.OBS_SIZE, needs_puck=True)


DEPLOYABLE = {ergo_reacher.ENV_ID: _reacher, ergo_pusher.ENV_ID: _pusher}


def task_for(env_id: str) -> DeployTask:
    if env_id not in DEPLOYABLE:
        raise DeployError(f"a policy of {env_id!r} cannot run on the Ergo Jr; deployable: {', '.join(DEPLOYABLE)}")
    return DEPLOYABLE[env_id]()
