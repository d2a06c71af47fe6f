"""The agent interface and what DDPG and TD3 share: actor, replay buffer, acting, storing, (de)serialization.

Interface used by the trainer and the ROS trainer node::

    agent.act(obs) -> action                  deterministic, in [-1, 1]
    agent.actor_state_dict() -> weights        CPU float32 tensors; ``ActorPolicy.from_state_dict`` runs them
    agent.store(trajectory)                    randomized trajectories only
    (agent.demonstrations: episodes from a file in a buffer of their own, agent.demo_fraction of every batch)
    agent.updates_due() -> n                   one per stored step after ``learning_starts`` (x updates_per_step)
    agent.update(n) -> {"critic_loss", "actor_loss", ...}   n gradient steps, mean losses (SAC: + entropy_alpha,
                                                           policy_entropy)
    agent.state_dict() / agent.load_state_dict(state)
"""
from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

import numpy as np
import torch
from torch import nn

from ..base.goal_layout import GoalLayout
from ..base.history import HistorySpec, stack_episode
from ..rollout import KIND_CODES, Trajectory
from .config import AgentConfig
from .demonstrations import load_demonstrations
from .goals import relabelled_rows, shaped_rewards
from .networks import Actor, ObservationNormalized
from .optim import FusedAdam
from .replay_buffer import Batch, ReplayBuffer, nstep_transitions

DEMO_RNG_KEY = 7  # relabelling streams of demonstration episodes: [seed, episode, 7] (own episodes use 4 numbers)


def make_adam(params: Iterable[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999)) -> FusedAdam:
    # fused: one kernel for the whole step, stepped with the gradients directly (agents/optim.py)
    return FusedAdam(params, lr=lr, betas=betas)


def frozen_copy(module: nn.Module) -> nn.Module:
    target = copy.deepcopy(module)
    target.requires_grad_(False)
    return target


class OffPolicyAgent(ABC):
    algorithm: str = ""
    gaussian_actor: bool = False  # SAC: the actor has a log-std head and exploring rollouts sample it
    adam_betas: tuple[float, float] = (0.9, 0.999)  # of the actor's and critics' Adam (CrossQ: beta1 0.5)
    critic_optimizer: FusedAdam  # created by ``_build_critics``

    def __init__(self, obs_dim: int, act_dim: int, config: AgentConfig, seed: int,
                 device: torch.device | str = "cpu", goal_layout: GoalLayout | None = None) -> None:
        self.obs_dim, self.act_dim, self.config = int(obs_dim), int(act_dim), config
        self.seed = int(seed)
        if (config.her_future or config.shaping_weight) and (goal_layout is None or not goal_layout.fits(obs_dim)):
            raise ValueError("agent.her_future and agent.shaping_weight need an env whose record has a goal layout "
                             "(adr/Pusher3DOF-v0, adr/ErgoPusher-v0)")
        if config.shaping_weight and goal_layout is not None and goal_layout.effector is None:
            raise ValueError("agent.shaping_weight needs an env whose goal layout names an effector")
        self.goal_layout = goal_layout
        # a policy with memory: the networks read the observation and the last steps' (adr_core.base.history)
        self.history = (HistorySpec.for_env(config.history_steps, self.obs_dim, self.act_dim,
                                            goal_layout.goal if goal_layout is not None else None)
                        if config.history_steps else None)
        self.input_dim = self.history.input_dim if self.history is not None else self.obs_dim
        self.device = torch.device(device)
        self.generator = torch.Generator().manual_seed(int(seed))  # replay sampling and TD3 target noise
        with torch.random.fork_rng(devices=[]):  # network init from the agent's seed, global RNG untouched
            torch.manual_seed(int(seed))
            self.actor = Actor(obs_dim, act_dim, config.hidden_sizes, gaussian=self.gaussian_actor,
                               normalize_observations=config.normalize_observations,
                               history=self.history).to(self.device)
            self.actor_target = frozen_copy(self.actor)
            self._build_critics()
        self.actor_optimizer = make_adam(list(self.actor.parameters()), config.actor_lr, self.adam_betas)
        self.replay = ReplayBuffer(self.input_dim, act_dim, config.buffer_capacity, self.device, self.generator)
        self._load_demonstrations()
        self.updates_done = 0  # gradient steps taken so far; also the policy version
        self.transitions_seen = 0
        self._actor_params = list(self.actor.parameters())
        self._actor_target_params = list(self.actor_target.parameters())

    # ---------------------------------------------------------------- algorithm-specific
    @abstractmethod
    def _build_critics(self) -> None:
        """Create critic(s), their targets and optimizer(s)."""

    @abstractmethod
    def _gradient_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        """One update; returns detached (critic_loss, actor_loss or None when the actor was not updated)."""

    def _update_statistics(self) -> dict[str, float]:
        """Algorithm-specific statistics of the update block that just ran (merged into ``update``'s result)."""
        return {}

    def _scheduled_optimizers(self) -> list[tuple[FusedAdam, float]]:
        """(optimizer, configured learning rate) of every optimizer the learning-rate schedule scales."""
        return [(self.actor_optimizer, self.config.actor_lr), (self.critic_optimizer, self.config.critic_lr)]

    @abstractmethod
    def _critic_state(self) -> dict[str, Any]: ...

    @abstractmethod
    def _load_critic_state(self, state: dict[str, Any]) -> None: ...

    # ---------------------------------------------------------------- interface
    @property
    def policy_version(self) -> int:
        return self.updates_done

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic actions of the actor's inputs (with a history: ``input_dim`` values, e.g. a replay row)."""
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self.device)
        action: np.ndarray = self.actor(x).cpu().numpy()
        return action

    def actor_state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().to("cpu", torch.float32).clone() for k, v in self.actor.state_dict().items()}

    def store(self, trajectory: Trajectory, limit: int | None = None) -> int:
        """Store the trajectory's transitions (only its first ``limit``, when given: the rest of a run's budget);
        returns how many. n-step targets use the whole trajectory, so a cut one's stored targets are exact."""
        count = trajectory.length if limit is None else max(0, min(trajectory.length, int(limit)))
        if count == 0:
            return 0
        rng_key = [self.seed, trajectory.iteration, trajectory.slot, KIND_CODES[trajectory.kind]]
        self._add_episode(self.replay, trajectory.obs, trajectory.actions, trajectory.rewards, trajectory.next_obs,
                          trajectory.terminated, count, rng_key)
        self.transitions_seen += count
        return count

    def _add_episode(self, buffer: ReplayBuffer, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
                     next_obs_all: np.ndarray, terminated: np.ndarray, count: int, rng_key: list[int]) -> None:
        """One episode's rows (its first ``count`` transitions, their relabelled copies) into ``buffer``."""
        config, length = self.config, len(rewards)
        if self.history is not None:  # the inputs as the policy saw them (goal and effector spans unchanged)
            obs, next_obs_all = stack_episode(self.history, obs, actions, next_obs_all)
        if config.shaping_weight:
            assert self.goal_layout is not None  # checked in __init__
            rewards = shaped_rewards(rewards, obs, next_obs_all, self.goal_layout,
                                     config.shaping_weight, config.gamma, config.shaping_target)
        returns, next_obs, discounts = nstep_transitions(rewards, next_obs_all, terminated, config.gamma,
                                                         config.n_step)
        buffer.add(obs[:count], actions[:count], returns[:count], next_obs[:count], discounts[:count])
        if config.her_future:
            assert self.goal_layout is not None
            rows = relabelled_rows(obs, actions, rewards, next_obs_all, terminated, self.goal_layout,
                                   config.her_future, config.gamma, config.n_step, np.random.default_rng(rng_key))
            keep = np.arange(config.her_future)[:, None] * length + np.arange(count)  # each copy's first
            keep = keep.reshape(-1)
            buffer.add(rows.obs[keep], rows.actions[keep], rows.returns[keep], rows.next_obs[keep],
                       rows.discounts[keep])

    def _load_demonstrations(self) -> None:
        """``agent.demonstrations``: a buffer of their own, filled once (the same rows on every load)."""
        self.demo_replay: ReplayBuffer | None = None
        self.demo_digest = ""
        self._demo_rows = 0
        if not self.config.demonstrations:
            return
        demos = load_demonstrations(self.config.demonstrations, self.obs_dim, self.act_dim)
        rows = demos.steps * self.rows_per_transition
        self.demo_replay = ReplayBuffer(self.input_dim, self.act_dim, rows, self.device, self.generator)
        for index, episode in enumerate(demos.episodes):
            self._add_episode(self.demo_replay, episode.obs, episode.actions, episode.rewards, episode.next_obs,
                              episode.terminated, len(episode.rewards), [self.seed, index, DEMO_RNG_KEY])
        self.demo_digest = demos.digest

    def _draw_batch(self) -> Batch:
        """One gradient step's batch: the replay's rows, ``demo_fraction`` of them from the demonstrations."""
        size = self.config.batch_size
        if self.demo_replay is None:
            return self.replay.sample(size)
        demo = int(round(size * self.config.demo_fraction))
        self._demo_rows = demo  # the batch's last rows (demo_bc_weight clones them)
        if demo == 0:
            return self.replay.sample(size)
        own, theirs = self.replay.sample(size - demo), self.demo_replay.sample(demo)
        return Batch(**{name: torch.cat([getattr(own, name), getattr(theirs, name)])
                        for name in ("obs", "actions", "rewards", "discount", "next_obs")})

    @property
    def rows_per_transition(self) -> int:
        """Replay rows one stored transition adds: 1, plus one per relabelled copy (``her_future``)."""
        return 1 + self.config.her_future

    def updates_due(self) -> int:
        """Gradient steps owed: ``updates_per_step`` per stored step beyond ``learning_starts``, minus those done."""
        eligible = max(0, self.transitions_seen - self.config.learning_starts)
        return max(0, math.floor(self.config.updates_per_step * eligible + 1e-9) - self.updates_done)

    def update(self, n_updates: int, progress: float | None = None) -> dict[str, float]:
        """``n_updates`` gradient steps; returns the mean losses (NaN when no step ran).

        ``progress``: the fraction of the run's budget done (agent steps / total); with ``lr_schedule: linear`` every
        learning rate is its configured value times ``1 - progress`` for these steps (RL-zoo's ``lin_`` schedules).
        """
        if n_updates <= 0:
            return {"critic_loss": float("nan"), "actor_loss": float("nan")}
        if self.config.normalize_observations and self.updates_done == 0:
            self._fit_observation_normalization()
        if self.config.lr_schedule == "linear" and progress is not None:
            scale = min(1.0, max(0.0, 1.0 - float(progress)))
            for optimizer, base_lr in self._scheduled_optimizers():
                optimizer.lr = base_lr * scale
        critic_sum = torch.zeros((), device=self.device)
        actor_sum = torch.zeros((), device=self.device)
        actor_steps = 0
        for _ in range(n_updates):
            critic_loss, actor_loss = self._gradient_step(self._draw_batch())
            critic_sum += critic_loss
            if actor_loss is not None:
                actor_sum += actor_loss
                actor_steps += 1
            self.updates_done += 1
        return {"critic_loss": critic_sum.item() / n_updates,
                "actor_loss": actor_sum.item() / actor_steps if actor_steps else float("nan"),
                **self._update_statistics()}

    def state_dict(self) -> dict[str, Any]:
        """A snapshot (deep copy): later updates do not change it."""
        return {
            "algorithm": self.algorithm, "obs_dim": self.obs_dim, "act_dim": self.act_dim,
            "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.config).items()},
            **self._learner_state(), "replay": self.replay.state_dict(), "demo_digest": self.demo_digest,
        }

    def _learner_state(self) -> dict[str, Any]:
        """Everything but the replay buffer (deep copies)."""
        networks = copy.deepcopy({
            "actor": self.actor.state_dict(), "actor_target": self.actor_target.state_dict(),
            "actor_optimizer": self.actor_optimizer.state_dict(), "critic": self._critic_state()})
        return {**networks, "generator": self.generator.get_state(), "updates_done": self.updates_done,
                "transitions_seen": self.transitions_seen}

    def _load_learner_state(self, state: dict[str, Any]) -> None:
        state = {**state, **copy.deepcopy({k: state[k] for k in ("actor_optimizer", "critic")})}  # no shared moments
        self.actor.load_state_dict(state["actor"])
        self.actor_target.load_state_dict(state["actor_target"])
        self.actor_optimizer.load_state_dict(state["actor_optimizer"])
        self._load_critic_state(state["critic"])
        self.generator.set_state(state["generator"])
        self.updates_done, self.transitions_seen = int(state["updates_done"]), int(state["transitions_seen"])

    def undo_point(self, upcoming: int) -> dict[str, Any]:
        """An in-memory snapshot that ``undo`` returns to after storing at most ``upcoming`` transitions (agent steps,
        whatever rows each adds) and updating:
        the networks, optimizers, generator and counters, and of the replay only the rows those transitions would
        overwrite (cheap next to ``state_dict``, which copies the whole buffer). The node graph's trainer takes one
        before each learning block, to drop an iteration that cannot complete because another node died."""
        return {"learner": self._learner_state(),
                "replay": self.replay.undo_point(upcoming * self.rows_per_transition)}

    def undo(self, point: dict[str, Any]) -> None:
        self._load_learner_state(point["learner"])
        self.replay.rollback(point["replay"])

    def load_state_dict(self, state: dict[str, Any]) -> None:
        expected = (self.algorithm, self.obs_dim, self.act_dim)
        found = (state.get("algorithm"), state.get("obs_dim"), state.get("act_dim"))
        if found != expected:
            raise ValueError(f"agent checkpoint is (algorithm, obs_dim, act_dim) = {found}, this agent is {expected}")
        if state.get("demo_digest", "") != self.demo_digest:
            raise ValueError(f"agent checkpoint was trained with demonstrations of digest "
                             f"{state.get('demo_digest', '') or 'none'}, agent.demonstrations now reads "
                             f"{self.demo_digest or 'none'}: resume with the same file")
        self._load_learner_state(state)
        self.replay.load_state_dict(state["replay"])

    # ---------------------------------------------------------------- helpers
    @torch.no_grad()
    def _fit_observation_normalization(self) -> None:
        """Every network's observation normalization from the replay's rows (the warm-up's, before the first gradient
        step; frozen after: ``updates_done`` > 0 keeps it, a resumed run loads it with the networks)."""
        observations = self.replay.observations().double()
        mean, std = observations.mean(0), observations.std(0, unbiased=False)
        for network in vars(self).values():
            if isinstance(network, ObservationNormalized) and network.normalizes:
                network.set_observation_normalization(mean.float(), std.float())

    def _step_actor(self, loss: torch.Tensor) -> None:
        """Actor step with gradients w.r.t. the actor's parameters only (no wasted critic weight gradients)."""
        self.actor_optimizer.step(torch.autograd.grad(loss, self._actor_params))

    @staticmethod
    def _step(optimizer: FusedAdam, loss: torch.Tensor) -> None:
        """One Adam step of ``optimizer``'s parameters on ``loss``."""
        optimizer.step(torch.autograd.grad(loss, optimizer.params))

    @staticmethod
    @torch.no_grad()
    def _soft_update(target: list[torch.Tensor], online: list[torch.Tensor], tau: float) -> None:
        """``target <- (1 - tau) * target + tau * online`` for every tensor, in one fused call."""
        torch._foreach_lerp_(target, online, tau)
