"""SAC (Haarnoja et al., 2018; CleanRL's ``sac_continuous_action.py``): a squashed Gaussian actor, twin critics
evaluated as one ensemble, target critics, and an automatically tuned entropy temperature.

One gradient step::

    a', logp' ~ pi(s')                                       (tanh-squashed Gaussian, reparameterized)
    y        = r + discount * (min(Q1'(s', a'), Q2'(s', a')) - alpha * logp')
    critics <- Adam step on mean (Q1(s, a) - y)^2 + mean (Q2(s, a) - y)^2
    a, logp ~ pi(s);  actor <- Adam step on mean (alpha * logp - min(Q1(s, a), Q2(s, a)))
    alpha   <- Adam step on -mean log_alpha * (logp + target_entropy)      (default target: -act_dim)
    critic targets <- (1 - tau) * targets + tau * online

The deterministic policy (evaluation, deployment) is ``tanh(mean)``; exploring rollouts sample the Gaussian.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch.nn import functional as F

from .base import OffPolicyAgent, frozen_copy, make_adam
from .networks import EnsembleCritic
from .optim import FusedAdam
from .replay_buffer import Batch


class SAC(OffPolicyAgent):
    algorithm = "sac"
    gaussian_actor = True

    def _build_critics(self) -> None:
        self.critic = EnsembleCritic(self.input_dim, self.act_dim, self.config.hidden_sizes, members=2,
                                     normalize_observations=self.config.normalize_observations).to(self.device)
        self.critic_target = frozen_copy(self.critic)
        self.critic_optimizer = make_adam(list(self.critic.parameters()), self.config.critic_lr)
        self._critic_params: list[torch.Tensor] = list(self.critic.parameters())
        self._critic_target_params: list[torch.Tensor] = list(self.critic_target.parameters())
        self._build_temperature()

    def _build_temperature(self) -> None:
        """The entropy temperature ``log_alpha``, its Adam and the block's log-probability sum (CrossQ's too)."""
        self.target_entropy = self.config.sac_target_entropy_per_dim * self.act_dim
        self.log_alpha = torch.tensor([math.log(self.config.sac_initial_alpha)], device=self.device,
                                      requires_grad=True)
        self.alpha_optimizer = make_adam([self.log_alpha], self.config.critic_lr)
        self._log_prob_sum = torch.zeros((), device=self.device)  # over the update block, for policy_entropy
        self._log_prob_steps = 0

    def _sample(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Reparameterized action in (-1, 1) and its log-probability (B, 1), noise from the agent's generator."""
        mean, log_std = self.actor.mean_log_std(obs)
        std = log_std.exp()
        eps = torch.randn(mean.shape, generator=self.generator).to(self.device)
        pre_tanh = mean + std * eps
        action = torch.tanh(pre_tanh)
        # log N(pre_tanh; mean, std) - sum log(1 - tanh^2), the latter in the stable form 2(log2 - u - softplus(-2u))
        log_prob = (-0.5 * eps.pow(2) - log_std - 0.5 * math.log(2.0 * math.pi)
                    - 2.0 * (math.log(2.0) - pre_tanh - F.softplus(-2.0 * pre_tanh)))
        return action, log_prob.sum(-1, keepdim=True)

    def _gradient_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        alpha = self.log_alpha.detach().exp()
        with torch.no_grad():
            next_actions, next_log_prob = self._sample(batch.next_obs)
            next_q = self.critic_target(batch.next_obs, next_actions).min(0).values - alpha * next_log_prob
            target_q = torch.addcmul(batch.rewards, batch.discount, next_q)

        q = self.critic(batch.obs, batch.actions)
        critic_loss = F.mse_loss(q, target_q.expand_as(q)) * q.shape[0]  # the sum of the members' mean losses
        self._step(self.critic_optimizer, critic_loss)

        actions, log_prob = self._sample(batch.obs)
        q_pi = self.critic(batch.obs, actions).min(0).values
        actor_loss = (alpha * log_prob - q_pi).mean() + self._demo_bc_loss(batch, q_pi)
        self._step_actor(actor_loss)

        self._step_temperature(log_prob)

        self._soft_update(self._critic_target_params, self._critic_params, self.config.tau)
        return critic_loss.detach(), actor_loss.detach()

    def _demo_bc_loss(self, batch: Batch, q_pi: torch.Tensor) -> torch.Tensor | float:
        """``demo_bc_weight`` x the mean over the batch's demonstration rows of ||mean action - demo action||^2,
        each row counted only where min Q(s, demo action) > min Q(s, sampled action) (Nair et al. 2018's Q-filter;
        the critic in its current mode, no gradient through it). 0 without demonstrations in the batch."""
        n = self._demo_rows
        if not (self.config.demo_bc_weight and n):
            return 0.0
        obs, demo_actions = batch.obs[-n:], batch.actions[-n:]
        with torch.no_grad():
            keep = (self.critic(obs, demo_actions).min(0).values > q_pi[-n:]).float()
        mean_action = torch.tanh(self.actor.mean_log_std(obs)[0])
        squared = (mean_action - demo_actions).pow(2).sum(-1, keepdim=True)
        loss: torch.Tensor = self.config.demo_bc_weight * (keep * squared).mean()
        return loss

    def _step_temperature(self, log_prob: torch.Tensor) -> None:
        """One Adam step of ``log_alpha`` on the actor step's log-probabilities; counts them for policy_entropy."""
        # alpha loss -mean(log_alpha * (logp + target entropy)); its gradient w.r.t. log_alpha in closed form
        self.alpha_optimizer.step([-(log_prob.detach() + self.target_entropy).mean().reshape(1)])
        self._log_prob_sum += log_prob.detach().mean()
        self._log_prob_steps += 1

    def _scheduled_optimizers(self) -> list[tuple[FusedAdam, float]]:
        return [*super()._scheduled_optimizers(), (self.alpha_optimizer, self.config.critic_lr)]

    def _update_statistics(self) -> dict[str, float]:
        """``entropy_alpha``: the temperature after the block; ``policy_entropy``: -mean log pi(a|s) of the block's
        sampled actions (nats, of the squashed policy; the target is -act_dim). A policy whose entropy collapses
        while its return stalls is the hovering failure mode (docs/benchmarks.md, "Time to land")."""
        entropy = -self._log_prob_sum.item() / self._log_prob_steps if self._log_prob_steps else float("nan")
        self._log_prob_sum.zero_()
        self._log_prob_steps = 0
        return {"entropy_alpha": self.alpha, "policy_entropy": entropy}

    @property
    def alpha(self) -> float:
        return float(self.log_alpha.detach().exp().item())

    def _critic_state(self) -> dict[str, Any]:
        return {"critic": self.critic.state_dict(), "critic_target": self.critic_target.state_dict(),
                "critic_optimizer": self.critic_optimizer.state_dict(), **self._temperature_state()}

    def _load_critic_state(self, state: dict[str, Any]) -> None:
        self.critic.load_state_dict(state["critic"])
        self.critic_target.load_state_dict(state["critic_target"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        self._load_temperature_state(state)

    def _temperature_state(self) -> dict[str, Any]:
        return {"log_alpha": self.log_alpha.detach().cpu().clone(),
                "alpha_optimizer": self.alpha_optimizer.state_dict()}

    def _load_temperature_state(self, state: dict[str, Any]) -> None:
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"].to(self.device))
        self.alpha_optimizer.load_state_dict(state["alpha_optimizer"])
