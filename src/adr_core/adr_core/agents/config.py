"""Agent hyperparameters; defaults are the paper's (appendix "Network Architectures and Experimental
Hyperparameters")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ..base.fields import option

ALGORITHMS = ("ddpg", "td3", "sac", "crossq")


@dataclass
class AgentConfig:
    algorithm: Literal["ddpg", "td3", "sac", "crossq"] = option(
        "ddpg", "Agent: 'ddpg' (paper; TD3 repository's OurDDPG.py), 'td3', 'sac' (squashed Gaussian actor, "
                "automatic entropy temperature) or 'crossq' (SAC's actor and temperature, batch-renormalized critics "
                "without targets; Bhatt et al. 2024, sb3-contrib's CrossQ).")
    hidden_sizes: tuple[int, ...] = option(
        (400, 300), "Hidden layer sizes of actor and critic (paper: 400, 300; ReLU)."
    )
    actor_lr: float = option(1e-3, "Adam learning rate of the actor (paper: 0.001).")
    critic_lr: float = option(1e-3, "Adam learning rate of the critic (paper: 0.001).")
    lr_schedule: Literal["constant", "linear"] = option(
        "constant", "Learning rates over the run: 'constant' (paper) or 'linear' (each rate times 1 - agent steps / "
                    "total_agent_steps, RL-zoo's lin_ schedules).")
    tau: float = option(0.005, "Target-network soft update coefficient (paper: 0.005).")
    gamma: float = option(0.99, "Discount factor (paper: 0.99).")
    n_step: int = option(1, "n-step returns: each stored transition sums up to n discounted rewards and bootstraps "
                            "from the state n steps later (paper: 1).")
    batch_size: int = option(1000, "Replay batch size of one gradient step (paper: 1000; the published code used 100).")
    learning_starts: int = option(1000, "Agent steps collected before the first update (paper: 1000).")
    updates_per_step: float = option(1.0, "Gradient steps per collected agent step (paper: 1).")
    exploration_noise: float = option(0.1, "Std of the Gaussian noise added to actions in randomized rollouts "
                                            "(actions in [-1, 1]; OurDDPG and the ADR code: 0.1). SAC: the scale "
                                            "of its own policy std when sampling (1 = the SAC policy; 0 = "
                                            "deterministic).")
    buffer_capacity: int = option(1_000_000, "Replay capacity in transitions (OurDDPG: 1e6).")
    her_future: int = option(0, "Goal relabelling (HER, Andrychowicz et al. 2017, 'future' strategy; not in the "
                                "paper): every stored transition is stored this many more times, each copy with the "
                                "goal replaced by what the episode achieved at a later step and the reward "
                                "recomputed for it. 0 = off. Envs with a goal layout only (the Pusher and Ergo envs).")
    shaping_weight: float = option(0.0, "Potential-based reward shaping (Ng et al. 1999; not in the paper): the agent "
                                        "learns from r + gamma*phi(s') - phi(s), phi = -weight * ||tip - puck|| (the "
                                        "env's effector to what it moves); the optimal policy is unchanged, reported "
                                        "returns are the env's. 0 = off. Envs whose goal layout names an effector.")
    shaping_target: Literal["object", "behind"] = option(
        "object", "Where potential shaping pulls the effector: 'object' (to what it moves: the puck) or 'behind' (to "
                  "the point behind the puck on the line from the goal through it, where a push moves it toward the "
                  "goal; the env's goal layout says how far behind).")
    normalize_observations: bool = option(
        False, "Observation normalization (not in the paper; HER's and the Fetch baselines' practice): the actor and "
               "critics see each observation feature shifted and scaled by the mean and std of the replay's rows when "
               "the first gradient step runs (the learning_starts warm-up), frozen after, clipped to +-10 std. The "
               "actor's weights carry it (checkpoints, the graph's policy messages, exports).")
    history_steps: int = option(
        0, "Policy with memory (not in the paper; Peng et al. 2018's pushing policies that transferred had memory): "
           "the actor and critics read the observation and, for each of the last this many steps, that step's "
           "observation without the goal and the action taken (adr_core.base.history); checkpoints, the graph's "
           "weights and exports carry it, and the arm's policy runner keeps the history. 0 = memoryless (the paper).")
    demonstrations: str = option(
        "", "An .npz of demonstration episodes (adr_core.agents.demonstrations: recorded in this env by any "
            "controller), kept in a replay buffer of their own and mixed into every batch at demo_fraction; they go "
            "through the agent's own storing path (history, shaping, n-step, relabelling). Empty: none (the paper).")
    demo_fraction: float = option(
        0.25, "Share of each gradient step's batch drawn from the demonstrations, in [0, 1) (Nair et al. 2018 kept "
              "about 1/8; RLPD 1/2); used only with demonstrations.")
    demo_bc_weight: float = option(
        0.0, "SAC and CrossQ with demonstrations: weight of a behaviour-cloning term in the actor's loss, the squared "
             "distance of the actor's mean action to each demonstration action in the batch, counted only where the "
             "critic rates the demonstration's action above the actor's (Nair et al. 2018's Q-filter). 0: off.")
    td3_policy_noise: float = option(0.2, "TD3 only: std of the target policy smoothing noise.")
    td3_noise_clip: float = option(0.5, "TD3 only: clip of the target policy smoothing noise.")
    td3_policy_delay: int = option(2, "TD3 only: critic steps per actor (and target) update.")
    sac_initial_alpha: float = option(1.0, "SAC only: initial entropy temperature (then tuned toward the target "
                                           "entropy).")
    sac_target_entropy_per_dim: float = option(
        -1.0, "SAC only: target entropy per action dimension, in nats (-1: the target -act_dim of the SAC paper and "
              "SB3's 'auto'); higher keeps the policy more random. Below log 2 (a squashed Gaussian's maximum). "
              "CrossQ uses both SAC options.")
    crossq_policy_delay: int = option(3, "CrossQ only: critic steps per actor and temperature step (paper and "
                                         "sb3-contrib: 3).")
    crossq_critic_hidden_sizes: tuple[int, ...] = option(
        (), "CrossQ only: hidden layer sizes of the critics; empty = hidden_sizes (the paper's critics are 2048 "
            "wide, sb3-contrib's 1024).")
    crossq_batch_renorm_momentum: float = option(
        0.01, "CrossQ only: rate of the critics' batch renormalization running statistics, in (0, 1] (paper and "
              "sb3-contrib: 0.01).")
    crossq_batch_renorm_warmup_steps: int = option(
        100_000, "CrossQ only: gradient steps of plain batch normalization before batch renormalization (rmax 3, "
                 "dmax 5) starts (sb3-contrib: 100000).")
    crossq_adam_beta1: float = option(0.5, "CrossQ only: Adam's beta1 of the actor and critics, in [0, 1) (paper "
                                           "and sb3-contrib: 0.5; the temperature's Adam keeps 0.9).")

    def __post_init__(self) -> None:
        self.hidden_sizes = tuple(int(h) for h in self.hidden_sizes)
        self.crossq_critic_hidden_sizes = tuple(int(h) for h in self.crossq_critic_hidden_sizes)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"agent.algorithm must be one of {list(ALGORITHMS)}, got {self.algorithm!r}")
        for name in ("actor_lr", "critic_lr", "batch_size", "buffer_capacity", "td3_policy_delay",
                     "sac_initial_alpha", "crossq_policy_delay"):
            if getattr(self, name) <= 0:
                raise ValueError(f"agent.{name} must be > 0, got {getattr(self, name)}")
        for name in ("tau", "gamma"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"agent.{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("learning_starts", "updates_per_step", "exploration_noise", "td3_policy_noise", "td3_noise_clip"):
            if getattr(self, name) < 0:
                raise ValueError(f"agent.{name} must be >= 0, got {getattr(self, name)}")
        if not -20.0 <= self.sac_target_entropy_per_dim < math.log(2.0):
            raise ValueError(f"agent.sac_target_entropy_per_dim must be in [-20, log 2 = 0.693) nats, got "
                             f"{self.sac_target_entropy_per_dim}: a policy on (-1, 1) cannot have more entropy than "
                             f"log 2 per dimension")
        if self.lr_schedule not in ("constant", "linear"):
            raise ValueError(f"agent.lr_schedule must be 'constant' or 'linear', got {self.lr_schedule!r}")
        if not 0 <= self.history_steps <= 16:
            raise ValueError(f"agent.history_steps must be in [0, 16] past steps, got {self.history_steps}")
        if not 0.0 <= self.demo_fraction < 1.0:
            raise ValueError(f"agent.demo_fraction must be in [0, 1) (a share of each batch), got {self.demo_fraction}")
        if not (math.isfinite(self.demo_bc_weight) and self.demo_bc_weight >= 0):
            raise ValueError(f"agent.demo_bc_weight must be a finite number >= 0, got {self.demo_bc_weight}")
        if self.demo_bc_weight and not (self.demonstrations and self.demo_fraction > 0):
            raise ValueError("agent.demo_bc_weight needs agent.demonstrations and agent.demo_fraction > 0 (it clones "
                             "the demonstration rows of each batch)")
        if self.demo_bc_weight and self.algorithm not in ("sac", "crossq"):
            raise ValueError(f"agent.demo_bc_weight: SAC and CrossQ only, got agent.algorithm {self.algorithm!r}")
        if not 0 <= self.her_future <= 16:
            raise ValueError(f"agent.her_future must be in [0, 16] relabelled copies per transition, got "
                             f"{self.her_future}")
        if self.shaping_target not in ("object", "behind"):
            raise ValueError(f"agent.shaping_target must be 'object' or 'behind', got {self.shaping_target!r}")
        if not (math.isfinite(self.shaping_weight) and self.shaping_weight >= 0):
            raise ValueError(f"agent.shaping_weight must be a finite number >= 0, got {self.shaping_weight}")
        if self.n_step < 1:
            raise ValueError(f"agent.n_step must be >= 1 (1 = one-step TD targets), got {self.n_step}")
        if self.batch_size > self.buffer_capacity:
            raise ValueError(f"agent.batch_size {self.batch_size} exceeds agent.buffer_capacity "
                             f"{self.buffer_capacity}; the batch must fit in the replay buffer")
        if not self.hidden_sizes or min(self.hidden_sizes) < 1:
            raise ValueError(f"agent.hidden_sizes must be positive sizes, got {self.hidden_sizes}")
        if self.crossq_critic_hidden_sizes and min(self.crossq_critic_hidden_sizes) < 1:
            raise ValueError(f"agent.crossq_critic_hidden_sizes must be positive sizes (or empty: hidden_sizes), "
                             f"got {self.crossq_critic_hidden_sizes}")
        if not 0.0 < self.crossq_batch_renorm_momentum <= 1.0:
            raise ValueError(f"agent.crossq_batch_renorm_momentum must be in (0, 1], got "
                             f"{self.crossq_batch_renorm_momentum}")
        if self.crossq_batch_renorm_warmup_steps < 0:
            raise ValueError(f"agent.crossq_batch_renorm_warmup_steps must be >= 0, got "
                             f"{self.crossq_batch_renorm_warmup_steps}")
        if not 0.0 <= self.crossq_adam_beta1 < 1.0:
            raise ValueError(f"agent.crossq_adam_beta1 must be in [0, 1), got {self.crossq_adam_beta1}")
