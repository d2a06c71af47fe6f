"""Trajectory message <-> ``adr_core.rollout.Trajectory``, with validation of what arrives."""
from __future__ import annotations

import math
from typing import cast

import numpy as np

from adr_core.rollout import KIND_CODES, Kind, Trajectory
from adr_interfaces.msg import ParameterSet
from adr_interfaces.msg import Trajectory as TrajectoryMsg
from adr_ros.arrays import from_field, to_field

KIND_NAMES = {code: cast(Kind, name) for name, code in KIND_CODES.items()}


class MalformedTrajectory(ValueError):
    """A trajectory message that cannot be used; the message says which field is wrong."""


def to_msg(trajectory: Trajectory, *, env_id: str, names: list[str], instance_id: str,
           run_id: str = "") -> TrajectoryMsg:
    msg = TrajectoryMsg()
    msg.run_id = run_id
    msg.kind = KIND_CODES[trajectory.kind]
    msg.instance_id = instance_id
    msg.policy_version = trajectory.policy_version
    msg.parameters = ParameterSet(run_id=run_id, env_id=env_id, iteration=trajectory.iteration, slot=trajectory.slot,
                                  names=names,
                                  values=to_field(trajectory.params, np.float64),
                                  normalized=to_field(trajectory.params_normalized, np.float64))
    msg.length = trajectory.length
    msg.obs_dim = trajectory.obs.shape[1] if trajectory.obs.ndim == 2 else 0
    msg.act_dim = trajectory.actions.shape[1] if trajectory.actions.ndim == 2 else 0
    msg.observations = to_field(trajectory.obs)
    msg.actions = to_field(trajectory.actions)
    msg.next_observations = to_field(trajectory.next_obs)
    msg.rewards = to_field(trajectory.rewards)
    msg.terminated = trajectory.terminated.tolist()
    msg.truncated = trajectory.truncated
    msg.episode_return = trajectory.episode_return
    msg.final_distance = trajectory.final_distance
    msg.solved = trajectory.solved
    return msg


def from_msg(msg: TrajectoryMsg, *, obs_dim: int | None = None, act_dim: int | None = None) -> Trajectory:
    """Decode and validate; raises MalformedTrajectory naming the first inconsistent field."""
    length, o, a = int(msg.length), int(msg.obs_dim), int(msg.act_dim)
    if msg.kind not in KIND_NAMES:
        raise MalformedTrajectory(f"kind {msg.kind} is neither randomized (0) nor reference (1)")
    if obs_dim is not None and o != obs_dim:
        raise MalformedTrajectory(f"obs_dim {o} != {obs_dim} expected for this env")
    if act_dim is not None and a != act_dim:
        raise MalformedTrajectory(f"act_dim {a} != {act_dim} expected for this env")
    expected = {"observations": length * o, "actions": length * a, "next_observations": length * o,
                "rewards": length, "terminated": length}
    for field_name, size in expected.items():
        if len(getattr(msg, field_name)) != size:
            raise MalformedTrajectory(f"{field_name} has {len(getattr(msg, field_name))} values, expected {size} "
                                      f"(length {length}, obs_dim {o}, act_dim {a})")
    obs = from_field(msg.observations).reshape(length, o)
    actions = from_field(msg.actions).reshape(length, a)
    next_obs = from_field(msg.next_observations).reshape(length, o)
    rewards = from_field(msg.rewards)
    for field_name, values in (("observations", obs), ("actions", actions), ("next_observations", next_obs),
                               ("rewards", rewards)):
        if not np.isfinite(values).all():
            raise MalformedTrajectory(f"{field_name} holds NaN or inf")
    if not math.isfinite(msg.episode_return):
        raise MalformedTrajectory("episode_return is NaN or inf")
    params = from_field(msg.parameters.values, np.float64)
    normalized = from_field(msg.parameters.normalized, np.float64)
    if params.size != len(msg.parameters.names) or normalized.size != params.size:
        raise MalformedTrajectory(f"parameters: {len(msg.parameters.names)} names, {params.size} values, "
                                  f"{normalized.size} normalized values")
    return Trajectory(
        obs=obs.copy(), actions=actions.copy(), next_obs=next_obs.copy(), rewards=rewards.copy(),
        terminated=np.asarray(msg.terminated, dtype=bool), params=params.copy(), params_normalized=normalized.copy(),
        kind=KIND_NAMES[msg.kind], iteration=int(msg.parameters.iteration), slot=int(msg.parameters.slot),
        policy_version=int(msg.policy_version), episode_return=float(msg.episode_return), length=length,
        truncated=bool(msg.truncated), solved=bool(msg.solved), final_distance=float(msg.final_distance),
    )
