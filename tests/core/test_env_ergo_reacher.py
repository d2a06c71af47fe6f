"""adr/ErgoReacher-v0: servo gain and max torque of each actuated motor act in the physically expected direction."""
from __future__ import annotations

import math

import numpy as np
import pytest

from adr_core.envs import make_env

ENV_ID = "adr/ErgoReacher-v0"
MOTORS = ("m2", "m3", "m5", "m6")


def make(gain_multiplier: float, torque_multiplier: float):
    env = make_env(ENV_ID)
    space = env.unwrapped.randomization_space
    values = {
        name: default * (gain_multiplier if name.endswith("_gain") else torque_multiplier)
        for name, default in zip(space.names, space.reference())
    }
    env.unwrapped.set_parameters(values)
    env.reset(seed=0)
    return env


def angle(env, motor: str) -> float:
    return float(env.unwrapped.joint_positions()[env.unwrapped.joint_names.index(motor)])


def travel_towards_target(motor: str, gain_multiplier: float, steps: int = 3) -> float:
    """Strong servos, target +pi/4 on one motor: how far it has turned after ``steps`` steps."""
    env = make(gain_multiplier, 4.0)
    action = np.zeros(4, dtype=np.float32)
    action[MOTORS.index(motor)] = 0.5
    start = angle(env, motor)
    for _ in range(steps):
        env.step(action)
    return angle(env, motor) - start


def remaining_after_lift(motor: str, torque_multiplier: float, steps: int = 6) -> float:
    """The joint starts horizontal-ish (pi/2, gravity pulling it down) and is told to go back to 0."""
    env = make(2.0, torque_multiplier)
    sim = env.unwrapped.sim
    sim.set_joint_angles([sim.joint(motor)], [math.pi / 2])
    for _ in range(steps):
        env.step(np.zeros(4, dtype=np.float32))
    return abs(angle(env, motor))


@pytest.mark.parametrize("motor", MOTORS)
def test_lower_gain_turns_the_joint_more_slowly(motor):
    low, default, high = (travel_towards_target(motor, g) for g in (0.3, 1.0, 2.0))
    assert 0.0 < low < default < high
    assert high - low > 0.05


@pytest.mark.parametrize("motor", MOTORS)
def test_lower_max_torque_lifts_less_far_against_gravity(motor):
    weak, strong = remaining_after_lift(motor, 1.0), remaining_after_lift(motor, 4.0)
    assert strong < weak - 0.05, (weak, strong)


def test_hard_setting_leaves_the_tip_farther_from_a_target_pose():
    def tip_error(values) -> float:
        env = make_env(ENV_ID)
        env.unwrapped.set_parameters(values)
        env.reset(seed=0)
        for _ in range(30):
            _, _, _, _, info = env.step(np.array([0.9, 0.3, 0.3, 0.0], dtype=np.float32))
        return float(
            np.linalg.norm(env.unwrapped.joint_positions()[[1, 2, 4, 5]] - np.array([0.9, 0.3, 0.3, 0.0]) * math.pi / 2)
        )

    space = make_env(ENV_ID).unwrapped.randomization_space
    assert tip_error(space.range_box("hard")[0]) > tip_error(space.reference()) + 0.1


def test_observation_goal_and_reward_layout():
    env = make_env(ENV_ID)
    obs, info = env.reset(seed=5)
    sim = env.unwrapped
    assert obs.shape == (10,)
    np.testing.assert_allclose(obs[8:10], sim.goal_position[1:3], atol=1e-6)
    assert sim.goal_position[2] >= 0.12 and abs(sim.goal_position[0]) < 1e-6  # reachable, in the arm's y-z plane
    obs, reward, *_, info = env.step(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32))
    assert reward == -info["distance"]
    assert info["distance"] == pytest.approx(float(np.linalg.norm(sim.tip_position - sim.goal_position)))
    np.testing.assert_allclose(obs[:4] * math.pi / 2, sim.joint_positions()[[1, 2, 4, 5]], atol=1e-6)
    assert sim.is_solved(-1.0, {"final_distance": 0.02}) and not sim.is_solved(-1.0, {"final_distance": 0.03})


def test_goal_is_reachable_by_construction():
    env = make_env(ENV_ID)
    env.reset(seed=9)
    sim = env.unwrapped
    # the goal was the tip of some pose in the action range: a coarse search finds a pose within 1.5 cm
    rng = np.random.default_rng(0)
    best = math.inf
    for q in rng.uniform(-math.pi / 2, math.pi / 2, (3000, 4)):
        sim.sim.set_joint_angles([sim.sim.joint(m) for m in MOTORS], q)
        best = min(best, float(np.linalg.norm(sim.tip_position - sim.goal_position)))
    assert best < 0.015


def test_joint_names_and_positions_for_joint_state():
    env = make_env(ENV_ID)
    env.reset(seed=0)
    sim = env.unwrapped
    assert sim.joint_names == ("m1", "m2", "m3", "m4", "m5", "m6")
    assert sim.joint_positions().shape == (6,) and sim.joint_velocities().shape == (6,)


def test_reset_on_a_used_instance_replays_exactly():
    env = make_env(ENV_ID)
    actions = np.random.default_rng(1).uniform(-1, 1, (20, 4)).astype(np.float32)

    def episode() -> np.ndarray:
        obs = [env.reset(seed=4)[0]]
        obs += [env.step(a)[0] for a in actions]
        return np.array(obs)

    first = episode()
    env.reset(seed=99)
    env.step(np.ones(4, dtype=np.float32))
    np.testing.assert_array_equal(episode(), first)
