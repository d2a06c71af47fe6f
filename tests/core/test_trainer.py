"""In-process ADR trainer on LunarLander: a short run, resume reproducibility, scoring-before-training order."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest
import torch
from tiny_configs import tiny_config

from adr_core.discriminator import DiscriminatorRewarder
from adr_core.training.config import TrainConfig
from adr_core.training.run_hooks import METRIC_COLUMNS
from adr_core.training.trainer import Trainer


def comparable(rows: list[dict]) -> list[dict]:
    """Rows without timings, NaN as None (NaN != NaN)."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()
             if not k.startswith("time_") and k != "wall_time_s"} for r in rows]


def test_defaults_are_the_papers():
    c = TrainConfig()
    assert (c.agent.algorithm, c.agent.hidden_sizes, c.agent.actor_lr, c.agent.critic_lr, c.agent.tau, c.agent.gamma,
            c.agent.batch_size, c.agent.learning_starts, c.agent.updates_per_step) == (
        "ddpg", (400, 300), 1e-3, 1e-3, 0.005, 0.99, 1000, 1000, 1.0)
    assert (c.num_particles, c.svpg.hidden_size, c.svpg.learning_rate, c.svpg.gamma, c.svpg.temperature,
            c.svpg.max_step_length, c.svpg.horizon) == (10, 100, 3e-4, 0.99, 10.0, 0.05, 50)
    assert (c.discriminator.hidden_size, c.discriminator.learning_rate, c.discriminator.batch_size,
            c.discriminator.reward) == (128, 2e-4, 128, "mean_log_d")
    assert (c.total_agent_steps, c.device, c.sampler) == (1_000_000, "cpu", "adr")


def test_short_adr_run_writes_logs_and_a_checkpoint(tmp_path):
    config = tiny_config(tensorboard=True)
    rows = Trainer(config, tmp_path).run()
    # the last iteration stores only what the budget has left: the run ends at 1200 stored steps exactly
    assert rows[-1]["agent_steps"] == 1200 > rows[-2]["agent_steps"]
    assert rows[-1]["agent_updates"] == rows[-1]["agent_steps"] - 200
    assert all(math.isfinite(r[k]) for r in rows for k in ("sampler_reward_mean", "discriminator_loss", "return_mean"))
    assert TrainConfig.from_yaml(tmp_path / "config.yaml") == config
    with (tmp_path / "metrics.csv").open() as handle:
        metrics = list(csv.DictReader(handle))
    assert list(metrics[0]) == list(METRIC_COLUMNS) and len(metrics) == len(rows)
    with (tmp_path / "sampled_parameters.csv").open() as handle:
        samples = list(csv.DictReader(handle))
    assert len(samples) == 3 * len(rows)
    engine = np.array([float(s["main_engine_power"]) for s in samples])
    assert engine.min() >= 8.0 and engine.max() <= 20.0
    assert (tmp_path / "checkpoints" / "latest.pt").is_file()
    assert any((tmp_path / "tb").iterdir())


def test_resume_reproduces_the_uninterrupted_run(tmp_path):
    config = tiny_config(total_agent_steps=100_000)
    uninterrupted = Trainer(config, None).run(max_iterations=5)
    assert len(uninterrupted) == 5
    first = Trainer(config, tmp_path)
    assert len(first.run(max_iterations=3)) == 3  # ends with a checkpoint at iteration 3
    resumed = Trainer(config, tmp_path, resume=True)
    assert resumed.iteration == 3
    proposals = []
    original = resumed.sampler.propose
    resumed.sampler.propose = lambda: proposals.append(original()) or proposals[-1]
    rest = resumed.run(max_iterations=2)
    assert comparable(rest) == comparable(uninterrupted[3:])
    with (tmp_path / "sampled_parameters.csv").open() as handle:
        logged = [row for row in csv.DictReader(handle) if int(row["iteration"]) >= 3]
    np.testing.assert_array_equal([float(r["u_main_engine_power"]) for r in logged], np.concatenate(proposals)[:, 0])
    assert uninterrupted[3]["n_updates"] > 0 and not math.isnan(uninterrupted[4]["svpg_value_loss"])


def test_resuming_a_run_from_an_older_version_keeps_its_rows_and_adds_the_new_columns(tmp_path):
    config = tiny_config(total_agent_steps=100_000)
    Trainer(config, tmp_path).run(max_iterations=3)
    path = tmp_path / "metrics.csv"
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    older = [c for c in METRIC_COLUMNS if c not in ("entropy_alpha", "policy_entropy")]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, older, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    Trainer(config, tmp_path, resume=True).run(max_iterations=1)
    with path.open() as handle:
        upgraded = list(csv.DictReader(handle))
    assert list(upgraded[0]) == list(METRIC_COLUMNS) and len(upgraded) == 4
    assert [{c: r[c] for c in older} for r in upgraded[:3]] == [{c: r[c] for c in older} for r in rows]
    assert all(r["entropy_alpha"] == "" for r in upgraded[:3])

    with path.open("w", newline="") as handle:
        csv.writer(handle).writerow([*METRIC_COLUMNS, "from_the_future"])
    with pytest.raises(ValueError, match="from_the_future"):
        Trainer(config, tmp_path, resume=True).run(max_iterations=1)


def test_rewards_are_scored_before_the_discriminator_trains_on_them(monkeypatch):
    trainer = Trainer(tiny_config(), None)
    trainer.run_iteration()
    calls: list[str] = []
    before = DiscriminatorRewarder(trainer.obs_dim, trainer.act_dim, trainer.config.discriminator, seed=0)
    before.load_state_dict(trainer.discriminator.state_dict())  # the discriminator as the iteration starts
    for name in ("score", "train"):
        method = getattr(trainer.discriminator, name)
        monkeypatch.setattr(trainer.discriminator, name,
                            lambda *a, _m=method, _n=name, **k: calls.append(_n) or _m(*a, **k))
    result = trainer.run_iteration()
    assert calls == ["score", "train"]
    np.testing.assert_array_equal(result.rewards, before.score(result.randomized))
    assert not np.array_equal(before.score(result.randomized), trainer.discriminator.score(result.randomized))


def test_rollouts_use_the_previous_iterations_policy_and_seeded_randomness():
    trainer = Trainer(tiny_config(), None)
    first = trainer.run_iteration()
    second = trainer.run_iteration()
    assert first.policy_version == 0 and second.policy_version == first.n_updates
    for result in (first, second):
        assert [t.slot for t in result.randomized] == [0, 1, 2] == [t.slot for t in result.reference]
        assert all(t.iteration == result.iteration for t in result.randomized + result.reference)
        assert all(t.kind == "reference" and t.params[0] == 13.0 for t in result.reference)
    # the same (seed, iteration, slot, kind) and weights give the same episode, whoever runs it
    again = Trainer(tiny_config(), None).run_iteration()
    np.testing.assert_array_equal(again.randomized[2].obs, first.randomized[2].obs)


@pytest.mark.parametrize("sampler", ["udr", "baseline", "fixed"])
def test_non_learning_samplers_train_the_agent_without_reference_rollouts(sampler):
    trainer = Trainer(tiny_config(sampler=sampler), None)
    result = trainer.run_iteration()
    assert result.reference == [] and result.rewards is None and len(result.randomized) == 3
    engine = result.parameters[:, 0]
    low, high = {"udr": (8.0, 20.0), "baseline": (13.0, 13.0), "fixed": (8.0, 11.0)}[sampler]
    assert engine.min() >= low and engine.max() <= high


@pytest.mark.parametrize("env_id", ["adr/Pusher3DOF-v0", "adr/ErgoReacher-v0", "adr/ErgoPusher-v0"])
def test_one_adr_iteration_on_the_other_environments(env_id):
    config = tiny_config(env_id=env_id, svpg={"num_particles": 2}, agent={"learning_starts": 100})
    assert TrainConfig.from_dict({"env_id": env_id}).num_particles == 15  # the paper's N outside LunarLander
    trainer = Trainer(config, None)
    result = trainer.run_iteration()
    assert [t.length for t in result.randomized + result.reference] == [100] * 4  # the paper's 100-step episodes
    assert all(math.isfinite(t.final_distance) for t in result.randomized + result.reference)
    assert np.isfinite(result.rewards).all() and result.n_updates == 100
    assert result.parameters.shape == (2, trainer.space.ndim)


def test_a_trajectory_cut_at_the_budget_keeps_exact_n_step_targets():
    from adr_core.agents.replay_buffer import nstep_transitions

    trainer = Trainer(tiny_config(agent={"n_step": 3}), None)
    trajectory = trainer.run_iteration().randomized[0]
    agent = Trainer(tiny_config(agent={"n_step": 3}), None).agent
    assert agent.store(trajectory, limit=5) == 5 and agent.transitions_seen == 5
    assert agent.store(trajectory, limit=0) == 0 and agent.replay.size == 5
    returns, _, _ = nstep_transitions(trajectory.rewards, trajectory.next_obs, trajectory.terminated, 0.99, 3)
    stored = agent.replay.storage[:5, agent.obs_dim + agent.act_dim].numpy()  # obs, action, then the return
    np.testing.assert_allclose(stored, returns[:5].astype(np.float32))


def test_learn_from_reference_stores_the_reference_rollouts_and_counts_them():
    plain = Trainer(tiny_config(), None).run_iteration()
    trainer = Trainer(tiny_config(learn_from_reference=True), None)
    result = trainer.run_iteration()
    randomized = sum(t.length for t in result.randomized)
    reference = sum(t.length for t in result.reference)
    replay = trainer.agent.replay
    assert reference > 0 and trainer.agent_steps == randomized + reference == replay.size == replay.position
    np.testing.assert_array_equal(result.randomized[0].obs, plain.randomized[0].obs)  # same rollouts, more stored
    # the reference transitions follow the randomized ones in the buffer, in slot order
    first_ref = result.reference[0]
    stored = replay.storage[randomized:randomized + first_ref.length, :trainer.obs_dim].numpy()
    np.testing.assert_array_equal(stored, first_ref.obs.astype(np.float32))
    # samplers without reference rollouts: no effect
    udr = Trainer(tiny_config(sampler="udr", learn_from_reference=True), None)
    udr_result = udr.run_iteration()
    assert udr.agent_steps == sum(t.length for t in udr_result.randomized)


def test_concurrent_learning_gives_the_sequential_runs_results_bit_for_bit():
    """The discriminator trains in a second thread while the agent updates: both draw from their own generators, so
    the metrics, the agent and the discriminator are those of the sequential order."""
    sequential = Trainer(tiny_config(total_agent_steps=2400), None)
    concurrent = Trainer(tiny_config(total_agent_steps=2400, concurrent_learning=True), None)
    assert concurrent._learner_pool is not None and sequential._learner_pool is None
    timing = ("time_", "wall_time_s")
    rows = [[{k: v for k, v in row.items() if not k.startswith(timing)} for row in trainer.run()]
            for trainer in (sequential, concurrent)]
    assert len(rows[0]) >= 3 and rows[0][-1]["n_updates"] > 0
    np.testing.assert_equal(rows[1], rows[0])
    for name in ("agent", "discriminator"):
        a, b = (getattr(t, name).state_dict() for t in (sequential, concurrent))
        for key in ("actor", "critic", "network"):
            if key in a:
                for tensor_a, tensor_b in zip(_tensors(a[key]), _tensors(b[key])):
                    assert torch.equal(tensor_a, tensor_b), (name, key)


def _tensors(tree) -> list:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        return [t for key in sorted(tree) for t in _tensors(tree[key])]
    return []
