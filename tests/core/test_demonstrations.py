"""Demonstrations (agent.demonstrations): the file's episodes become the rows the agent would have stored, every batch
mixes them in at demo_fraction, a run with them resumes bit for bit, and bad files or settings are refused in one
line without touching the run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tiny_configs import tiny_config

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.demonstrations import DemoEpisode, DemonstrationError, load_demonstrations, save_demonstrations
from adr_core.envs import env_record
from adr_core.rollout import Trajectory
from adr_core.training.trainer import Trainer

PUSHER = env_record("adr/ErgoPusher-v0").goal_layout


def _episodes(n=2, length=9, obs_dim=17, act_dim=4, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        obs = rng.normal(size=(length + 1, obs_dim)).astype(np.float32)
        out.append(DemoEpisode(obs=obs[:-1], actions=rng.uniform(-1, 1, (length, act_dim)).astype(np.float32),
                               next_obs=obs[1:], rewards=rng.normal(size=length).astype(np.float32),
                               terminated=np.zeros(length, bool)))
    return out


def _agent(path="", her=0, fraction=0.25, seed=0, algorithm="sac", **extra):
    config = AgentConfig(algorithm=algorithm, hidden_sizes=(32, 32), batch_size=16, learning_starts=0,
                         buffer_capacity=4000, her_future=her, history_steps=2, shaping_weight=0.5, n_step=3,
                         demonstrations=str(path), demo_fraction=fraction, **extra)
    return make_agent(config, 17, 4, seed=seed, goal_layout=PUSHER)


def _trajectory(episode, iteration=0, slot=0):
    n = len(episode.rewards)
    return Trajectory(obs=episode.obs, actions=episode.actions, next_obs=episode.next_obs, rewards=episode.rewards,
                      terminated=episode.terminated, params=np.zeros(2), params_normalized=np.zeros(2),
                      kind="randomized", iteration=iteration, slot=slot, policy_version=0,
                      episode_return=float(episode.rewards.sum()), length=n)


def test_demonstration_rows_are_what_storing_the_episodes_would_store(tmp_path):
    episodes = _episodes()
    path = save_demonstrations(tmp_path / "demos.npz", "adr/ErgoPusher-v0", episodes)
    with_demos = _agent(path)
    own = _agent()
    for index, episode in enumerate(episodes):
        own.store(_trajectory(episode, iteration=index))
    assert with_demos.demo_replay is not None and len(with_demos.demo_replay) == 18
    np.testing.assert_array_equal(with_demos.demo_replay.storage[:18].numpy(), own.replay.storage[:18].numpy())
    assert len(with_demos.replay) == 0 and with_demos.transitions_seen == 0  # demonstrations are not agent steps
    relabelled = _agent(path, her=2)
    assert len(relabelled.demo_replay) == 18 * 3  # each transition and its two relabelled copies


def test_every_batch_takes_its_share_from_the_demonstrations(tmp_path):
    path = save_demonstrations(tmp_path / "demos.npz", "adr/ErgoPusher-v0", _episodes(seed=1))
    agent = _agent(path, fraction=0.5)
    for index, episode in enumerate(_episodes(n=3, seed=2)):
        agent.store(_trajectory(episode, iteration=index))
    batch = agent._draw_batch()
    demo_rows = {tuple(r) for r in agent.demo_replay.observations().numpy().round(5)}
    own_rows = {tuple(r) for r in agent.replay.observations().numpy().round(5)}
    sampled = [tuple(r) for r in batch.obs.numpy().round(5)]
    assert len(sampled) == 16
    assert all(r in own_rows for r in sampled[:8]) and all(r in demo_rows for r in sampled[8:])
    losses = agent.update(4)
    assert math.isfinite(losses["critic_loss"]) and agent.updates_done == 4


@pytest.mark.parametrize("bc", [0.0, 1.0])
def test_a_run_with_demonstrations_resumes_bit_for_bit_and_needs_the_same_file(tmp_path, bc):
    path = save_demonstrations(tmp_path / "demos.npz", "adr/ErgoPusher-v0", _episodes(seed=3))
    first = _agent(path, demo_bc_weight=bc)
    for index, episode in enumerate(_episodes(n=2, seed=4)):
        first.store(_trajectory(episode, iteration=index))
    first.update(5)
    state = first.state_dict()
    first.update(5)
    resumed = _agent(path, demo_bc_weight=bc)
    resumed.load_state_dict(state)
    resumed.update(5)
    for a, b in zip(first.actor.parameters(), resumed.actor.parameters()):
        assert torch.equal(a, b)
    other = save_demonstrations(tmp_path / "other.npz", "adr/ErgoPusher-v0", _episodes(seed=5))
    for agent in (_agent(other), _agent()):
        with pytest.raises(ValueError, match="resume with the same file"):
            agent.load_state_dict(state)


@pytest.mark.parametrize("algorithm", ["sac", "crossq"])
def test_the_cloning_term_counts_only_demonstrations_the_critic_rates_above_the_actor(tmp_path, algorithm):
    path = save_demonstrations(tmp_path / "demos.npz", "adr/ErgoPusher-v0", _episodes(seed=6))
    agent = _agent(path, fraction=0.5, demo_bc_weight=2.0, algorithm=algorithm)
    for index, episode in enumerate(_episodes(n=2, seed=7)):
        agent.store(_trajectory(episode, iteration=index))
    batch = agent._draw_batch()
    agent.critic = lambda obs, actions: torch.stack([actions[:, :1], actions[:, :1] + 1.0])  # min: the 1st action
    q_pi = torch.zeros(16, 1)
    demo_obs, demo_actions = batch.obs[8:], batch.actions[8:]
    keep = (demo_actions[:, :1] > 0).float()
    assert 0 < keep.sum() < 8  # the filter keeps some rows and drops others
    with torch.no_grad():
        mean = torch.tanh(agent.actor.mean_log_std(demo_obs)[0])
        expected = 2.0 * (keep * (mean - demo_actions).pow(2).sum(-1, keepdim=True)).mean()
        assert torch.allclose(agent._demo_bc_loss(batch, q_pi), expected)
    agent._demo_rows = 0
    assert agent._demo_bc_loss(batch, q_pi) == 0.0


def test_a_trainer_run_reads_its_demonstrations_from_the_config(tmp_path):
    rng = np.random.default_rng(0)
    episode = DemoEpisode(obs=rng.normal(size=(20, 8)).astype(np.float32),
                          actions=rng.uniform(-1, 1, (20, 2)).astype(np.float32),
                          next_obs=rng.normal(size=(20, 8)).astype(np.float32),
                          rewards=rng.normal(size=20).astype(np.float32), terminated=np.eye(20, dtype=bool)[-1])
    path = save_demonstrations(tmp_path / "lander.npz", "adr/LunarLander-v0", [episode])
    trainer = Trainer(tiny_config(agent={"demonstrations": str(path), "demo_fraction": 0.5}), None)
    rows = trainer.run(max_iterations=2)
    assert len(trainer.agent.demo_replay) == 20 and rows[-1]["n_updates"] > 0


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("lengths"), "missing arrays"),
    (lambda d: d.update(obs=d["obs"][:, :5]), "'obs' has shape"),
    (lambda d: d["rewards"].__setitem__(3, np.nan), "NaN"),
    (lambda d: d["actions"].__setitem__(0, 2.0), r"outside \[-1, 1\]"),
    (lambda d: d.update(lengths=np.array([0, 18])), "one length >= 1"),
])
def test_bad_demonstration_files_are_refused_in_one_line(tmp_path, change, message):
    good = save_demonstrations(tmp_path / "good.npz", "adr/ErgoPusher-v0", _episodes())
    with np.load(good) as data:
        arrays = {k: data[k].copy() for k in data.files}
    change(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(DemonstrationError, match=message) as error:
        load_demonstrations(tmp_path / "bad.npz", 17, 4)
    assert "\n" not in str(error.value) and "bad.npz" in str(error.value)


def test_missing_files_and_bad_fractions_are_refused(tmp_path):
    with pytest.raises(DemonstrationError, match="no such file"):
        _agent(tmp_path / "absent.npz")
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(DemonstrationError, match="not a readable"):
        _agent(tmp_path / "text.npz")
    for fraction in (-0.1, 1.0):
        with pytest.raises(ValueError, match="demo_fraction"):
            AgentConfig(demo_fraction=fraction)
    for bad, message in [({"demo_bc_weight": -1.0}, ">= 0"), ({"demo_bc_weight": 1.0}, "needs agent.demonstrations"),
                         ({"demo_bc_weight": 1.0, "demonstrations": "d.npz", "algorithm": "td3"}, "SAC and CrossQ"),
                         ({"demo_bc_weight": 1.0, "demonstrations": "d.npz", "algorithm": "sac",
                           "demo_fraction": 0.0}, "demo_fraction > 0")]:
        with pytest.raises(ValueError, match=message):
            AgentConfig(**bad)
