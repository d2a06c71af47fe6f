"""adr/Pusher3DOF-v0: puck friction loss and damping act on the puck's slide joints as expected."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.envs import make_env

ENV_ID = "adr/Pusher3DOF-v0"
DEFAULT = {"puck_frictionloss": 0.01, "puck_damping": 0.025}


def slide_after_push(parameters: dict[str, float], speed: float = 0.5, steps: int = 40) -> float:
    """Puck displacement after an impulse giving it ``speed`` m/s along +x (the arm holds still, far away)."""
    env = make_env(ENV_ID)
    env.unwrapped.set_parameters(parameters)
    env.reset(seed=2)
    sim = env.unwrapped
    start = sim.puck_position
    sim.data.qvel[sim._puck_dofs[0]] = speed
    for _ in range(steps):
        env.step(np.zeros(3, dtype=np.float32))
    return float(np.linalg.norm(sim.puck_position - start))


@pytest.mark.parametrize("name", ["puck_frictionloss", "puck_damping"])
def test_lower_value_makes_the_puck_slide_farther(name):
    slides = [slide_after_push({**DEFAULT, name: DEFAULT[name] * m}) for m in (0.5, 0.67, 1.0)]
    assert slides[0] > slides[1] > slides[2] > 0.01
    assert slides[0] - slides[2] > 0.005  # clearly more than numerical noise


def test_arm_push_carries_the_puck_farther_when_slippery():
    def final_puck(multiplier: float) -> np.ndarray:
        env = make_env(ENV_ID)
        env.unwrapped.set_parameters([0.01 * multiplier, 0.025 * multiplier])
        env.reset(seed=1)
        for t in range(60):
            env.step(np.array([0.6 if t < 25 else 0.0, 0.0, 0.0], dtype=np.float32))
        return env.unwrapped.puck_position

    start = make_env(ENV_ID).reset(seed=1)[0][3:5]
    moved = [float(np.linalg.norm(final_puck(m) - start)) for m in (0.5, 1.0)]
    assert moved[0] > moved[1] > 0.05


def test_parameters_reach_the_model_at_reset_only():
    env = make_env(ENV_ID)
    env.reset(seed=0)
    sim = env.unwrapped
    sim.set_parameters({"puck_frictionloss": 0.006, "puck_damping": 0.02})
    np.testing.assert_array_equal(sim.model.dof_frictionloss[sim._puck_dofs], [0.01, 0.01])
    _, info = env.reset()
    np.testing.assert_array_equal(sim.model.dof_frictionloss[sim._puck_dofs], [0.006, 0.006])
    np.testing.assert_array_equal(sim.model.dof_damping[sim._puck_dofs], [0.02, 0.02])
    assert info["parameters"] == {"puck_frictionloss": 0.006, "puck_damping": 0.02}
    np.testing.assert_array_equal(sim.model.dof_frictionloss[:3], [0.0, 0.0, 0.0])  # the arm is untouched


def test_reward_distance_and_solved_threshold():
    env = make_env(ENV_ID)
    obs, info = env.reset(seed=4)
    assert info["distance"] >= 0.4
    action = np.array([1.0, -1.0, 0.5], dtype=np.float32)
    obs, reward, terminated, truncated, info = env.step(action)
    distance = float(np.linalg.norm(obs[3:5] - obs[12:14]))
    np.testing.assert_allclose(obs[3:5], env.unwrapped.puck_position, atol=1e-6)
    assert info["distance"] == pytest.approx(distance, abs=1e-6) and info["final_distance"] == info["distance"]
    assert reward == pytest.approx(-info["distance"] - 0.01 * 2.25, rel=1e-12)
    assert not terminated and not truncated
    assert env.unwrapped.is_solved(-10.0, {"final_distance": 0.24})
    assert not env.unwrapped.is_solved(-10.0, {"final_distance": 0.26})


def test_episode_is_100_steps():
    env = make_env(ENV_ID)
    env.reset(seed=0)
    steps = 0
    while True:
        steps += 1
        if any(env.step(env.action_space.sample())[2:4]):
            break
    assert steps == 100
