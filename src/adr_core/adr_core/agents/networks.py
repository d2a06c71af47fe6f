"""The agent's networks (paper appendix: actor and critic, 400-300 ReLU).

Kept free of optimizers and replay so that a simulator process can rebuild the actor from plain weights
(``actor_from_state_dict``) and run it with ``ActorPolicy``.

An ``Actor`` may carry a Gaussian head (SAC): ``log_std`` beside the mean layer. Its deterministic action is
``tanh(mean)`` either way, so evaluation and deployment run every agent's actor the same way; only exploring
rollouts (``ActorPolicy.explore``) sample ``tanh(mean + std * eps)`` from it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..base.history import History, HistoryError, HistorySpec

PAPER_HIDDEN_SIZES = (400, 300)
OBS_CLIP = 10.0  # normalized observations are clipped to +-10 standard deviations
OBS_STD_FLOOR = 0.01  # a feature's std is taken as at least this (HER's baselines normalizer: eps 0.01)


class ObservationNormalized(nn.Module):
    """A network whose input may go through an observation normalization: ``clip((obs - obs_shift) * obs_scale,
    +-OBS_CLIP)``. The two vectors are buffers (identity until ``set_observation_normalization``), registered only
    when asked for: optimizers and soft updates leave them alone; state dicts (checkpoints, the graph's weights,
    exports) carry them."""

    normalizes: bool
    obs_shift: torch.Tensor
    obs_scale: torch.Tensor

    def _init_observation_normalization(self, obs_dim: int, enabled: bool) -> None:
        self.normalizes = bool(enabled)
        if self.normalizes:
            self.register_buffer("obs_shift", torch.zeros(int(obs_dim)))
            self.register_buffer("obs_scale", torch.ones(int(obs_dim)))

    def normalized(self, obs: torch.Tensor) -> torch.Tensor:
        if not self.normalizes:
            return obs
        return torch.clamp((obs - self.obs_shift) * self.obs_scale, -OBS_CLIP, OBS_CLIP)

    @torch.no_grad()
    def set_observation_normalization(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        """Shift to ``mean``, scale to ``1 / max(std, OBS_STD_FLOOR)``."""
        self.obs_shift.copy_(mean)
        self.obs_scale.copy_(1.0 / std.clamp_min(OBS_STD_FLOOR))


def _mlp_layers(in_dim: int, hidden_sizes: Sequence[int], out_dim: int) -> nn.ModuleList:
    sizes = [in_dim, *hidden_sizes, out_dim]
    return nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))


LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0  # the Gaussian head's range (CleanRL's SAC)


class Actor(ObservationNormalized):
    """Policy ``obs -> tanh(mean)`` with actions in [-1, 1] (paper: 'clip the max action ... [-1, 1]').

    ``gaussian=True`` adds the ``log_std`` head of a squashed Gaussian policy (SAC); ``normalize_observations=True``
    the observation normalization (``obs_shift``, ``obs_scale``) its input goes through first; ``history`` makes it
    a policy with memory: its input is the observation and the last steps' (``adr_core.base.history``), and the
    ``history_spec`` buffer carries the description with the weights. ``obs_dim`` is the env's observation size,
    ``input_dim`` what the network reads.
    """

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES,
                 gaussian: bool = False, normalize_observations: bool = False,
                 history: HistorySpec | None = None) -> None:
        super().__init__()
        self.obs_dim, self.act_dim, self.hidden_sizes = int(obs_dim), int(act_dim), tuple(int(h) for h in hidden_sizes)
        self.history = history
        if history is not None:
            if (history.obs_dim, history.act_dim) != (self.obs_dim, self.act_dim):
                raise HistoryError(f"history of {history.obs_dim} -> {history.act_dim} for an actor of "
                                   f"{self.obs_dim} -> {self.act_dim}")
            self.register_buffer("history_spec", torch.from_numpy(history.to_vector()))
        self.input_dim = history.input_dim if history is not None else self.obs_dim
        self._init_observation_normalization(self.input_dim, normalize_observations)
        self.layers = _mlp_layers(self.input_dim, self.hidden_sizes, self.act_dim)
        # a plain tuple of the same modules (a tuple is not registered: state_dict keeps its keys); slicing the
        # ModuleList builds a new ModuleList on every call, ~4 % of a SAC gradient step of 128-128 networks
        self._chain = tuple(self.layers)
        self.gaussian = bool(gaussian)
        if self.gaussian:
            self.log_std = nn.Linear(self.hidden_sizes[-1], self.act_dim)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        x = self.normalized(obs)
        for layer in self._chain[:-1]:
            x = F.relu(layer(x))
        return x

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self._chain[-1](self.features(obs)))

    def mean_log_std(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Pre-squash mean and log std (in [LOG_STD_MIN, LOG_STD_MAX]) of the Gaussian head."""
        h = self.features(obs)
        log_std = torch.tanh(self.log_std(h))
        return self._chain[-1](h), LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1.0)


class EnsembleCritic(ObservationNormalized):
    """``members`` critics Q(s, a) evaluated together with batched matrix products: one op per layer for all.

    Each member is initialized like ``nn.Linear`` layers (uniform in +-1/sqrt(fan_in)).
    """

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES,
                 members: int = 2, normalize_observations: bool = False) -> None:
        super().__init__()
        sizes = [int(obs_dim) + int(act_dim), *(int(h) for h in hidden_sizes), 1]
        self.members = int(members)
        self._init_observation_normalization(int(obs_dim), normalize_observations)
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / math.sqrt(fan_in)
            self.weights.append(nn.Parameter(torch.empty(members, fan_in, fan_out).uniform_(-bound, bound)))
            self.biases.append(nn.Parameter(torch.empty(members, 1, fan_out).uniform_(-bound, bound)))
        self._bind()

    def _bind(self) -> None:
        """A plain tuple of (hidden layers, last layer) parameter pairs: iterating a ParameterList indexes it
        element by element through Python (~4 % of a SAC gradient step of 64-64 networks)."""
        pairs = tuple(zip(self.weights, self.biases))
        self._hidden, self._last = pairs[:-1], pairs[-1]

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> EnsembleCritic:
        """As ``nn.Module._apply``, then the tuple again: ``.to()``/``.cuda()`` may replace the Parameters."""
        module = super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        self._bind()
        return cast("EnsembleCritic", module)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """(members, B, 1) values."""
        x = torch.cat([self.normalized(obs), action], dim=-1).expand(self.members, -1, -1)
        for weight, bias in self._hidden:
            x = F.relu(torch.baddbmm(bias, x, weight))
        weight, bias = self._last
        return torch.baddbmm(bias, x, weight)


class Critic(ObservationNormalized):
    """Q(s, a) on the concatenation [s, a]."""

    def __init__(self, obs_dim: int, act_dim: int, hidden_sizes: Sequence[int] = PAPER_HIDDEN_SIZES,
                 normalize_observations: bool = False) -> None:
        super().__init__()
        self.layers = _mlp_layers(int(obs_dim) + int(act_dim), tuple(hidden_sizes), 1)
        self._chain = tuple(self.layers)  # as Actor's
        self._init_observation_normalization(int(obs_dim), normalize_observations)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.normalized(obs), action], dim=-1)
        for layer in self._chain[:-1]:
            x = F.relu(layer(x))
        q: torch.Tensor = self._chain[-1](x)
        return q


class ActorStateError(ValueError):
    """Actor weights that do not describe an ``Actor``."""


def actor_from_state_dict(state: Mapping[str, torch.Tensor]) -> Actor:
    """Rebuild an ``Actor`` (on CPU, float32) from its ``state_dict``; the sizes are read from the weights."""
    weight_keys = sorted((k for k in state if k.startswith("layers.") and k.endswith(".weight")),
                         key=lambda k: int(k.split(".")[1]))
    if len(weight_keys) < 2:
        raise ActorStateError(f"actor weights need at least two 'layers.<i>.weight' entries, got keys {sorted(state)}")
    shapes = [tuple(state[k].shape) for k in weight_keys]
    for (out_a, _), (_, in_b) in zip(shapes[:-1], shapes[1:]):
        if out_a != in_b:
            raise ActorStateError(f"actor weight shapes do not chain: {shapes}")
    history = None
    if "history_spec" in state:
        try:
            history = HistorySpec.from_vector(state["history_spec"].detach().cpu().numpy())
        except HistoryError as error:
            raise ActorStateError(f"actor weights: {error}") from None
        if history.input_dim != shapes[0][1] or history.act_dim != shapes[-1][0]:
            raise ActorStateError(f"actor weights: a history of {history.input_dim} inputs for a first layer of "
                                  f"{shapes[0][1]}")
    actor = Actor(obs_dim=shapes[0][1] if history is None else history.obs_dim, act_dim=shapes[-1][0],
                  hidden_sizes=[s[0] for s in shapes[:-1]], gaussian="log_std.weight" in state,
                  normalize_observations="obs_shift" in state, history=history)
    try:
        actor.load_state_dict({k: v.detach().to("cpu", torch.float32) for k, v in state.items()})
    except RuntimeError as exc:
        raise ActorStateError(f"actor weights do not match an Actor{shapes}: {exc}") from None
    return actor.eval()


class ActorPolicy:
    """A numpy-in, numpy-out deterministic policy around an ``Actor`` (what a simulator process runs).

    Rollouts feed one observation at a time, where torch's per-call overhead (~5 us an op) dwarfs the arithmetic of
    a small network; the forward pass therefore runs in numpy (float32) on copies of the weights taken here. The
    result matches the torch actor to float32 rounding; the same weights give the same actions in every process.
    Build a new ``ActorPolicy`` for new weights (``from_state_dict``): later changes to ``actor`` are not seen.

    A policy with memory (the actor's ``history``) keeps the episode's history itself: ``begin_episode(obs)`` at
    each reset and ``remember(obs, action)`` after each step (``adr_core.rollout`` calls both; both do nothing for
    a memoryless actor); called with one plain observation it acts on the history's input, called with inputs of
    ``input_dim`` values (a batch of recorded steps) it reads them as they are.
    """

    def __init__(self, actor: Actor) -> None:
        self.actor = actor.eval()
        self._history = History(actor.history) if actor.history is not None else None
        layers = [(layer.weight.detach().to("cpu", torch.float32).numpy().T.copy(),
                   layer.bias.detach().to("cpu", torch.float32).numpy().copy())
                  for layer in cast("Iterable[nn.Linear]", actor.layers)]
        self._hidden, self._mean = layers[:-1], layers[-1]
        self._normalization: tuple[np.ndarray, np.ndarray] | None = None
        if actor.normalizes:
            self._normalization = (actor.obs_shift.detach().to("cpu", torch.float32).numpy().copy(),
                                   actor.obs_scale.detach().to("cpu", torch.float32).numpy().copy())
        self._log_std: tuple[np.ndarray, np.ndarray] | None = None
        if actor.gaussian:
            self._log_std = (actor.log_std.weight.detach().to("cpu", torch.float32).numpy().T.copy(),
                             actor.log_std.bias.detach().to("cpu", torch.float32).numpy().copy())

    @classmethod
    def from_state_dict(cls, state: Mapping[str, torch.Tensor]) -> ActorPolicy:
        return cls(actor_from_state_dict(state))

    @property
    def gaussian(self) -> bool:
        return self.actor.gaussian

    def begin_episode(self, obs: np.ndarray) -> None:
        if self._history is not None:
            self._history.reset(obs)

    def remember(self, obs: np.ndarray, action: np.ndarray) -> None:
        if self._history is not None:
            self._history.push(obs, action)

    def _features(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32)
        if self._history is not None and x.shape[-1] != self.actor.input_dim:
            if x.ndim != 1:
                raise HistoryError(f"a policy with memory takes one observation at a time or inputs of "
                                   f"{self.actor.input_dim} values, got shape {x.shape}")
            x = self._history.input(x)
        if self._normalization is not None:
            shift, scale = self._normalization
            x = np.clip((x - shift) * scale, -OBS_CLIP, OBS_CLIP)
        for weight, bias in self._hidden:
            x = x @ weight
            x += bias
            np.maximum(x, 0.0, out=x)
        return x

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        weight, bias = self._mean
        action: np.ndarray = np.tanh(self._features(obs) @ weight + bias)
        return action

    def explore(self, obs: np.ndarray, rng: np.random.Generator, scale: float) -> np.ndarray:
        """An exploring action (float64; the caller clips it to the action space).

        Deterministic actor: ``mu(obs) + N(0, scale^2)`` (DDPG/TD3). Gaussian actor: ``tanh(mean + scale * std * eps)``,
        so ``scale`` 1 samples the SAC policy itself. ``eps`` comes from ``rng`` in both cases.
        """
        if self._log_std is None:
            action = np.asarray(self(obs), dtype=np.float64)
            return action + rng.normal(0.0, scale, size=action.shape)
        h = self._features(obs)
        mean = (h @ self._mean[0] + self._mean[1]).astype(np.float64)
        log_std = np.tanh((h @ self._log_std[0] + self._log_std[1]).astype(np.float64))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1.0)
        sample: np.ndarray = np.tanh(mean + scale * np.exp(log_std) * rng.normal(0.0, 1.0, size=mean.shape))
        return sample
