"""The runner's observation, action and goal mappings equal the simulators' own, step by step.

The envs are stepped with random actions; after each step the runner builds its observation from what a driver
would report for that state (all six joint angles and velocities, by name) and must reproduce the env's observation.
"""
from __future__ import annotations

import math

import numpy as np
import pybullet as pb
import pytest

from adr_core.envs import make_env
from adr_core.envs.ergo_jr import JOINT_NAMES
from adr_deploy.policy_runner.errors import DeployError
from adr_deploy.policy_runner.goals import ARM_PLANE_X, goal_from_point
from adr_deploy.policy_runner.kinematics import TipKinematics
from adr_deploy.policy_runner.observation import build_observation, clipped_action, joint_targets
from adr_deploy.policy_runner.readings import JointReading, PuckReading, PuckTrack
from adr_deploy.policy_runner.task import HELD_TARGET_RAD, task_for

REACHER, PUSHER = "adr/ErgoReacher-v0", "adr/ErgoPusher-v0"


def reading_of(env) -> JointReading:
    unwrapped = env.unwrapped
    return JointReading(dict(zip(JOINT_NAMES, unwrapped.joint_positions().tolist())),
                        dict(zip(JOINT_NAMES, unwrapped.joint_velocities().tolist())), received_at=0.0)


def test_task_constants_are_the_envs() -> None:
    for env_id in (REACHER, PUSHER):
        task, env = task_for(env_id), make_env(env_id)
        assert (task.obs_dim, task.act_dim) == (env.observation_space.shape[0], env.action_space.shape[0])
        assert task.control_period_s == pytest.approx(1 / 60) and task.control_rate_hz == pytest.approx(60.0)
        assert task.control_rate_hz == pytest.approx(env.metadata["render_fps"])
        assert task.solved_distance == 0.025
        assert set(task.actuated) | set(task.held) == set(JOINT_NAMES)
        env.close()
    with pytest.raises(DeployError, match="cannot run on the Ergo Jr"):
        task_for("adr/Pusher3DOF-v0")


def test_reacher_observation_equals_the_envs() -> None:
    task, env = task_for(REACHER), make_env(REACHER)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    goal = env.unwrapped.goal_position
    for _ in range(40):
        assert np.array_equal(build_observation(task, reading_of(env), goal[[1, 2]]), obs)
        obs, *_ = env.step(rng.uniform(-1.2, 1.2, 4).astype(np.float32))
    assert np.abs(obs[4:8]).max() > 0.05  # the velocities took part (not all zero)
    env.close()


def test_pusher_observation_equals_the_envs_with_its_tip_from_the_runners_kinematics() -> None:
    task, env = task_for(PUSHER), make_env(PUSHER)
    kinematics = TipKinematics(task)
    unwrapped = env.unwrapped
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    unwrapped.set_puck_velocity((0.05, -0.02))
    obs = unwrapped._observation()  # the puck velocity set above, as the next step would see it
    goal = unwrapped.goal_position
    for _ in range(40):
        joints = reading_of(env)
        (_, vx), (_, vy) = ((s[0], s[1]) for s in pb.getJointStates(unwrapped._puck, [0, 1],
                                                                      physicsClientId=unwrapped.sim.client))
        puck = PuckReading(tuple(unwrapped.puck_position.tolist()), (vx, vy), 0.0)
        tip = kinematics.tip(joints.positions)
        assert np.allclose(tip, unwrapped.tip_position, atol=1e-9)
        assert np.array_equal(build_observation(task, joints, goal, tip, puck), obs)
        obs, *_ = env.step(rng.uniform(-1.2, 1.2, 4).astype(np.float32))
    kinematics.close()
    env.close()


def test_actions_become_the_envs_servo_targets_and_the_other_joints_are_held() -> None:
    task, env = task_for(REACHER), make_env(REACHER)
    sim = env.unwrapped.sim
    rng = np.random.default_rng(2)
    for _ in range(50):
        action = clipped_action(rng.uniform(-1.5, 1.5, 4), 4)
        targets = dict(zip(JOINT_NAMES, joint_targets(task, action, JOINT_NAMES)))
        assert [targets[m] for m in task.actuated] == sim.scaled_targets(action, task.action_scale)
        assert all(targets[m] == HELD_TARGET_RAD for m in task.held)
    order = ("m6", "m1", "m5", "m2", "m4", "m3")  # whatever order the driver's joint_states use
    assert joint_targets(task, np.ones(4, np.float32), order) == [math.pi / 2, 0.0, math.pi / 2, math.pi / 2, 0.0,
                                                                  math.pi / 2]
    with pytest.raises(ValueError, match="expected 4 finite values"):
        clipped_action(np.array([0.0, np.nan, 0.0, 0.0]), 4)
    # the env holds its non-actuated joints at HELD_TARGET_RAD: after some steps they are still there
    env.reset(seed=0)
    for _ in range(30):
        env.step(rng.uniform(-1, 1, 4).astype(np.float32))
    positions = dict(zip(JOINT_NAMES, env.unwrapped.joint_positions()))
    assert all(abs(positions[m] - HELD_TARGET_RAD) < 0.02 for m in task.held)
    env.close()


def test_reacher_goals_lie_in_the_arm_plane_and_clicks_are_projected_onto_it() -> None:
    task, env = task_for(REACHER), make_env(REACHER)
    for seed in range(5):
        env.reset(seed=seed)
        assert abs(env.unwrapped.goal_position[0] - ARM_PLANE_X) < 1e-9
    env.close()
    goal = goal_from_point(task, (0.03, -0.1, 0.2), "world", "world", "base_link")
    assert goal.world == (ARM_PLANE_X, -0.1, 0.2) and goal.off_plane_m == pytest.approx(0.03)
    assert goal.observed(task) == (-0.1, 0.2)
    from_base = goal_from_point(task, (0.0, -0.1, 0.13), "base_link", "world", "base_link")
    assert from_base.world == pytest.approx((0.0, -0.1, 0.2))  # base_link sits 0.07 m above the world origin


def test_pusher_goals_lie_on_the_table() -> None:
    task = task_for(PUSHER)
    goal = goal_from_point(task, (0.05, -0.1, 0.01), "world", "world", "base_link")
    assert goal.world == (0.05, -0.1, 0.0) and goal.off_plane_m == pytest.approx(0.01)
    assert goal.observed(task) == (0.05, -0.1)


def test_goals_in_other_frames_or_not_finite_are_refused() -> None:
    task = task_for(REACHER)
    with pytest.raises(DeployError, match="goal in frame 'map'"):
        goal_from_point(task, (0.0, 0.0, 0.2), "map", "world", "base_link")
    with pytest.raises(DeployError, match="not finite"):
        goal_from_point(task, (0.0, math.nan, 0.2), "world", "world", "base_link")


def test_puck_velocity_is_the_difference_of_the_last_two_positions() -> None:
    track = PuckTrack()
    assert track.update(0.10, -0.10, stamp=1.0, received_at=5.0).velocity == (0.0, 0.0)
    reading = track.update(0.11, -0.12, stamp=1.1, received_at=5.1)
    assert reading.velocity == pytest.approx((0.1, -0.2)) and reading.received_at == 5.1


def test_joint_states_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(DeployError, match="6 names, 5 positions"):
        JointReading.from_message(list(JOINT_NAMES), [0.0] * 5, [0.0] * 6, 0.0)


def test_the_start_pose_and_its_tolerance_are_the_envs() -> None:
    from adr_core.envs import ergo_pusher, ergo_reacher
    from adr_deploy.policy_runner.task import START_TOLERANCE_RAD

    assert START_TOLERANCE_RAD == ergo_reacher.START_NOISE == ergo_pusher.START_NOISE
    env = make_env(REACHER)
    for seed in range(3):
        env.reset(seed=seed)
        start = env.unwrapped.joint_positions()
        assert np.abs(start).max() <= START_TOLERANCE_RAD  # every joint starts within the tolerance of 0
        assert task_for(REACHER).start_pose == dict.fromkeys(JOINT_NAMES, 0.0)
    env.close()
