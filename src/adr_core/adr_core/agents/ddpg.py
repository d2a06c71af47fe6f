"""DDPG as used by the paper (TD3 repository's ``OurDDPG.py``): one critic, target networks, soft updates.

One gradient step::

    y        = r + discount * Q'(s', mu'(s'))     (discount = gamma^n * not_done: see replay_buffer)
    critic  <- Adam step on mean (Q(s, a) - y)^2
    actor   <- Adam step on -mean Q(s, mu(s))
    targets <- (1 - tau) * targets + tau * online
"""
from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F

from .base import OffPolicyAgent, frozen_copy, make_adam
from .networks import Critic
from .replay_buffer import Batch


class DDPG(OffPolicyAgent):
    algorithm = "ddpg"

    def _build_critics(self) -> None:
        self.critic = Critic(self.input_dim, self.act_dim, self.config.hidden_sizes,
                             normalize_observations=self.config.normalize_observations).to(self.device)
        self.critic_target = frozen_copy(self.critic)
        self.critic_optimizer = make_adam(list(self.critic.parameters()), self.config.critic_lr)
        self._online_params: list[torch.Tensor] = [*self.actor.parameters(), *self.critic.parameters()]
        self._target_params: list[torch.Tensor] = [*self.actor_target.parameters(), *self.critic_target.parameters()]

    def _gradient_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        tau = self.config.tau
        with torch.no_grad():
            next_q = self.critic_target(batch.next_obs, self.actor_target(batch.next_obs))
            target_q = torch.addcmul(batch.rewards, batch.discount, next_q)

        critic_loss = F.mse_loss(self.critic(batch.obs, batch.actions), target_q)
        self._step(self.critic_optimizer, critic_loss)

        actor_loss = -self.critic(batch.obs, self.actor(batch.obs)).mean()
        self._step_actor(actor_loss)

        self._soft_update(self._target_params, self._online_params, tau)
        return critic_loss.detach(), actor_loss.detach()

    def _critic_state(self) -> dict[str, Any]:
        return {"critic": self.critic.state_dict(), "critic_target": self.critic_target.state_dict(),
                "critic_optimizer": self.critic_optimizer.state_dict()}

    def _load_critic_state(self, state: dict[str, Any]) -> None:
        self.critic.load_state_dict(state["critic"])
        self.critic_target.load_state_dict(state["critic_target"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
