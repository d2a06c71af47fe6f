"""ADR for stable-baselines3: a callback that updates an ``ADRLoop`` whenever its batch is complete.

    from adr_core import ADRLoop, ADRWrapper
    from adr_core.integrations.sb3 import ADRCallback

    loop = ADRLoop.from_config(TrainConfig(env_id="adr/LunarLander-v0", sampler="adr", seed=0))
    model = SAC("MlpPolicy", ADRWrapper(make_env("adr/LunarLander-v0"), loop))
    model.learn(200_000, callback=ADRCallback(loop))

Works with any SB3 algorithm and any number of wrapped envs in one process (``DummyVecEnv`` of ``ADRWrapper``s
sharing the loop). ``SubprocVecEnv`` is refused at construction: its workers would hold copies of the loop whose
particles and discriminator never update the original. The reference episodes are rolled out with
``model.predict(obs, deterministic=False)``: the learner's own behaviour, so the discriminator compares dynamics
rather than exploration. The loop's statistics are logged under ``adr/`` (TensorBoard, SB3's logger).
stable-baselines3 is optional: only this module imports it.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..adr_loop import ADRLoop


class ADRCallback(BaseCallback):
    """Calls ``loop.update`` whenever the loop's batch is complete, with the model's own policy for the reference
    episodes (``model.predict(obs, deterministic=deterministic_reference)``), and logs the loop's statistics under
    ``adr/`` in SB3's logger. ``updates``: how many iterations it ran. Pass it to ``model.learn(..., callback=...)``;
    without it the loop never updates (and warns after a few batches' worth of episodes). With ``VecNormalize``
    the reference episodes' observations are normalized with its current statistics before ``predict``."""

    def __init__(self, loop: ADRLoop, deterministic_reference: bool = False, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.loop = loop
        self.deterministic_reference = deterministic_reference
        self.updates = 0

    def _policy(self, obs: np.ndarray) -> np.ndarray:
        """The model's action for a raw observation of the loop's bare reference env: normalized first when the
        model trains behind a ``VecNormalize`` (as SB3's own ``evaluate_policy`` does), so the reference policy
        sees what the learner sees."""
        normalizer = self.model.get_vec_normalize_env()
        seen = obs if normalizer is None else normalizer.normalize_obs(obs)
        action, _ = self.model.predict(seen, deterministic=self.deterministic_reference)
        return np.asarray(action, dtype=np.float32)

    def _on_step(self) -> bool:
        if self.loop.ready:
            metrics: dict[str, Any] = self.loop.update(self._policy, exploration_noise=0.0)
            self.updates += 1
            for key, value in metrics.items():
                self.logger.record(f"adr/{key}", value)
            if self.verbose:
                print(f"ADR iteration {int(metrics['iteration'])}: return {metrics['return_mean']:.1f}"
                      + (f", discriminator reward {metrics['sampler_reward_mean']:.3f}"
                         if "sampler_reward_mean" in metrics else ""))
        return True
