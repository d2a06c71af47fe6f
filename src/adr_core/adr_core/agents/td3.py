"""TD3 (Fujimoto et al., 2018): twin critics, target policy smoothing, delayed actor and target updates.

One gradient step::

    a'       = clip(mu'(s') + clip(N(0, policy_noise^2), -noise_clip, noise_clip), -1, 1)
    y        = r + discount * min(Q1'(s', a'), Q2'(s', a'))   (discount = gamma^n * not_done)
    critics <- Adam step on mean (Q1(s, a) - y)^2 + mean (Q2(s, a) - y)^2
    every policy_delay steps: actor <- Adam step on -mean Q1(s, mu(s)); targets <- soft update
"""
from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F

from .base import OffPolicyAgent, frozen_copy, make_adam
from .networks import Critic
from .replay_buffer import Batch


class TD3(OffPolicyAgent):
    algorithm = "td3"

    def _build_critics(self) -> None:
        hidden = self.config.hidden_sizes
        norm = self.config.normalize_observations
        self.critic1 = Critic(self.input_dim, self.act_dim, hidden, normalize_observations=norm).to(self.device)
        self.critic2 = Critic(self.input_dim, self.act_dim, hidden, normalize_observations=norm).to(self.device)
        self.critic1_target, self.critic2_target = frozen_copy(self.critic1), frozen_copy(self.critic2)
        critic_params = list(self.critic1.parameters()) + list(self.critic2.parameters())
        self.critic_optimizer = make_adam(critic_params, self.config.critic_lr)
        self._online_params: list[torch.Tensor] = [*self.actor.parameters(), *critic_params]
        self._target_params: list[torch.Tensor] = [*self.actor_target.parameters(), *self.critic1_target.parameters(),
                                                   *self.critic2_target.parameters()]

    def _gradient_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        cfg = self.config
        with torch.no_grad():
            noise = torch.randn(batch.actions.shape, generator=self.generator).to(self.device)
            noise = (noise * cfg.td3_policy_noise).clamp(-cfg.td3_noise_clip, cfg.td3_noise_clip)
            next_actions = (self.actor_target(batch.next_obs) + noise).clamp(-1.0, 1.0)
            next_q = torch.min(self.critic1_target(batch.next_obs, next_actions),
                               self.critic2_target(batch.next_obs, next_actions))
            target_q = torch.addcmul(batch.rewards, batch.discount, next_q)

        critic_loss = (F.mse_loss(self.critic1(batch.obs, batch.actions), target_q)
                       + F.mse_loss(self.critic2(batch.obs, batch.actions), target_q))
        self._step(self.critic_optimizer, critic_loss)

        if (self.updates_done + 1) % cfg.td3_policy_delay != 0:
            return critic_loss.detach(), None
        actor_loss = -self.critic1(batch.obs, self.actor(batch.obs)).mean()
        self._step_actor(actor_loss)
        self._soft_update(self._target_params, self._online_params, cfg.tau)
        return critic_loss.detach(), actor_loss.detach()

    def _critic_state(self) -> dict[str, Any]:
        return {"critic1": self.critic1.state_dict(), "critic2": self.critic2.state_dict(),
                "critic1_target": self.critic1_target.state_dict(),
                "critic2_target": self.critic2_target.state_dict(),
                "critic_optimizer": self.critic_optimizer.state_dict()}

    def _load_critic_state(self, state: dict[str, Any]) -> None:
        for name in ("critic1", "critic2", "critic1_target", "critic2_target", "critic_optimizer"):
            getattr(self, name).load_state_dict(state[name])
