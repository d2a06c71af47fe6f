"""CrossQ: the batch renormalization layer against its formulas, the joint forward pass (the statistics cover the
next-state half), critics in eval mode for the actor, the policy delay, settings refused in one line, bit-identical
resume of a run (running statistics and step counters included) and an exported actor equal to its checkpoint's."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from test_agents import ACT, OBS, random_trajectory, small_config
from test_evaluation_support import tiny_config as tiny_run_config
from tiny_configs import tiny_config

from adr_core.agents import AgentConfig, make_agent
from adr_core.agents.batch_renorm import RENORM_EPS, EnsembleBatchRenorm
from adr_core.base.checkpoint import load_checkpoint
from adr_core.envs import env_record
from adr_core.evaluation.policies import load_policy
from adr_core.export import agreement, check_inputs, main, run_exported
from adr_core.training.config import ConfigError, TrainConfig
from adr_core.training.trainer import Trainer

EPS = RENORM_EPS


def crossq_config(**overrides) -> AgentConfig:
    return small_config(algorithm="crossq", **overrides)


def test_batch_renorm_is_batch_norm_during_the_warmup_and_renormalizes_after_it():
    torch.manual_seed(0)
    layer = EnsembleBatchRenorm(members=2, features=3, momentum=0.1, warmup_steps=0)
    with torch.no_grad():
        layer.scale.copy_(torch.tensor([[[1.0, 2.0, 0.5]], [[1.5, 1.0, 1.0]]]))
        layer.bias.copy_(torch.tensor([[[0.0, 1.0, -1.0]], [[0.5, 0.0, 0.0]]]))
    layer.train()
    x = torch.randn(2, 64, 3) * torch.tensor([1.0, 5.0, 0.1]) + torch.tensor([0.0, 3.0, -2.0])
    mean, var = x.mean(1, keepdim=True), x.var(1, keepdim=True)  # unbiased, as sb3-contrib
    expected = layer.scale * (x - mean) / (var + EPS).sqrt() + layer.bias
    torch.testing.assert_close(layer(x), expected)  # pass 1, 0 passes before: plain batch normalization
    torch.testing.assert_close(layer.running_mean, 0.1 * mean)
    torch.testing.assert_close(layer.running_var, 0.9 + 0.1 * var)
    running_mean, running_var = layer.running_mean.clone(), layer.running_var.clone()
    y = torch.randn(2, 64, 3) * 4.0 + torch.tensor([10.0, 2.0, 2.0])
    mean, var = y.mean(1, keepdim=True), y.var(1, keepdim=True)
    running_std = (running_var + EPS).sqrt()
    r = ((var + EPS).sqrt() / running_std).clamp(1 / 3, 3)
    d = ((mean - running_mean) / running_std).clamp(-5, 5)
    assert r.max() == 3.0 and d.abs().max() == 5.0  # the limits bind for this batch
    expected = layer.scale * ((y - mean) / (var + EPS).sqrt() * r + d) + layer.bias
    torch.testing.assert_close(layer(y), expected)  # pass 2, 1 > 0 before: renormalized toward the running stats
    assert int(layer.steps) == 2
    layer.eval()
    before = [t.clone() for t in (layer.running_mean, layer.running_var, layer.steps)]
    expected = layer.scale * (y - layer.running_mean) / (layer.running_var + EPS).sqrt() + layer.bias
    torch.testing.assert_close(layer(y), expected)  # eval: the running statistics, nothing updated
    for old, new in zip(before, (layer.running_mean, layer.running_var, layer.steps)):
        assert torch.equal(old, new)


def test_the_joint_forward_pass_takes_its_statistics_over_the_current_and_the_next_state_half():
    agent = make_agent(crossq_config(crossq_policy_delay=5, gamma=0.9), OBS, ACT, seed=1)
    trajectory = random_trajectory(np.random.default_rng(1), 64)
    trajectory.next_obs += 5.0  # next states far from the current ones: a statistic of one half shows
    agent.store(trajectory)
    critic = copy.deepcopy(agent.critic)  # the weights before the update
    alpha = agent.alpha
    state = agent.generator.get_state()
    batch = agent.replay.sample(16)  # the update draws this batch, then these next actions
    next_actions, next_log_prob = agent._sample(batch.next_obs)
    agent.generator.set_state(state)
    stats = agent.update(1)  # step 1 of 5: the critics only

    x = torch.cat([torch.cat([batch.obs, batch.next_obs]), torch.cat([batch.actions, next_actions])], dim=-1)
    first, second = agent.critic.norms[0], agent.critic.norms[1]
    for member in range(2):  # the input layer's statistics: the 32 rows of both halves
        torch.testing.assert_close(first.running_mean[member, 0], 0.01 * x.mean(0))
        torch.testing.assert_close(first.running_var[member, 0], 0.99 + 0.01 * x.var(0))
    current_half = torch.cat([batch.obs, batch.actions], dim=-1)
    assert not torch.allclose(first.running_mean[0, 0], 0.01 * current_half.mean(0))
    normalized = (x - x.mean(0)) / (x.var(0) + EPS).sqrt()  # scale 1, bias 0 before the first step
    for member in range(2):  # the first hidden layer's statistics, from the weights before the update
        hidden = torch.relu(normalized @ critic.weights[0][member] + critic.biases[0][member])
        torch.testing.assert_close(second.running_mean[member, 0], 0.01 * hidden.mean(0))
    # the loss: Q(s, a) from the first half, the detached target from the second
    critic.train()
    with torch.no_grad():
        q, next_q = critic(x[:, :OBS], x[:, OBS:]).split(16, dim=1)
    target = batch.rewards + batch.discount * (next_q.min(0).values - alpha * next_log_prob)
    expected = sum(torch.mean((q[m] - target) ** 2) for m in range(2)).item()
    assert stats["critic_loss"] == pytest.approx(expected, rel=1e-5)
    assert math.isnan(stats["actor_loss"]) and not agent.critic.training


def test_the_actor_is_delayed_and_sees_the_critics_in_eval_mode():
    agent = make_agent(crossq_config(crossq_policy_delay=3), OBS, ACT, seed=2)
    agent.store(random_trajectory(np.random.default_rng(2), 64))
    actor, alpha = [p.detach().clone() for p in agent.actor.parameters()], agent.alpha
    for step in (1, 2):  # critic steps only: actor and temperature wait
        stats = agent.update(1)
        assert math.isnan(stats["actor_loss"]) and math.isnan(stats["policy_entropy"]), step
    assert all(torch.equal(a, b) for a, b in zip(actor, agent.actor.parameters())) and agent.alpha == alpha
    stats = agent.update(1)  # step 3: actor and temperature move
    assert not math.isnan(stats["actor_loss"]) and agent.alpha != alpha
    assert any(not torch.equal(a, b) for a, b in zip(actor, agent.actor.parameters()))
    agent.update(6)
    # one training-mode pass per gradient step: the actor's passes (3 of the 9 steps) left the statistics alone
    assert [int(norm.steps) for norm in agent.critic.norms] == [9, 9, 9]
    assert not hasattr(agent, "critic_target") and "critic_target" not in agent.state_dict()["critic"]
    betas = [o.optimizer.param_groups[0]["betas"] for o in (agent.actor_optimizer, agent.critic_optimizer,
                                                            agent.alpha_optimizer)]
    assert betas == [(0.5, 0.999), (0.5, 0.999), (0.9, 0.999)]


@pytest.mark.parametrize("overrides,message", [
    ({"crossq_policy_delay": 0}, "agent.crossq_policy_delay must be > 0, got 0"),
    ({"crossq_batch_renorm_momentum": 0.0}, r"agent.crossq_batch_renorm_momentum must be in \(0, 1\], got 0.0"),
    ({"crossq_batch_renorm_momentum": float("nan")}, "agent.crossq_batch_renorm_momentum must be in"),
    ({"crossq_batch_renorm_warmup_steps": -1}, "agent.crossq_batch_renorm_warmup_steps must be >= 0, got -1"),
    ({"crossq_adam_beta1": 1.0}, r"agent.crossq_adam_beta1 must be in \[0, 1\), got 1.0"),
    ({"crossq_critic_hidden_sizes": (64, 0)}, "agent.crossq_critic_hidden_sizes must be positive sizes"),
])
def test_bad_crossq_settings_are_refused_in_one_line(overrides, message):
    with pytest.raises(ValueError, match=message) as error:
        AgentConfig(algorithm="crossq", **overrides)
    assert "\n" not in str(error.value)
    key, value = next(iter(overrides.items()))
    with pytest.raises(ConfigError, match=message) as error:  # from a run's config as well
        tiny_config(agent={"algorithm": "crossq", key: list(value) if isinstance(value, tuple) else value})
    assert "\n" not in str(error.value)


def test_the_critic_width_is_its_own_option():
    agent = make_agent(crossq_config(crossq_critic_hidden_sizes=(48, 40)), OBS, ACT, seed=0)
    assert [tuple(w.shape) for w in agent.critic.weights] == [(2, OBS + ACT, 48), (2, 48, 40), (2, 40, 1)]
    assert agent.actor.hidden_sizes == (32, 32)
    default = make_agent(crossq_config(), OBS, ACT, seed=0)
    assert [tuple(w.shape) for w in default.critic.weights] == [(2, OBS + ACT, 32), (2, 32, 32), (2, 32, 1)]


def test_goal_relabelling_and_memory_reach_crossqs_critics_as_sacs():
    """The agent base handles both for every agent: the replay rows and the critics' input size."""
    layout = env_record("adr/Pusher3DOF-v0").goal_layout
    agents = [make_agent(small_config(algorithm=algorithm, her_future=2, history_steps=1), 14, 3, seed=0,
                         goal_layout=layout) for algorithm in ("sac", "crossq")]
    trajectory = random_trajectory(np.random.default_rng(4), 40, 14, 3)
    for agent in agents:
        agent.store(trajectory)
        assert len(agent.replay) == 3 * 40 and agent.critic.weights[0].shape[1] == agent.input_dim + 3 > 14 + 3
        assert np.isfinite(agent.update(4)["critic_loss"])
    np.testing.assert_array_equal(agents[0].replay.storage.numpy(), agents[1].replay.storage.numpy())


def test_a_crossq_run_with_memory_resumes_bit_for_bit_across_the_renormalization_warmup(tmp_path):
    """Running statistics, step counters, Adam moments and the delay's phase all come back from the checkpoint."""
    config = tiny_config(total_agent_steps=100_000, agent={"algorithm": "crossq", "history_steps": 2,
                                                           "crossq_batch_renorm_warmup_steps": 400})

    def comparable(rows):
        return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()
                 if not k.startswith("time_") and k != "wall_time_s"} for r in rows]

    uninterrupted = Trainer(config, None).run(max_iterations=4)
    Trainer(config, tmp_path).run(max_iterations=2)
    critic = load_checkpoint(tmp_path / "checkpoints" / "latest.pt")["agent"]["critic"]["critic"]  # weights_only
    saved_steps = int(critic["norms.0.steps"])
    assert 0 < saved_steps <= 400 and critic["norms.1.running_var"].shape == (2, 1, 64)
    resumed = Trainer(config, tmp_path, resume=True)
    assert int(resumed.agent.critic.norms[0].steps) == saved_steps
    assert comparable(resumed.run(max_iterations=2)) == comparable(uninterrupted[2:])
    assert int(resumed.agent.critic.norms[2].steps) == resumed.agent.updates_done > 400  # renormalizing by the end


def test_an_exported_crossq_actor_acts_as_its_checkpoint(tmp_path):
    config = tiny_run_config("adr/LunarLander-v0", "udr", 0, 20).to_dict()
    config["agent"]["algorithm"] = "crossq"
    run = tmp_path / "run"
    Trainer(TrainConfig.from_dict(config), run).run()  # its torch_threads: conftest restores the count after the test
    trained = load_policy(run)
    assert trained.policy().gaussian  # SAC's actor: the critic and its normalization stay behind
    assert main([str(run), "--format", "onnx", "--out", str(tmp_path / "export")]) == 0
    inputs = check_inputs(trained, episodes=2, seed=5)
    exported = run_exported(tmp_path / "export" / "policy.onnx", "onnx", inputs)
    actor = trained.policy().actor
    error, allowed = agreement(actor, exported, inputs)
    assert error <= allowed < 1e-5
    with torch.no_grad():
        np.testing.assert_allclose(exported, actor(torch.from_numpy(inputs)).numpy(), atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_crossq_runs_on_cuda_as_on_the_cpu():
    rng = np.random.default_rng(3)
    trajectory = random_trajectory(rng, 200)
    agents = [make_agent(crossq_config(crossq_batch_renorm_warmup_steps=5), OBS, ACT, seed=0, device=device)
              for device in ("cpu", "cuda")]
    results = []
    for agent in agents:
        agent.store(trajectory)
        results.append(agent.update(12))
    assert results[0]["critic_loss"] == pytest.approx(results[1]["critic_loss"], rel=1e-3)
    for name in ("running_mean", "running_var", "steps"):
        torch.testing.assert_close(getattr(agents[1].critic.norms[1], name).cpu(),
                                   getattr(agents[0].critic.norms[1], name), rtol=1e-3, atol=1e-4)
    moved = make_agent(crossq_config(crossq_batch_renorm_warmup_steps=5), OBS, ACT, seed=1)
    moved.load_state_dict(agents[1].state_dict())  # a CUDA checkpoint resumes on the CPU
    obs = rng.normal(size=(4, OBS)).astype(np.float32)
    np.testing.assert_allclose(moved.act(obs), agents[1].act(obs), rtol=1e-5, atol=1e-6)
