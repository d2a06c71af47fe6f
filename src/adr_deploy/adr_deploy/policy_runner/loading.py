"""A trained ErgoReacher / ErgoPusher actor from a run directory or checkpoint file, weights only.

Reuses ``adr_core.evaluation.load_policy`` (in-process runs: ``checkpoints/latest.pt``; node-graph runs:
``checkpoints/latest.json`` naming ``agent-<k>.pt``; every file read with ``torch.load(weights_only=True)``) and adds
what deployment needs: an env the arm can run and an actor whose sizes fit that env.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adr_core.agents.networks import ActorPolicy
from adr_core.envs import ENV_IDS
from adr_core.evaluation import TrainedPolicy, load_policy
from adr_core.training.checkpoint import CheckpointError

from .errors import DeployError
from .task import DeployTask, task_for


@dataclass(frozen=True)
class DeployablePolicy:
    trained: TrainedPolicy
    task: DeployTask
    policy: ActorPolicy
    episode_steps: int  # the training episodes' length (the env's 100 unless the run set max_episode_steps)


def load_deployable(path: str | Path) -> DeployablePolicy:
    if not str(path):
        raise DeployError("no checkpoint given: set the 'checkpoint' parameter to a run directory or a .pt file")
    try:
        trained = load_policy(path)
    except CheckpointError as error:
        raise DeployError(str(error)) from None
    task = task_for(trained.env_id)
    if (trained.obs_dim, trained.act_dim) != (task.obs_dim, task.act_dim):
        raise DeployError(f"{trained.path}: the actor maps {trained.obs_dim} -> {trained.act_dim} values but "
                          f"{task.env_id} has {task.obs_dim} observations and {task.act_dim} actions")
    return DeployablePolicy(trained=trained, task=task, policy=trained.policy(),
                            episode_steps=trained.max_episode_steps or _env_episode_steps(task.env_id))


def _env_episode_steps(env_id: str) -> int:
    import gymnasium

    assert env_id in ENV_IDS  # importing adr_core.envs registered it
    return int(gymnasium.spec(env_id).max_episode_steps)
