"""ADR's sampler: SVPG particles that walk the normalized randomization cube [0, 1]^d.

Each particle is an A2C agent whose state is a point of the cube and whose action is a move. One
``propose`` call advances every particle ``rollout_length`` steps and returns the points reached; one
``update`` call takes a reward per point (the discriminator reward of the environment built there) and
applies one A2C critic step and one Stein (eq. (2)) actor step to all particles at once.

Particle MDP (our reading of the paper's appendix):
  state s_t in [0, 1]^d; action a_t ~ N(mu(s_t), sigma^2) (always stochastic);
  s_{t+1} = clip(s_t + max_step * a_t / max(1, ||a_t||), 0, 1)   (move length <= max_step);
  r_t = reward of the environment at s_{t+1} (the proposed point); after ``horizon`` steps the episode
  ends (mask 0) and the particle restarts at a uniform random point; with ``restart_when_stuck`` (published code)
  also when the clipped move left the particle where it was (pinned at a face of the cube).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..base.fields import option
from .base import Sampler, SamplerError
from .particles import ParticleEnsemble, flatten_per_particle, gaussian_log_prob, unflatten_per_particle
from .stein import stein_direction

# Largest reward magnitude accepted: the discriminator's rewards are mean log-probabilities (<= log 2 with the
# published code's offset); anything near this is a broken or hostile message, not a reward.
REWARD_LIMIT = 1e4


@dataclass
class SVPGConfig:
    num_particles: int | None = option(None, "SVPG particles N; null = the paper's choice: 10 for LunarLander, "
                                             "15 for the other environments.")
    hidden_size: int = option(
        100, "Hidden units of both layers of each particle's actor and critic (paper: 100, tanh)."
    )
    learning_rate: float = option(3e-4, "Adam learning rate of the particles (paper: 0.0003).")
    gamma: float = option(0.99, "Discount of the particles' A2C returns (paper: 0.99).")
    temperature: float = option(10.0, "SVPG temperature alpha of eq. (2) (paper: 10).")
    max_step_length: float = option(0.05, "Longest particle move in the normalized cube (paper: 0.05).")
    horizon: int = option(50, "Particle steps before a uniform random restart (paper: 50; published code: 25).")
    rollout_length: int = option(1, "Particle steps per ADR iteration, i.e. proposals per particle (Algorithm 1: "
                                     "one environment per particle; published code: 5).")
    restart_when_stuck: bool = option(False, "Restart a particle (uniformly, ending its episode) when its clipped "
                                             "move leaves it where it was, pinned at a face of the cube (published "
                                             "code: true; the paper does not say).")
    constant_reward: float | None = option(
        None, "Ablation, not for use: the particles learn from this constant instead of the rewards they are given "
              "(the discriminator's), so only the kernel's repulsion and their own noise move them; null = the "
              "rewards given (the paper). The discriminator still trains and reports (results/adr_collapse/).")

    def __post_init__(self) -> None:
        if self.num_particles is not None and self.num_particles < 2:
            raise ValueError(f"svpg.num_particles must be >= 2 (the kernel needs pairs), got {self.num_particles}")
        for name in ("hidden_size", "learning_rate", "temperature", "max_step_length", "horizon", "rollout_length"):
            if getattr(self, name) <= 0:
                raise ValueError(f"svpg.{name} must be > 0, got {getattr(self, name)}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"svpg.gamma must be in [0, 1], got {self.gamma}")
        if self.constant_reward is not None and not abs(self.constant_reward) <= REWARD_LIMIT:
            raise ValueError(f"svpg.constant_reward must be a number within +-{REWARD_LIMIT:g} or null, got "
                             f"{self.constant_reward}")


class SVPGSampler(Sampler):
    name = "adr"
    learns_from_rewards = True
    METRICS = ("svpg_value_loss", "svpg_objective", "svpg_bandwidth", "svpg_kernel_mean", "svpg_log_std")

    def __init__(self, ndim: int, config: SVPGConfig, seed: int) -> None:
        if config.num_particles is None:
            raise SamplerError("SVPGSampler needs config.num_particles (resolve the paper default first)")
        self.ndim, self.config = int(ndim), config
        self.n = config.num_particles
        self.generator = torch.Generator().manual_seed(int(seed))
        self.particles = ParticleEnsemble(self.n, self.ndim, config.hidden_size, self.generator)
        self.actor_optimizer = torch.optim.Adam(self.particles.actor_parameters(), lr=config.learning_rate, fused=True)
        self.critic_optimizer = torch.optim.Adam(self.particles.critic_parameters(), lr=config.learning_rate,
                                                 fused=True)
        self.states = torch.rand(self.n, self.ndim, generator=self.generator)  # current point of each particle
        self.steps_in_episode = torch.zeros(self.n, dtype=torch.long)
        self.pending: dict[str, torch.Tensor] | None = None  # the proposal batch awaiting rewards

    @property
    def num_proposals(self) -> int:
        return self.n * self.config.rollout_length

    # ------------------------------------------------------------------ propose
    @torch.no_grad()
    def propose(self) -> np.ndarray:
        """(N * rollout_length, d) points; row ``i * rollout_length + t`` is particle i's t-th step."""
        if self.pending is not None:
            raise SamplerError("propose() called again before update() received the rewards of the last proposals")
        cfg, length = self.config, self.config.rollout_length
        states = torch.empty(self.n, length, self.ndim)
        actions = torch.empty(self.n, length, self.ndim)
        masks = torch.ones(self.n, length)
        proposals = torch.empty(self.n, length, self.ndim)
        for t in range(length):  # over time steps, never over particles
            mean, log_std = self.particles.policy(self.states.unsqueeze(1))
            action = mean[:, 0] + log_std[:, 0].exp() * torch.randn(self.n, self.ndim, generator=self.generator)
            move = cfg.max_step_length * action / action.norm(dim=1, keepdim=True).clamp_min(1.0)
            reached = (self.states + move).clamp(0.0, 1.0)
            states[:, t], actions[:, t], proposals[:, t] = self.states, action, reached
            self.steps_in_episode += 1
            ended = self.steps_in_episode >= cfg.horizon
            if cfg.restart_when_stuck:
                ended |= (reached == self.states).all(dim=1)
            masks[:, t] = (~ended).float()
            restart = torch.rand(self.n, self.ndim, generator=self.generator)
            self.states = torch.where(ended.unsqueeze(1), restart, reached)
            self.steps_in_episode[ended] = 0
        self.pending = {"states": states, "actions": actions, "masks": masks, "last_states": self.states.clone()}
        return proposals.reshape(self.n * length, self.ndim).double().numpy()

    def particle_points(self) -> np.ndarray:
        return self.states.double().numpy().copy()

    # ------------------------------------------------------------------ update
    def update(self, rewards: np.ndarray) -> dict[str, float]:
        """One A2C critic step and one SVPG actor step from the rewards of the last proposals."""
        if self.pending is None:
            raise SamplerError("update() needs a propose() first")
        rewards = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if rewards.shape != (self.num_proposals,) or not np.isfinite(rewards).all():
            raise SamplerError(f"update() needs {self.num_proposals} finite rewards in proposal order, "
                               f"got shape {rewards.shape}")
        if np.abs(rewards).max() > REWARD_LIMIT:
            raise SamplerError(f"rewards up to {np.abs(rewards).max():.3g} in size: a discriminator reward (a mean "
                               f"log-probability) is within +-{REWARD_LIMIT:g}; refused, the particles are unchanged")
        if self.config.constant_reward is not None:
            rewards = np.full_like(rewards, self.config.constant_reward)
        before, pending = self.state_dict(), self.pending
        try:
            return self._update(rewards)
        except SamplerError:
            self.load_state_dict(before)
            self.pending = pending
            raise

    def _update(self, rewards: np.ndarray) -> dict[str, float]:
        batch, cfg = self.pending, self.config
        assert batch is not None
        reward = torch.as_tensor(rewards, dtype=torch.float32).view(self.n, cfg.rollout_length)

        with torch.no_grad():
            ret = self.particles.value(batch["last_states"].unsqueeze(1))[:, 0]
            returns = torch.empty_like(reward)
            for t in reversed(range(cfg.rollout_length)):
                ret = reward[:, t] + cfg.gamma * batch["masks"][:, t] * ret
                returns[:, t] = ret

        values = self.particles.value(batch["states"])
        advantages = (returns - values).detach()
        mean, log_std = self.particles.policy(batch["states"])
        log_probs = gaussian_log_prob(batch["actions"], mean, log_std)
        objectives = (log_probs * advantages).mean(dim=1)  # J_i: one A2C policy-gradient objective per particle

        actor_params = self.particles.actor_parameters()
        grads = torch.autograd.grad(objectives.sum(), actor_params)  # slice i = grad of J_i w.r.t. particle i
        flat_params = flatten_per_particle([p.detach() for p in actor_params])
        phi, kernel, bandwidth = stein_direction(flat_params, flatten_per_particle(list(grads)), cfg.temperature)
        for param, direction in zip(actor_params, unflatten_per_particle(phi, actor_params)):
            param.grad = -direction  # Adam minimizes; phi is an ascent direction
        self.actor_optimizer.step()

        value_loss = 0.5 * (returns - values).square().mean(dim=1).sum()  # sum: each particle its own mean loss
        self.critic_optimizer.zero_grad(set_to_none=True)
        value_loss.backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is unannotated
        self.critic_optimizer.step()

        if not all(torch.isfinite(p).all() for p in self.particles.parameters()):
            raise SamplerError("the update made the particles non-finite; refused, the particles are unchanged")
        self.pending = None
        off_diagonal = kernel.sum() - kernel.diagonal().sum()
        return {"svpg_value_loss": value_loss.item() / self.n, "svpg_objective": objectives.mean().item(),
                "svpg_bandwidth": bandwidth.item(),
                "svpg_kernel_mean": off_diagonal.item() / (self.n * (self.n - 1)),
                "svpg_log_std": log_std.mean().item()}

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """A snapshot (deep copy): later updates do not change it."""
        return copy.deepcopy({
            "sampler": self.name, "ndim": self.ndim, "num_particles": self.n,
            "particles": self.particles.state_dict(), "actor_optimizer": self.actor_optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(), "states": self.states,
            "steps_in_episode": self.steps_in_episode, "generator": self.generator.get_state(),
            "pending": self.pending})

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._check_state_kind(state)
        if (state["ndim"], state["num_particles"]) != (self.ndim, self.n):
            raise SamplerError(f"SVPG checkpoint has {state['num_particles']} particles in {state['ndim']} dims, "
                               f"this sampler {self.n} in {self.ndim}")
        state = copy.deepcopy(state)  # optimizers would otherwise share moment tensors with ``state``
        self.particles.load_state_dict(state["particles"])
        self.actor_optimizer.load_state_dict(state["actor_optimizer"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        self.states = state["states"].clone()
        self.steps_in_episode = state["steps_in_episode"].clone()
        self.generator.set_state(state["generator"])
        self.pending = None if state["pending"] is None else {k: v.clone() for k, v in state["pending"].items()}
