"""What every adr/* env promises: registration, seeding/determinism, parameters in info, validation, rendering."""
from __future__ import annotations

import numpy as np
import pytest

from adr_core.envs import ENV_IDS, make_env
from adr_core.randomization import RandomizationError, RandomizationSpace


def rollout(env_id: str, seed: int, steps: int = 30, parameters: np.ndarray | None = None):
    env = make_env(env_id)
    if parameters is not None:
        env.unwrapped.set_parameters(parameters)
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace = [obs]
    rewards = []
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        trace.append(obs)
        rewards.append(reward)
        if terminated or truncated:
            break
    env.close()
    return np.array(trace), np.array(rewards)


def test_all_four_envs_are_registered():
    assert ENV_IDS == ("adr/LunarLander-v0", "adr/Pusher3DOF-v0", "adr/ErgoReacher-v0", "adr/ErgoPusher-v0")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_trajectory_other_seed_differs(env_id):
    a_obs, a_rew = rollout(env_id, seed=11)
    b_obs, b_rew = rollout(env_id, seed=11)
    np.testing.assert_array_equal(a_obs, b_obs)
    np.testing.assert_array_equal(a_rew, b_rew)
    c_obs, _ = rollout(env_id, seed=12)
    assert not np.array_equal(a_obs[0], c_obs[0])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_randomized_trajectory_is_deterministic_too(env_id):
    space = make_env(env_id).unwrapped.randomization_space
    point = space.from_normalized(np.full(space.ndim, 0.25))
    a_obs, _ = rollout(env_id, seed=3, parameters=point)
    b_obs, _ = rollout(env_id, seed=3, parameters=point)
    np.testing.assert_array_equal(a_obs, b_obs)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_actions_and_info(env_id):
    env = make_env(env_id)
    sim = env.unwrapped
    assert isinstance(sim.randomization_space, RandomizationSpace) and sim.randomization_space.env_id == env_id
    assert (
        env.action_space.dtype == np.float32
        and np.all(env.action_space.low == -1)
        and np.all(env.action_space.high == 1)
    )
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert info["parameters"] == dict(zip(sim.randomization_space.names, sim.randomization_space.reference()))
    np.testing.assert_array_equal(sim.parameters, sim.randomization_space.reference())
    _, _, _, _, step_info = env.step(env.action_space.sample())
    if env_id != "adr/LunarLander-v0":
        assert step_info["final_distance"] == step_info["distance"] >= 0.0


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_reports_new_parameters_and_they_persist(env_id):
    env = make_env(env_id)
    space = env.unwrapped.randomization_space
    low, _ = space.range_box("hard")
    env.unwrapped.set_parameters(low)
    _, info = env.reset(seed=1)
    assert list(info["parameters"].values()) == list(low)
    _, info = env.reset(seed=2)  # still in effect for the next episode
    assert list(info["parameters"].values()) == list(low)
    np.testing.assert_array_equal(env.unwrapped.parameters, low)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bad_parameters_raise_naming_the_dimension(env_id):
    env = make_env(env_id)
    space = env.unwrapped.randomization_space
    too_high = space.reference()
    too_high[-1] = space.limits()[1][-1] * 1.5 + 1.0
    with pytest.raises(RandomizationError, match=rf"{space.names[-1]}=.*allowed range"):
        env.unwrapped.set_parameters(too_high)
    with pytest.raises(RandomizationError, match="expected"):
        env.unwrapped.set_parameters(np.ones(space.ndim + 1))
    with pytest.raises(RandomizationError, match="unknown dimension"):
        env.unwrapped.set_parameters({"nope": 1.0})
    with pytest.raises(RandomizationError, match="one point"):
        env.unwrapped.set_parameters(np.tile(space.reference(), (2, 1)))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_custom_space_must_have_the_env_dimensions(env_id):
    env = make_env(env_id)
    space = env.unwrapped.randomization_space
    oracle = space.with_training_range("hard")
    assert make_env(env_id, space=oracle).unwrapped.randomization_space == oracle
    wrong = RandomizationSpace.from_dict(
        {"env_id": env_id, "dimensions": [{"name": "other", "default": 1.0, "train": "default"}]}
    )
    with pytest.raises(RandomizationError, match="this env needs"):
        make_env(env_id, space=wrong)


def test_unknown_env_id():
    with pytest.raises(RandomizationError, match="unknown env id"):
        make_env("adr/Nope-v0")


@pytest.mark.parametrize("env_id", ENV_IDS[1:])
def test_rgb_array_render_headless(env_id):
    env = make_env(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8 and frame.std() > 5
    env.close()
