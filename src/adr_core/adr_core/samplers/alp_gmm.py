"""ALP-GMM (Portelas, Colas, Hofmann, Oudeyer, "Teacher algorithms for curriculum learning of Deep RL in continuously
parameterized environments", CoRL 2019; the TeachMyAgent benchmark's reference implementation): sample the settings
where the policy's competence is changing.

- Each finished episode at setting x with competence c (here its task score: 1.0 when the env's success rule says
  solved, else 0.0) gets an absolute learning progress ALP = |c - c_old|, with c_old the competence of the nearest
  setting of the history (the earlier episodes); then (x, c) joins the history.
- Every ``fit_rate`` episodes, Gaussian mixtures are fit to the last ``window`` (x, ALP) points
  (``sklearn.mixture.GaussianMixture``, full covariances) with 2 .. ``max_components`` components, and the one with the
  lowest AIC is kept.
- A proposal is uniform with probability ``random_share`` (and always before the first fit); otherwise a component
  is drawn with probability proportional to its mean ALP and x from its Gaussian (the ALP coordinate dropped), clipped
  to the unit cube.
Constants (defaults, TeachMyAgent's ALP-GMM): fit_rate 250, max_components 10 (ks 2..10), random_share 0.2, AIC; the
window 500 keeps the fit on the recent policy (TeachMyAgent fits on its whole history; with one episode per setting
and many settings per iteration here, a window follows a changing policy faster).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..base.fields import option
from ..randomization import RandomizationSpace
from .base import Sampler, SamplerError


@dataclass
class ALPGMMConfig:
    fit_rate: int = option(250, "alp_gmm: episodes between two fits of the mixtures (TeachMyAgent: 250).")
    window: int = option(500, "alp_gmm: the most recent (setting, ALP) points the mixtures are fit to.")
    max_components: int = option(10, "alp_gmm: mixtures of 2 .. this many components are fit; the lowest AIC wins.")
    random_share: float = option(0.2, "alp_gmm: share of proposals drawn uniformly (TeachMyAgent: 0.2).")
    criterion: str = option("aic", "alp_gmm: how the number of components is chosen: 'aic' or 'bic'.")

    def __post_init__(self) -> None:
        if self.fit_rate < 1 or self.window < 2:
            raise ValueError(f"alp_gmm.fit_rate must be >= 1 and alp_gmm.window >= 2, got {self.fit_rate} and "
                             f"{self.window}")
        if not 2 <= self.max_components <= 50:
            raise ValueError(f"alp_gmm.max_components must be in [2, 50], got {self.max_components}")
        if not 0.0 <= self.random_share <= 1.0:
            raise ValueError(f"alp_gmm.random_share must be in [0, 1], got {self.random_share}")
        if self.criterion not in ("aic", "bic"):
            raise ValueError(f"alp_gmm.criterion must be 'aic' or 'bic', got {self.criterion!r}")


class ALPGMMSampler(Sampler):
    name = "alp_gmm"
    learns_from_outcomes = True
    METRICS = ("alp_mean", "alp_gmm_components", "alp_gmm_focused_share")

    def __init__(self, space: RandomizationSpace, config: ALPGMMConfig, num_proposals: int, seed: int) -> None:
        try:
            import sklearn.mixture  # noqa: F401 - checked now, used at the first fit
        except ModuleNotFoundError:
            raise SamplerError("sampler alp_gmm needs scikit-learn, which is not installed: pip install "
                               "'adr_core[samplers]' (or the project's make setup)") from None
        self.space, self.config, self._n = space, config, int(num_proposals)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
        d = space.ndim
        self.history = np.zeros((0, d))  # settings played
        self.competence = np.zeros(0)  # their task scores
        self.alp_points = np.zeros((0, d + 1))  # (setting, ALP), the fit's data
        self.since_fit = 0
        self.means = np.zeros((0, d + 1))  # the kept mixture: weights, means, covariances
        self.covariances = np.zeros((0, d + 1, d + 1))
        self.weights = np.zeros(0)
        self._pending: np.ndarray | None = None
        self._focused = 0

    @property
    def num_proposals(self) -> int:
        return self._n

    @property
    def fitted(self) -> bool:
        return len(self.weights) > 0

    def propose(self) -> np.ndarray:
        d = self.space.ndim
        proposals = self.rng.random((self._n, d))
        self._focused = 0
        if self.fitted:
            alp = np.maximum(self.means[:, -1], 0.0)
            total = alp.sum()
            probabilities = alp / total if total > 0 else np.full(len(alp), 1.0 / len(alp))
            for i in range(self._n):
                if self.rng.random() < self.config.random_share:
                    continue
                k = self.rng.choice(len(probabilities), p=probabilities)
                sample = self.rng.multivariate_normal(self.means[k], self.covariances[k], method="eigh")
                proposals[i] = np.clip(sample[:d], 0.0, 1.0)
                self._focused += 1
        self._pending = proposals.copy()
        return proposals

    def update(self, rewards: np.ndarray) -> dict[str, float]:
        if self._pending is None:
            raise SamplerError("alp_gmm: update without a propose")
        scores = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if scores.shape != (self._n,) or not np.all(np.isfinite(scores)):
            raise SamplerError(f"alp_gmm: expected {self._n} finite task scores, got {scores.tolist()}")
        alps = []
        for x, c in zip(self._pending, scores):
            if len(self.competence):
                nearest = int(np.argmin(np.linalg.norm(self.history - x, axis=1)))
                alps.append(abs(c - self.competence[nearest]))
            else:
                alps.append(0.0)
            self.history = np.vstack([self.history, x])
            self.competence = np.append(self.competence, c)
        new_points = np.column_stack([self._pending, alps])
        self.alp_points = np.vstack([self.alp_points, new_points])[-self.config.window:]
        self.since_fit += self._n
        if self.since_fit >= self.config.fit_rate and len(self.alp_points) >= 4:
            self._fit()
            self.since_fit = 0
        self._pending = None
        return {"alp_mean": float(np.mean(alps)), "alp_gmm_components": float(len(self.weights)),
                "alp_gmm_focused_share": self._focused / self._n}

    def _fit(self) -> None:
        from sklearn.mixture import GaussianMixture

        data = self.alp_points
        best: tuple[float, Any] | None = None
        seed = int(self.rng.integers(2**31 - 1))
        for k in range(2, min(self.config.max_components, len(data) - 1) + 1):
            mixture = GaussianMixture(n_components=k, covariance_type="full", random_state=seed, reg_covar=1e-6)
            mixture.fit(data)
            score = mixture.aic(data) if self.config.criterion == "aic" else mixture.bic(data)
            if best is None or score < best[0]:
                best = (score, mixture)
        if best is None or not math.isfinite(best[0]):
            return
        mixture = best[1]
        self.weights = np.asarray(mixture.weights_, dtype=np.float64)
        self.means = np.asarray(mixture.means_, dtype=np.float64)
        self.covariances = np.asarray(mixture.covariances_, dtype=np.float64)

    def mixture(self) -> dict[str, np.ndarray]:
        """The kept mixture (report, viewer): weights, means and covariances over (setting, ALP)."""
        return {"weights": self.weights.copy(), "means": self.means.copy(), "covariances": self.covariances.copy()}

    def state_dict(self) -> dict[str, Any]:
        """Plain data and float64 tensors (checkpoints are read with weights_only=True)."""
        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64).copy())

        return {"sampler": self.name, "rng": self.rng.bit_generator.state, "history": tensor(self.history),
                "competence": tensor(self.competence), "alp_points": tensor(self.alp_points),
                "since_fit": self.since_fit, "weights": tensor(self.weights), "means": tensor(self.means),
                "covariances": tensor(self.covariances),
                "pending": None if self._pending is None else tensor(self._pending), "focused": self._focused}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._check_state_kind(state)
        d = self.space.ndim

        def array(name: str, *shape: int) -> np.ndarray:
            value = np.asarray(state[name], dtype=np.float64)
            return value.reshape(-1, *shape) if shape else value.reshape(-1)

        history = array("history", d)
        if history.shape[1] != d:
            raise SamplerError(f"alp_gmm checkpoint is for {history.shape[1]} dimensions, this space {d}")
        self.rng.bit_generator.state = state["rng"]
        self.history, self.competence = history, array("competence")
        self.alp_points = array("alp_points", d + 1)
        self.since_fit = int(state["since_fit"])
        self.weights, self.means = array("weights"), array("means", d + 1)
        self.covariances = array("covariances", d + 1, d + 1)
        pending = state["pending"]
        self._pending = None if pending is None else np.asarray(pending, dtype=np.float64)
        self._focused = int(state["focused"])
