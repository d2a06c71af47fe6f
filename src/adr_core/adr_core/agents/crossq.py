"""CrossQ (Bhatt et al., ICLR 2024, "CrossQ: Batch Normalization in Deep Reinforcement Learning for Greater Sample
Efficiency and Simplicity"): SAC's actor and temperature, twin critics with batch renormalization and no target
networks, the current and next state-action pairs normalized together in one forward pass.

One gradient step::

    a', logp' ~ pi(s')                                          (SAC's squashed Gaussian, no gradient)
    Q(s, a), Q(s', a') = split(critics_train([s; s'], [a; a']))  one batch of 2B rows in training mode: the batch
                                                                 renormalization's statistics cover both halves
    y        = r + discount * (min(Q1(s', a'), Q2(s', a')) - alpha * logp')          detached
    critics <- Adam step on mean (Q1(s, a) - y)^2 + mean (Q2(s, a) - y)^2
    every policy_delay steps:
        a, logp ~ pi(s);  actor <- Adam step on mean (alpha * logp - min(Q1(s, a), Q2(s, a)))   critics in eval mode
        alpha   <- Adam step on -mean log_alpha * (logp + target_entropy)

The reference is sb3-contrib's CrossQ (``sb3_contrib/crossq/crossq.py``, ``policies.py``; MIT licence,
Stable-Baselines Team; after the authors' araffin/sbx): the step above, policy delay 3, Adam beta1 0.5 for actor and
critics (the temperature's Adam keeps 0.9), the critics' batch renormalization (``batch_renorm.py``: momentum 0.01,
100k warm-up steps, then rmax 3 and dmax 5), the critics in training mode only for the joint pass. Deviations, each a
choice of this project:

- **No batch normalization in the actor.** sb3-contrib and the paper also normalize the actor's layers; here the
  actor is SAC's ``Actor`` unchanged, so the numpy ``ActorPolicy`` of the simulator processes, the graph's weight
  messages, ONNX/TorchScript export and the arm's policy runner run a CrossQ policy as they run a SAC one. Its log std
  is squashed into [-5, 2] as this project's SAC (CleanRL's); sb3-contrib clamps it to [-20, 2].
- **Temperature**: its Adam's learning rate is ``critic_lr`` as SAC's here (sb3-contrib: one rate for all).
- **Critic width**: ``crossq_critic_hidden_sizes`` (default: ``hidden_sizes``); the paper's critics are 2048 wide,
  sb3-contrib's 1024, sized for GPUs, not this project's 2-core runs.
- **Critic loss** is the sum of the two members' mean squared errors, as this project's SAC (sb3-contrib: half of it);
  Adam makes the factor irrelevant up to its eps; reported critic losses compare with SAC's.
- **Replay, exploration, n-step returns, learning-rate schedule, updates per step, ``learning_starts``**: the agent
  base's, as for every agent here (sb3-contrib: 1 update per step from step 100; sb3-contrib's learning rate 1e-3 is
  the default ``actor_lr``/``critic_lr``). Observation normalization, ``history_steps`` and goal relabelling act on
  the replay rows and the networks' inputs, so CrossQ gets them from the base as SAC does.
- The batch renormalization layer's own deviations are listed in ``batch_renorm.py``.
"""
from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F

from ..base.goal_layout import GoalLayout
from .base import make_adam
from .batch_renorm import BatchRenormCritic
from .config import AgentConfig
from .replay_buffer import Batch
from .sac import SAC


class CrossQ(SAC):
    algorithm = "crossq"
    gaussian_actor = True

    def __init__(self, obs_dim: int, act_dim: int, config: AgentConfig, seed: int,
                 device: torch.device | str = "cpu", goal_layout: GoalLayout | None = None) -> None:
        self.adam_betas = (config.crossq_adam_beta1, 0.999)  # read by the base for the actor's Adam
        super().__init__(obs_dim, act_dim, config, seed, device, goal_layout)

    def _build_critics(self) -> None:
        cfg = self.config
        hidden = cfg.crossq_critic_hidden_sizes or cfg.hidden_sizes
        self.critic = BatchRenormCritic(self.input_dim, self.act_dim, hidden, members=2,
                                        normalize_observations=cfg.normalize_observations,
                                        momentum=cfg.crossq_batch_renorm_momentum,
                                        warmup_steps=cfg.crossq_batch_renorm_warmup_steps).to(self.device)
        self.critic_optimizer = make_adam(list(self.critic.parameters()), cfg.critic_lr, self.adam_betas)
        self._build_temperature()

    def _gradient_step(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        alpha = self.log_alpha.detach().exp()
        with torch.no_grad():
            next_actions, next_log_prob = self._sample(batch.next_obs)
        # the joint forward pass: one batch of (s, a) and (s', a'), so the normalization statistics cover both
        self.critic.train()
        q_all = self.critic(torch.cat([batch.obs, batch.next_obs]), torch.cat([batch.actions, next_actions]))
        self.critic.eval()
        q, next_q_all = q_all.split(batch.obs.shape[0], dim=1)
        with torch.no_grad():
            next_q = next_q_all.min(0).values - alpha * next_log_prob
            target_q = torch.addcmul(batch.rewards, batch.discount, next_q)
        critic_loss = F.mse_loss(q, target_q.expand_as(q)) * q.shape[0]  # the sum of the members' mean losses
        self._step(self.critic_optimizer, critic_loss)

        if (self.updates_done + 1) % self.config.crossq_policy_delay != 0:
            return critic_loss.detach(), None
        actions, log_prob = self._sample(batch.obs)
        q_pi = self.critic(batch.obs, actions).min(0).values  # eval mode: the running statistics, not updated
        actor_loss = (alpha * log_prob - q_pi).mean() + self._demo_bc_loss(batch, q_pi)
        self._step_actor(actor_loss)
        self._step_temperature(log_prob)
        return critic_loss.detach(), actor_loss.detach()

    def _critic_state(self) -> dict[str, Any]:
        return {"critic": self.critic.state_dict(), "critic_optimizer": self.critic_optimizer.state_dict(),
                **self._temperature_state()}

    def _load_critic_state(self, state: dict[str, Any]) -> None:
        self.critic.load_state_dict(state["critic"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        self._load_temperature_state(state)
