"""Agent hyperparameters; defaults are the paper's (appendix "Network Architectures and Experimental Hyperparameters")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..training.fields import option


@dataclass
class AgentConfig:
    algorithm: Literal["ddpg", "td3"] = option("ddpg", "Agent: 'ddpg' (paper; TD3 repository's OurDDPG.py) or 'td3'.")
    hidden_sizes: tuple[int, ...] = option((400, 300), "Hidden layer sizes of actor and critic (paper: 400, 300; ReLU).")
    actor_lr: float = option(1e-3, "Adam learning rate of the actor (paper: 0.001).")
    critic_lr: float = option(1e-3, "Adam learning rate of the critic (paper: 0.001).")
    tau: float = option(0.005, "Target-network soft update coefficient (paper: 0.005).")
    gamma: float = option(0.99, "Discount factor (paper: 0.99).")
    batch_size: int = option(1000, "Replay batch size of one gradient step (paper: 1000; the published code used 100).")
    learning_starts: int = option(1000, "Agent steps collected before the first update (paper: 1000).")
    updates_per_step: float = option(1.0, "Gradient steps per collected agent step (paper: 1).")
    exploration_noise: float = option(0.1, "Std of the Gaussian noise added to actions in randomized rollouts "
                                            "(actions in [-1, 1]; OurDDPG and the ADR code: 0.1).")
    buffer_capacity: int = option(1_000_000, "Replay capacity in transitions (OurDDPG: 1e6).")
    td3_policy_noise: float = option(0.2, "TD3 only: std of the target policy smoothing noise.")
    td3_noise_clip: float = option(0.5, "TD3 only: clip of the target policy smoothing noise.")
    td3_policy_delay: int = option(2, "TD3 only: critic steps per actor (and target) update.")

    def __post_init__(self) -> None:
        self.hidden_sizes = tuple(int(h) for h in self.hidden_sizes)
        if self.algorithm not in ("ddpg", "td3"):
            raise ValueError(f"agent.algorithm must be 'ddpg' or 'td3', got {self.algorithm!r}")
        for name in ("actor_lr", "critic_lr", "batch_size", "buffer_capacity", "td3_policy_delay"):
            if getattr(self, name) <= 0:
                raise ValueError(f"agent.{name} must be > 0, got {getattr(self, name)}")
        for name in ("tau", "gamma"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"agent.{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("learning_starts", "updates_per_step", "exploration_noise", "td3_policy_noise", "td3_noise_clip"):
            if getattr(self, name) < 0:
                raise ValueError(f"agent.{name} must be >= 0, got {getattr(self, name)}")
        if not self.hidden_sizes or min(self.hidden_sizes) < 1:
            raise ValueError(f"agent.hidden_sizes must be positive sizes, got {self.hidden_sizes}")
