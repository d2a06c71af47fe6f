"""adr/ErgoPusher-v0: puck friction loss and damping act on the puck's slide joints as expected."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.envs import make_env

ENV_ID = "adr/ErgoPusher-v0"
DEFAULT = {"puck_frictionloss": 0.01, "puck_damping": 0.025}


def slide_after_kick(parameters: dict[str, float], steps: int = 40) -> float:
    env = make_env(ENV_ID)
    sim = env.unwrapped
    sim.set_parameters(parameters)
    env.reset(seed=0)
    start = sim.puck_position
    sim.set_puck_velocity((0.3, 0.0))
    for _ in range(steps):
        env.step(np.zeros(4, dtype=np.float32))
    return float(np.linalg.norm(sim.puck_position - start))


@pytest.mark.parametrize("name", ["puck_frictionloss", "puck_damping"])
def test_lower_value_makes_the_puck_slide_farther(name):
    slides = [slide_after_kick({**DEFAULT, name: DEFAULT[name] * m}) for m in (0.5, 0.67, 1.0)]
    assert slides[0] > slides[1] > slides[2] > 0.01
    assert slides[0] - slides[2] > 0.004


def test_puck_comes_to_rest_under_dry_friction():
    env = make_env(ENV_ID)
    sim = env.unwrapped
    env.reset(seed=0)
    sim.set_puck_velocity((0.3, 0.0))
    for _ in range(90):
        obs, *_ = env.step(np.zeros(4, dtype=np.float32))
    assert np.abs(obs[13:15]).max() < 1e-3  # stopped, not creeping


def test_arm_sweep_moves_the_puck():
    env = make_env(ENV_ID)
    sim = env.unwrapped
    env.reset(seed=1)
    start = sim.puck_position
    for t in range(100):
        yaw = -0.4 if t <= 30 else -0.4 + 0.8 * min(t - 30, 50) / 50
        env.step(np.array([yaw, -1.0, -0.13, -0.2], dtype=np.float32))
    assert np.linalg.norm(sim.puck_position - start) > 0.02


def test_observation_reward_and_solved():
    env = make_env(ENV_ID)
    obs, info = env.reset(seed=3)
    sim = env.unwrapped
    assert obs.shape == (17,)
    np.testing.assert_allclose(obs[8:11], sim.tip_position, atol=1e-6)  # the tip in 3-D: xy and its height
    np.testing.assert_allclose(obs[11:13], sim.puck_position, atol=1e-6)
    np.testing.assert_allclose(obs[15:17], sim.goal_position, atol=1e-6)
    assert 0.05 <= info["distance"] == pytest.approx(float(np.linalg.norm(sim.puck_position - sim.goal_position)))
    _, reward, *_, info = env.step(np.zeros(4, dtype=np.float32))
    assert reward == -info["distance"]
    assert sim.is_solved(0.0, {"final_distance": 0.02}) and not sim.is_solved(0.0, {"final_distance": 0.03})
    assert sim.joint_names == ("m1", "m2", "m3", "m4", "m5", "m6") and sim.joint_positions().shape == (6,)


def test_the_records_push_height_is_the_envs() -> None:
    from adr_core.envs import env_record, ergo_pusher

    layout = env_record(ENV_ID).goal_layout
    assert layout.effector_height == (10, pytest.approx(ergo_pusher.PUSH_HEIGHT))
    assert layout.fits(ergo_pusher.OBS_SIZE)
