"""adr/LunarLander-v0: exact equivalence with LunarLanderContinuous-v3 at MES 13, and the MES effect."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.box2d import lunar_lander as stock

from adr_core.envs import make_env
from adr_core.randomization import RandomizationError

ENV_ID = "adr/LunarLander-v0"


def run_pair(seed: int, policy) -> tuple[int, float]:
    ours, ref = make_env(ENV_ID), gym.make("LunarLanderContinuous-v3")
    obs, info = ours.reset(seed=seed)
    ref_obs, _ = ref.reset(seed=seed)
    np.testing.assert_array_equal(obs, ref_obs)
    assert info["parameters"] == {"main_engine_power": 13.0}
    steps, episode_return = 0, 0.0
    while True:
        action = policy(obs, steps)
        obs, reward, terminated, truncated, _ = ours.step(action)
        ref_obs, ref_reward, ref_terminated, ref_truncated, _ = ref.step(action)
        steps += 1
        np.testing.assert_array_equal(obs, ref_obs, err_msg=f"seed {seed} step {steps}")
        assert reward == ref_reward and terminated == ref_terminated and truncated == ref_truncated
        episode_return += float(reward)
        if terminated or truncated:
            return steps, episode_return


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_random_actions_match_stock_env_for_full_episodes(seed):
    rng = np.random.default_rng(100 + seed)
    steps, _ = run_pair(seed, lambda obs, t: rng.uniform(-1.0, 1.0, 2).astype(np.float32))
    assert steps > 10


def test_heuristic_landing_matches_stock_env_and_is_solved():
    env = make_env(ENV_ID)
    steps, episode_return = run_pair(3, lambda obs, t: stock.heuristic(env.unwrapped, obs))
    assert steps < 1000 and env.unwrapped.is_solved(episode_return, {})
    assert not env.unwrapped.is_solved(150.0, {})


def test_time_limit_is_1000_steps():
    env = make_env(ENV_ID)
    assert env.spec.max_episode_steps == 1000


def vertical_velocity_after_full_throttle(power: float, steps: int = 40) -> float:
    env = make_env(ENV_ID)
    env.unwrapped.set_parameters([power])
    env.reset(seed=5)
    for _ in range(steps):
        obs, *_ = env.step(np.array([1.0, 0.0], dtype=np.float32))
    return float(obs[3])


def test_weaker_main_engine_falls_faster_under_full_throttle():
    weak, default, strong = (vertical_velocity_after_full_throttle(p) for p in (8.0, 13.0, 20.0))
    assert weak < default < strong
    assert default - weak > 0.1  # a real difference, not float noise


def test_parameters_take_effect_at_next_reset_and_are_reported():
    env = make_env(ENV_ID)
    env.reset(seed=0)
    env.unwrapped.set_parameters({"main_engine_power": 9.5})
    assert env.unwrapped.parameters[0] == 13.0  # not before the reset
    _, info = env.reset(seed=0)
    assert info["parameters"] == {"main_engine_power": 9.5}
    assert env.unwrapped.parameters[0] == 9.5 and env.unwrapped.main_engine_power == 9.5
    assert stock.MAIN_ENGINE_POWER == 13.0  # the module global is never written


def test_instances_are_independent_when_interleaved():
    expected = {p: vertical_velocity_after_full_throttle(p) for p in (8.0, 20.0)}
    envs = {p: make_env(ENV_ID) for p in expected}
    for p, env in envs.items():
        env.unwrapped.set_parameters([p])
        env.reset(seed=5)
    for _ in range(40):
        last = {p: env.step(np.array([1.0, 0.0], dtype=np.float32))[0] for p, env in envs.items()}
    assert {p: float(obs[3]) for p, obs in last.items()} == expected


def test_bad_parameters_are_rejected_and_keep_the_old_value():
    env = make_env(ENV_ID)
    with pytest.raises(RandomizationError, match=r"main_engine_power=25 is outside the allowed range \[8, 20\]"):
        env.unwrapped.set_parameters([25.0])
    with pytest.raises(RandomizationError):
        env.unwrapped.set_parameters([13.0, 1.0])
    _, info = env.reset(seed=0)
    assert info["parameters"]["main_engine_power"] == 13.0


def test_rgb_array_render_headless():
    env = make_env(ENV_ID, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (400, 600, 3) and frame.std() > 0
