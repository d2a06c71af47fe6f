"""Policies with memory (agent.history_steps): the inputs a policy sees while playing equal the replay's rows, the
weights carry the history, a run with it resumes bit for bit, and bad histories are refused."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tiny_configs import tiny_config

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.networks import ActorPolicy, ActorStateError, actor_from_state_dict
from adr_core.base.history import History, HistoryError, HistorySpec, stack_episode
from adr_core.envs import env_record, make_env
from adr_core.rollout import rollout
from adr_core.training.trainer import Trainer


def test_a_whole_episode_stacks_as_the_steps_did():
    spec = HistorySpec.for_env(3, obs_dim=7, act_dim=2, goal=(5, 7))
    assert spec.index == (0, 1, 2, 3, 4) and spec.input_dim == 7 + 3 * (5 + 2)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(9, 7)).astype(np.float32)
    next_obs = np.vstack([obs[1:], rng.normal(size=(1, 7))]).astype(np.float32)
    actions = rng.uniform(-1, 1, (9, 2)).astype(np.float32)
    inputs, next_inputs = stack_episode(spec, obs, actions, next_obs)
    history = History(spec)
    history.reset(obs[0])
    for t in range(9):
        np.testing.assert_array_equal(inputs[t], history.input(obs[t]))
        history.push(obs[t], actions[t])
        np.testing.assert_array_equal(next_inputs[t], history.input(next_obs[t]))
    # the first input: the observation, then k copies of (its non-goal part, zero action)
    np.testing.assert_array_equal(inputs[0][7:14], np.concatenate([obs[0, :5], [0.0, 0.0]]))
    assert HistorySpec.from_vector(spec.to_vector()) == spec == HistorySpec.from_json(spec.to_json())


@pytest.mark.parametrize("bad", [[0, 7, 2, 1], [2, 7, 2, 9], [2, 7, 2, 1, 1], [2.5, 7, 2, 1], [2, 7]])
def test_bad_history_vectors_are_refused(bad):
    with pytest.raises(HistoryError):
        HistorySpec.from_vector(bad)


def test_history_needs_an_episode_start_and_matching_sizes():
    history = History(HistorySpec.for_env(2, 4, 1))
    with pytest.raises(HistoryError, match="before reset"):
        history.input(np.zeros(4))
    history.reset(np.zeros(4))
    with pytest.raises(HistoryError, match="observation of 5"):
        history.input(np.zeros(5))


def _pusher_agent(steps=2, seed=0):
    config = AgentConfig(algorithm="sac", hidden_sizes=(32, 32), batch_size=16, learning_starts=10,
                         buffer_capacity=4000, her_future=2, history_steps=steps)
    return make_agent(config, 17, 4, seed=seed, goal_layout=env_record("adr/ErgoPusher-v0").goal_layout)


def test_the_replay_holds_the_inputs_the_policy_acted_on():
    """An ErgoPusher episode played by a policy with memory: every input it acted on is the replay's row of that
    step (the goal is not part of the past, so relabelled copies rewrite it in one place)."""
    agent = _pusher_agent()
    policy = ActorPolicy.from_state_dict(agent.actor_state_dict())
    seen: list[np.ndarray] = []
    original = policy._features

    def spy(obs):
        features = original(obs)
        seen.append(policy._history.input(obs) if np.asarray(obs).shape == (17,) else obs)
        return features

    policy._features = spy
    env = make_env("adr/ErgoPusher-v0", max_episode_steps=12)
    space = env.unwrapped.randomization_space
    trajectory = rollout(env, policy, params=space.reference(), params_normalized=space.to_normalized(
        space.reference()), kind="randomized", iteration=0, slot=0, run_seed=1, exploration_noise=1.0)
    assert trajectory.length == 12 and len(seen) == 12
    agent.store(trajectory)
    rows = agent.replay.observations()[:12].numpy()
    np.testing.assert_array_equal(rows, np.array(seen))
    assert agent.replay.observations().shape == (36, 17 + 2 * (15 + 4))  # + 2 relabelled copies
    goal = slice(15, 17)  # the copies differ from the played rows only in the goal
    copies = agent.replay.observations()[12:24].numpy()
    np.testing.assert_array_equal(np.delete(copies, goal, axis=1), np.delete(rows, goal, axis=1))


def test_weights_carry_the_history_and_a_batch_of_inputs_reads_as_is():
    agent = _pusher_agent(steps=3)
    weights = agent.actor_state_dict()
    actor = actor_from_state_dict(weights)
    assert actor.history == agent.history and (actor.obs_dim, actor.input_dim) == (17, 17 + 3 * 19)
    policy = ActorPolicy(actor)
    inputs = np.random.default_rng(1).normal(size=(5, actor.input_dim)).astype(np.float32)
    with torch.no_grad():
        expected = actor(torch.from_numpy(inputs)).numpy()
    np.testing.assert_allclose(policy(inputs), expected, atol=1e-6)
    with pytest.raises(HistoryError, match="one observation at a time"):
        policy(np.zeros((2, 17), np.float32))
    broken = dict(weights, history_spec=torch.tensor([3.0, 17, 4, 0]))
    with pytest.raises(ActorStateError, match="history"):
        actor_from_state_dict(broken)


def test_a_run_with_memory_resumes_bit_for_bit(tmp_path):
    config = tiny_config(total_agent_steps=100_000, agent={"history_steps": 2})

    def comparable(rows):
        return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()
                 if not k.startswith("time_") and k != "wall_time_s"} for r in rows]

    uninterrupted = Trainer(config, None).run(max_iterations=4)
    Trainer(config, tmp_path).run(max_iterations=2)
    resumed = Trainer(config, tmp_path, resume=True)
    assert resumed.agent.history is not None and resumed.agent.replay.observations().shape[1] == 8 + 2 * 10
    assert comparable(resumed.run(max_iterations=2)) == comparable(uninterrupted[2:])
    assert uninterrupted[3]["n_updates"] > 0


def test_history_steps_is_checked():
    with pytest.raises(ValueError, match="history_steps"):
        AgentConfig(history_steps=17)
