"""The discriminator rewarder: tells randomized from reference transitions; its output scores environments.

D(s, a, s') = P(the transition came from a randomized environment) (``inputs: state``: D(s'), the reached states
only). Paper: two 128-unit tanh layers, a sigmoid output, BCE (randomized = 1, reference = 0), Adam lr 2e-4, batch
128. The reward of a randomized trajectory is computed *before* the discriminator trains on it (``score`` then
``train``).

Reward definitions (``DiscriminatorConfig.reward``), for a trajectory of T transitions:
  "mean_log_d"                 1/T * sum_t log D(s_t, a_t, s_t+1)           paper eq. (1) averaged over tuples (default)
  "log_mean_d"                 log(1/T * sum_t D(s_t, a_t, s_t+1))          published code without its offset
  "log_mean_d_minus_log_half"  log(1/T * sum_t D) - log 0.5                  published code (add_pz=True)
By Jensen, mean_log_d <= log_mean_d: the paper's form punishes a trajectory for any transition that looks
like the reference, the published form only for the average.

Failure-aware reward (``failure_bonus`` beta > 0; NOT the paper's, off by default): the score above plus
beta * (1 - solved), solved in {0, 1} the env's own success rule for that trajectory, so the particles are drawn to
settings where the current policy fails as well as to settings whose dynamics differ from the reference. The
discriminator itself (its inputs, loss and training) is unchanged.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .agents.optim import FusedAdam
from .base.fields import option
from .rollout import Trajectory

REWARD_DEFINITIONS = ("mean_log_d", "log_mean_d", "log_mean_d_minus_log_half")
INPUTS = ("transition", "state")


@dataclass
class DiscriminatorConfig:
    hidden_size: int = option(128, "Units of both hidden tanh layers (paper: 128).")
    learning_rate: float = option(2e-4, "Adam learning rate (paper: 0.0002; published code: 0.003).")
    batch_size: int = option(128, "Transitions of each class per gradient step (paper: 128).")
    steps_per_transition: float = option(1.0, "Gradient steps per randomized transition collected in the iteration "
                                              "(published code: 1; the paper does not say).")
    reward: str = option("mean_log_d", "Environment score: 'mean_log_d' (paper eq. (1), mean over tuples of log D), "
                                       "'log_mean_d' or 'log_mean_d_minus_log_half' (the published code's).")
    inputs: str = option("transition", "What D sees of each step: 'transition' = (s, a, s') (paper), or 'state' = "
                                       "s' only (the states the policy reaches, not the dynamics that led there).")
    failure_bonus: float = option(0.0, "Failure-aware SVPG reward (not the paper's; 0 = off): each randomized "
                                       "trajectory's score + failure_bonus * (1 - solved), so the particles also "
                                       "seek settings where the current policy fails (docs/algorithm.md).")

    def __post_init__(self) -> None:
        if self.reward not in REWARD_DEFINITIONS:
            raise ValueError(f"discriminator.reward must be one of {REWARD_DEFINITIONS}, got {self.reward!r}")
        if self.inputs not in INPUTS:
            raise ValueError(f"discriminator.inputs must be one of {INPUTS}, got {self.inputs!r}")
        for name in ("hidden_size", "learning_rate", "batch_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"discriminator.{name} must be > 0, got {getattr(self, name)}")
        if self.steps_per_transition < 0:
            raise ValueError(f"discriminator.steps_per_transition must be >= 0, got {self.steps_per_transition}")
        if not 0.0 <= self.failure_bonus <= 100.0:
            raise ValueError(f"discriminator.failure_bonus must be in [0, 100], got {self.failure_bonus}")


class DiscriminatorNetwork(nn.Module):
    """(s, a, s') rows -> logit of D. The output layer starts small (as in the ADR code) so D starts near 0.5."""

    def __init__(self, input_dim: int, hidden_size: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(input_dim, hidden_size), nn.Tanh(),
                                  nn.Linear(hidden_size, hidden_size), nn.Tanh(), nn.Linear(hidden_size, 1))
        with torch.no_grad():
            output = cast(nn.Linear, self.body[-1])
            output.weight.mul_(0.1)
            output.bias.zero_()

    def forward(self, transitions: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.body(transitions).squeeze(-1)
        return logits


class DiscriminatorRewarder:
    def __init__(self, obs_dim: int, act_dim: int, config: DiscriminatorConfig, seed: int,
                 device: torch.device | str = "cpu") -> None:
        self.obs_dim, self.act_dim, self.config = int(obs_dim), int(act_dim), config
        self.input_dim = 2 * self.obs_dim + self.act_dim if config.inputs == "transition" else self.obs_dim
        self.device = torch.device(device)
        self.generator = torch.Generator().manual_seed(int(seed))  # batch sampling
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.network = DiscriminatorNetwork(self.input_dim, config.hidden_size).to(self.device)
        self.optimizer = FusedAdam(self.network.parameters(), lr=config.learning_rate)
        self.steps_done = 0

    # ------------------------------------------------------------------ scoring
    @torch.no_grad()
    def log_probabilities(self, trajectory: Trajectory) -> torch.Tensor:
        """log D of each transition of one trajectory, (T,)."""
        return F.logsigmoid(self.network(self._tensor([trajectory])))

    def score(self, trajectories: Sequence[Trajectory]) -> np.ndarray:
        """One reward per trajectory, (n,) float64, with the discriminator as it is now (call before ``train``)."""
        rewards = np.empty(len(trajectories), dtype=np.float64)
        for i, trajectory in enumerate(trajectories):
            if trajectory.length == 0:
                raise ValueError(f"cannot score an empty trajectory (iteration {trajectory.iteration}, "
                                 f"slot {trajectory.slot})")
            log_d = self.log_probabilities(trajectory).double()
            if self.config.reward == "mean_log_d":
                rewards[i] = log_d.mean().item()
            else:
                rewards[i] = (torch.logsumexp(log_d, 0) - math.log(trajectory.length)).item()
                if self.config.reward == "log_mean_d_minus_log_half":
                    rewards[i] -= math.log(0.5)
            if self.config.failure_bonus and not trajectory.solved:  # failure-aware (module docstring)
                rewards[i] += self.config.failure_bonus
        return rewards

    @torch.no_grad()
    def mean_probability(self, trajectories: Sequence[Trajectory]) -> float:
        """Mean D over all transitions (a diagnostic: ~1 on randomized data when it separates well)."""
        if not trajectories:
            return float("nan")
        return torch.sigmoid(self.network(self._tensor(trajectories))).mean().item()

    # ------------------------------------------------------------------ training
    def steps_for(self, randomized: Sequence[Trajectory]) -> int:
        return math.ceil(self.config.steps_per_transition * sum(t.length for t in randomized) - 1e-9)

    def train(self, randomized: Sequence[Trajectory], reference: Sequence[Trajectory],
              n_steps: int | None = None) -> dict[str, float]:
        """BCE steps on batches drawn (with replacement) from these trajectories' transitions; mean loss."""
        n_steps = self.steps_for(randomized) if n_steps is None else int(n_steps)
        if n_steps <= 0 or not randomized or not reference:
            return {"discriminator_loss": float("nan")}
        rand_rows, ref_rows = self._tensor(randomized), self._tensor(reference)
        b = self.config.batch_size
        targets = torch.cat([torch.ones(b), torch.zeros(b)]).to(self.device)
        loss_sum = torch.zeros((), device=self.device)
        for _ in range(n_steps):
            rand_index = torch.randint(len(rand_rows), (b,), generator=self.generator).to(self.device)
            ref_index = torch.randint(len(ref_rows), (b,), generator=self.generator).to(self.device)
            batch = torch.cat([rand_rows.index_select(0, rand_index), ref_rows.index_select(0, ref_index)])
            logits = self.network(batch)
            # mean BCE of each class, summed (as the ADR code): BCE(rand, 1) + BCE(ref, 0)
            loss = 2.0 * F.binary_cross_entropy_with_logits(logits, targets)
            self.optimizer.step(torch.autograd.grad(loss, self.optimizer.params))
            loss_sum += loss.detach()
        self.steps_done += n_steps
        return {"discriminator_loss": loss_sum.item() / n_steps}

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        return copy.deepcopy({"input_dim": self.input_dim, "network": self.network.state_dict(),
                              "optimizer": self.optimizer.state_dict(), "generator": self.generator.get_state(),
                              "steps_done": self.steps_done})

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("input_dim") != self.input_dim:
            raise ValueError(f"discriminator checkpoint takes {state.get('input_dim')} inputs per transition, "
                             f"this one {self.input_dim} (2 * obs_dim + act_dim)")
        state = copy.deepcopy(state)
        self.network.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.steps_done = int(state["steps_done"])

    def _tensor(self, trajectories: Sequence[Trajectory]) -> torch.Tensor:
        if self.config.inputs == "transition":
            rows = np.concatenate([t.transitions() for t in trajectories], axis=0)
        else:
            rows = np.concatenate([t.next_obs for t in trajectories], axis=0)
        if rows.shape[1] != self.input_dim:
            raise ValueError(f"transitions have {rows.shape[1]} values, the discriminator expects {self.input_dim}")
        return torch.from_numpy(rows).to(self.device)
