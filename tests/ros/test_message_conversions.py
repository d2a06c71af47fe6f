"""numpy/torch <-> custom messages: exact round trips and clear rejections of malformed messages."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from adr_core.rollout import Trajectory
from adr_interfaces.msg import ParameterSet
from adr_ros import parameter_sets, policy_weights, trajectories
from adr_ros.arrays import to_field


def make_trajectory(length: int = 7, obs_dim: int = 8, act_dim: int = 2, seed: int = 0) -> Trajectory:
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=length).astype(np.float32)
    return Trajectory(
        obs=rng.normal(size=(length, obs_dim)).astype(np.float32),
        actions=rng.uniform(-1, 1, size=(length, act_dim)).astype(np.float32),
        next_obs=rng.normal(size=(length, obs_dim)).astype(np.float32),
        rewards=rewards, terminated=np.arange(length) == length - 1,
        params=np.array([12.5]), params_normalized=np.array([0.375]), kind="randomized",
        iteration=3, slot=4, policy_version=99, episode_return=float(rewards.sum()), length=length,
        truncated=False, solved=True, final_distance=math.nan)


def test_trajectory_round_trip_is_exact() -> None:
    original = make_trajectory()
    msg = trajectories.to_msg(original, env_id="adr/LunarLander-v0", names=["main_engine_power"], instance_id="sim_0")
    decoded = trajectories.from_msg(msg, obs_dim=8, act_dim=2)
    for name in ("obs", "actions", "next_obs", "rewards", "terminated", "params", "params_normalized"):
        np.testing.assert_array_equal(getattr(decoded, name), getattr(original, name))
    assert (decoded.kind, decoded.iteration, decoded.slot, decoded.policy_version, decoded.length) == (
        "randomized", 3, 4, 99, 7)
    assert decoded.solved and decoded.episode_return == pytest.approx(original.episode_return)
    assert msg.parameters.names == ["main_engine_power"] and msg.instance_id == "sim_0"


def test_trajectory_rejections_name_the_field() -> None:
    msg = trajectories.to_msg(make_trajectory(), env_id="e", names=["main_engine_power"], instance_id="i")
    with pytest.raises(trajectories.MalformedTrajectory, match="obs_dim 8 != 6"):
        trajectories.from_msg(msg, obs_dim=6)
    short = trajectories.to_msg(make_trajectory(), env_id="e", names=["main_engine_power"], instance_id="i")
    short.actions = to_field(np.zeros(5, np.float32))
    with pytest.raises(trajectories.MalformedTrajectory, match="actions has 5 values, expected 14"):
        trajectories.from_msg(short)
    poisoned = make_trajectory()
    poisoned.rewards[2] = np.nan
    with pytest.raises(trajectories.MalformedTrajectory, match="rewards holds NaN"):
        trajectories.from_msg(trajectories.to_msg(poisoned, env_id="e", names=["main_engine_power"], instance_id="i"))
    msg.kind = 7
    with pytest.raises(trajectories.MalformedTrajectory, match="kind 7"):
        trajectories.from_msg(msg)


def test_policy_weights_round_trip_is_exact() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 400), torch.nn.ReLU(), torch.nn.Linear(400, 2))
    msg = policy_weights.to_msg(net.state_dict(), version=12, algorithm="ddpg", obs_dim=8, act_dim=2)
    decoded = policy_weights.from_msg(msg)
    assert list(decoded) == list(net.state_dict())
    for name, tensor in net.state_dict().items():
        assert torch.equal(decoded[name], tensor)
    assert msg.version == 12 and len(msg.data) == sum(t.numel() for t in net.state_dict().values())


def test_policy_weights_rejections() -> None:
    msg = policy_weights.to_msg({"w": torch.ones(2, 3), "b": torch.zeros(3)}, version=1, algorithm="ddpg",
                                obs_dim=3, act_dim=3)
    msg.data = to_field(np.ones(8, np.float32))
    with pytest.raises(policy_weights.MalformedWeights, match="data 8 values"):
        policy_weights.from_msg(msg)
    msg.data = to_field(np.full(9, np.nan, np.float32))
    with pytest.raises(policy_weights.MalformedWeights, match="NaN"):
        policy_weights.from_msg(msg)


def test_parameter_set_rejects_inconsistent_or_non_finite_values() -> None:
    msg = ParameterSet(names=["a", "b"], values=to_field(np.array([1.0, 2.0]), np.float64),
                       normalized=to_field(np.array([0.5]), np.float64))
    with pytest.raises(ValueError, match="2 names, 2 values and 1 normalized"):
        parameter_sets.from_msg(msg)
    msg.normalized = to_field(np.array([0.5, np.inf]), np.float64)
    with pytest.raises(ValueError, match="non-finite"):
        parameter_sets.from_msg(msg)
