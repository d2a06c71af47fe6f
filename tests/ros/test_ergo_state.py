"""The simulator instance's rviz publisher wraps the policy a rollout plays: a policy with memory must still be told
where each episode starts and what it did, or it fails on its first step (the graph's ErgoReacher with history)."""
from __future__ import annotations

import numpy as np
import pytest
import rclpy

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.networks import ActorPolicy
from adr_core.envs import env_record, make_env
from adr_core.rollout import rollout
from adr_sim_node.ergo_state import ErgoStatePublisher


@pytest.fixture()
def node():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("ergo_state_test", context=context)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.mark.parametrize("noise", [0.0, 1.0])
def test_a_policy_with_memory_plays_through_the_publisher_as_without_it(node, noise):
    config = AgentConfig(algorithm="sac", hidden_sizes=(16, 16), batch_size=8, learning_starts=10,
                         buffer_capacity=1000, history_steps=2)
    record = env_record("adr/ErgoReacher-v0")
    env = make_env("adr/ErgoReacher-v0", max_episode_steps=6)
    agent = make_agent(config, env.observation_space.shape[0], env.action_space.shape[0], seed=0,
                       goal_layout=record.goal_layout)
    space = env.unwrapped.randomization_space
    publisher = ErgoStatePublisher(node, rate_hz=1000.0, goal_frame_id="world")

    def play(policy):
        return rollout(env, policy, params=space.reference(), params_normalized=space.to_normalized(space.reference()),
                       kind="randomized", iteration=0, slot=0, run_seed=3, exploration_noise=noise)

    plain = play(ActorPolicy.from_state_dict(agent.actor_state_dict()))
    for _ in range(2):  # two episodes: each one starts its history again
        observed = play(publisher.observing(env, ActorPolicy.from_state_dict(agent.actor_state_dict())))
        np.testing.assert_array_equal(observed.actions, plain.actions)
    assert publisher.published > 0
    env.close()
