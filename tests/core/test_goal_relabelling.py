"""Goal relabelling (HER) and potential shaping: the envs' reward contract, the relabelled n-step targets against a
brute-force recomputation, the shaping telescope, what ``store`` adds to the replay, determinism, config checks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from tiny_configs import tiny_config

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.goals import relabelled_rows, shaped_rewards
from adr_core.agents.replay_buffer import nstep_transitions
from adr_core.base.goal_layout import GoalLayout
from adr_core.envs import env_record, make_env
from adr_core.envs.pusher3dof import CONTROL_COST
from adr_core.rollout import Trajectory, rollout
from adr_core.training.config import ConfigError

LAYOUT = GoalLayout(goal=(4, 6), achieved=(0, 2), effector=(2, 4))  # toy obs: [achieved, effector, goal, extra]


def _goal_env_residual(env_id: str, action: np.ndarray) -> float:
    """What the env's reward holds beyond -||achieved' - goal'||: Pusher3DOF its control cost, ErgoPusher nothing."""
    if env_id == "adr/Pusher3DOF-v0":
        return -CONTROL_COST * float(np.sum(np.minimum(np.square(action), 1.0)))
    return 0.0


@pytest.mark.parametrize("env_id", ["adr/Pusher3DOF-v0", "adr/ErgoPusher-v0"])
def test_the_reward_of_every_goal_env_is_minus_the_achieved_goal_distance(env_id):
    layout = env_record(env_id).goal_layout
    assert layout is not None
    env = make_env(env_id)
    obs, _ = env.reset(seed=3)
    assert layout.fits(obs.shape[0])
    rng = np.random.default_rng(0)
    for _ in range(40):
        action = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        next_obs, reward, *_ = env.step(action)
        achieved = next_obs[layout.achieved[0]:layout.achieved[1]].astype(np.float64)
        goal = next_obs[layout.goal[0]:layout.goal[1]].astype(np.float64)
        assert reward == pytest.approx(-np.linalg.norm(achieved - goal) + _goal_env_residual(env_id, action),
                                       abs=1e-6)
        np.testing.assert_array_equal(goal, obs[layout.goal[0]:layout.goal[1]])  # the goal stays put
        obs = next_obs
    env.close()


def _episode(rng: np.random.Generator, length: int = 12) -> tuple[np.ndarray, ...]:
    states = rng.normal(size=(length + 1, 7)).astype(np.float32)
    states[:, 4:6] = states[0, 4:6]  # one goal per episode
    obs, next_obs = states[:-1], states[1:]
    goal_term = -np.linalg.norm(next_obs[:, 0:2].astype(np.float64) - next_obs[:, 4:6], axis=1)
    rewards = (goal_term + rng.normal(size=length) * 0.1).astype(np.float32)  # + a goal-free term
    terminated = np.zeros(length, bool)
    terminated[-1] = True
    actions = rng.uniform(-1, 1, (length, 2)).astype(np.float32)
    return obs, actions, rewards, next_obs, terminated


@pytest.mark.parametrize("n", [1, 3])
def test_relabelled_targets_equal_the_n_step_targets_of_the_episode_with_that_goal(n):
    obs, actions, rewards, next_obs, terminated = _episode(np.random.default_rng(1))
    gamma, length = 0.9, len(rewards)
    rows = relabelled_rows(obs, actions, rewards, next_obs, terminated, LAYOUT, 2, gamma, n,
                           np.random.default_rng(5))
    assert rows.obs.shape == (2 * length, 7) and rows.returns.shape == (2 * length,)
    goal_free = rewards.astype(np.float64) + np.linalg.norm(next_obs[:, 0:2].astype(np.float64) - next_obs[:, 4:6],
                                                            axis=1)
    for row in range(2 * length):
        t = row % length
        goal = rows.obs[row, 4:6]
        np.testing.assert_array_equal(rows.next_obs[row, 4:6], goal)
        matches = [f for f in range(t, length) if np.array_equal(next_obs[f, 0:2], goal)]
        assert matches, f"row {row}: the goal is not what the episode achieved at step {t} or later"
        # the whole episode as if its goal had been ``goal``: its n-step targets at t must be the row's
        relabelled_rewards = goal_free - np.linalg.norm(next_obs[:, 0:2].astype(np.float64) - goal, axis=1)
        returns, boot, discounts = nstep_transitions(relabelled_rewards, next_obs, terminated, gamma, n)
        assert rows.returns[row] == pytest.approx(returns[t], abs=1e-6)
        assert rows.discounts[row] == pytest.approx(discounts[t])
        np.testing.assert_array_equal(rows.next_obs[row, [0, 1, 2, 3, 6]], boot[t, [0, 1, 2, 3, 6]])
        np.testing.assert_array_equal(rows.obs[row, [0, 1, 2, 3, 6]], obs[t, [0, 1, 2, 3, 6]])
        np.testing.assert_array_equal(rows.actions[row], actions[t])


def test_shaping_adds_a_potential_difference_that_telescopes_over_the_episode():
    obs, _, rewards, next_obs, _ = _episode(np.random.default_rng(2))
    gamma, weight = 0.95, 0.5
    shaped = shaped_rewards(rewards, obs, next_obs, LAYOUT, weight, gamma)

    def phi(o: np.ndarray) -> float:
        return -weight * math.dist(o[2:4].tolist(), o[0:2].tolist())

    for t in range(len(rewards)):
        assert shaped[t] == pytest.approx(rewards[t] + gamma * phi(next_obs[t]) - phi(obs[t]), abs=1e-6)
    discounts = gamma ** np.arange(len(rewards))
    total = float(np.sum(discounts * (shaped - rewards)))
    assert total == pytest.approx(gamma ** len(rewards) * phi(next_obs[-1]) - phi(obs[0]), abs=1e-6)


def test_shaping_with_an_effector_height_measures_the_gap_in_3d():
    layout = GoalLayout(goal=(4, 6), achieved=(0, 2), effector=(2, 4), effector_height=(6, 0.5))
    obs = np.array([[0.0, 0.0, 0.3, 0.4, 9.0, 9.0, 0.5]], np.float32)  # tip above the puck's plane point by 0
    next_obs = np.array([[0.0, 0.0, 0.0, 0.0, 9.0, 9.0, 1.5]], np.float32)  # tip over the puck, 1 m too high
    shaped = shaped_rewards(np.zeros(1), obs, next_obs, layout, weight=1.0, gamma=1.0)
    assert shaped[0] == pytest.approx(-1.0 - (-0.5))  # phi(s') = -1 (height gap), phi(s) = -0.5 (plane gap)


def test_shaping_behind_the_object_pulls_the_effector_to_the_push_point():
    layout = GoalLayout(goal=(4, 6), achieved=(0, 2), effector=(2, 4), push_offset=0.1)
    # puck at the origin, goal at (1, 0): the push point is (-0.1, 0), behind the puck seen from the goal
    at_push_point = np.array([[0.0, 0.0, -0.1, 0.0, 1.0, 0.0, 0.0]], np.float32)
    in_front = np.array([[0.0, 0.0, 0.1, 0.0, 1.0, 0.0, 0.0]], np.float32)
    gain = shaped_rewards(np.zeros(1), in_front, at_push_point, layout, weight=1.0, gamma=1.0, target="behind")
    assert gain[0] == pytest.approx(0.2, abs=1e-6)  # phi(s') = 0, phi(s) = -0.2
    plain = shaped_rewards(np.zeros(1), in_front, at_push_point, layout, weight=1.0, gamma=1.0, target="object")
    assert plain[0] == pytest.approx(0.0, abs=1e-6)  # both 0.1 from the puck itself


def _trajectory(env_id: str, seed: int) -> Trajectory:
    env = make_env(env_id)
    space = env.unwrapped.randomization_space
    trajectory = rollout(env, lambda o: np.zeros(env.action_space.shape, np.float32), params=space.reference(),
                         params_normalized=np.zeros(space.ndim), kind="randomized", iteration=4, slot=2,
                         run_seed=seed, exploration_noise=0.5)
    env.close()
    return trajectory


def test_store_adds_the_relabelled_copies_deterministically_and_counts_agent_steps_only():
    env_id = "adr/Pusher3DOF-v0"
    layout = env_record(env_id).goal_layout
    trajectory = _trajectory(env_id, seed=0)
    config = AgentConfig(algorithm="sac", hidden_sizes=(16, 16), batch_size=8, learning_starts=0,
                         buffer_capacity=2000, her_future=3, shaping_weight=0.5, n_step=2)
    agents = [make_agent(config, 14, 3, seed=9, goal_layout=layout) for _ in range(2)]
    for agent in agents:
        assert agent.store(trajectory, limit=60) == 60
        assert agent.transitions_seen == 60 and len(agent.replay) == 4 * 60
        assert agent.updates_due() == 60
    np.testing.assert_array_equal(agents[0].replay.storage.numpy(), agents[1].replay.storage.numpy())
    stored_goals = agents[0].replay.storage[60:240, 12:14].numpy()
    assert not np.allclose(stored_goals, trajectory.obs[0, 12:14])  # relabelled, not the episode's goal
    # undo covers every row one store adds, also where they wrap around the ring and overwrite older rows
    agent = make_agent(AgentConfig(**{**config.__dict__, "buffer_capacity": 300}), 14, 3, seed=9,
                       goal_layout=layout)
    agent.store(trajectory, limit=60)
    point = agent.undo_point(trajectory.length)
    before = agent.replay.storage.clone()
    agent.store(trajectory)
    agent.undo(point)
    assert len(agent.replay) == 240 and agent.replay.position == 240 and agent.transitions_seen == 60
    np.testing.assert_array_equal(agent.replay.storage[:240].numpy(), before[:240].numpy())


def test_without_the_options_store_is_the_papers():
    env_id = "adr/Pusher3DOF-v0"
    trajectory = _trajectory(env_id, seed=1)
    config = AgentConfig(algorithm="td3", hidden_sizes=(16, 16), batch_size=8, learning_starts=0,
                         buffer_capacity=500)
    plain = make_agent(config, 14, 3, seed=1)
    with_layout = make_agent(config, 14, 3, seed=1, goal_layout=env_record(env_id).goal_layout)
    for agent in (plain, with_layout):
        agent.store(trajectory)
    np.testing.assert_array_equal(plain.replay.storage.numpy(), with_layout.replay.storage.numpy())


def test_the_options_need_an_env_with_a_goal_layout():
    with pytest.raises(ConfigError, match="goal layout"):
        tiny_config(agent={"her_future": 4})
    with pytest.raises(ConfigError, match="goal layout"):
        tiny_config(agent={"shaping_weight": 0.5})
    assert tiny_config(env_id="adr/ErgoPusher-v0", agent={"her_future": 4, "shaping_weight": 0.5}).goal_layout
    for bad in ({"her_future": -1}, {"her_future": 17}, {"shaping_weight": -0.1}, {"shaping_weight": math.inf}):
        with pytest.raises(ConfigError):
            tiny_config(env_id="adr/ErgoPusher-v0", agent=bad)
    with pytest.raises(ValueError, match="goal layout"):
        make_agent(AgentConfig(her_future=2), 8, 2, seed=0)


def test_a_goal_layout_is_checked():
    with pytest.raises(ValueError):
        GoalLayout(goal=(2, 4), achieved=(0, 3))
    with pytest.raises(ValueError):
        GoalLayout(goal=(4, 2), achieved=(0, 2))
    assert not GoalLayout(goal=(12, 14), achieved=(3, 5)).fits(13)
