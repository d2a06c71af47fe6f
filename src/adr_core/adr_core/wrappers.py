"""``ADRWrapper``: a gymnasium wrapper that runs every episode at the setting an ``ADRLoop`` chooses and hands the
finished episode back to it, so any learner that steps a gymnasium env trains with ADR (or UDR, ...).

    loop = ADRLoop.from_config(TrainConfig(env_id="adr/LunarLander-v0"))
    env = ADRWrapper(make_env("adr/LunarLander-v0"), loop)

At ``reset`` the wrapper asks the loop for the next setting and calls the env's ``set_parameters`` (effective from
this reset); it records the episode's transitions and, when the episode terminates or is truncated, gives the loop
the ``Trajectory``. An episode cut short by a ``reset`` before its end is dropped and does not use up its setting:
the next episode runs at the same one (so ``reset(seed=s)`` twice gives the same episode, as gymnasium's env checker
requires, and a learner that abandons episodes leaves no slot of the batch empty). ``info["adr"]`` carries the
setting (iteration, slot, physical values) at reset. Errors at construction, not mid-training: an env without
``set_parameters``, a randomization space other than the loop's, observation or action shapes the loop's
discriminator was not built for.
"""
from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from .adr_loop import ADRError, ADRLoop, Setting
from .rollout import Trajectory


class ADRWrapper(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Runs each episode of ``env`` at the setting ``loop`` hands out and gives the finished episode back.

    At ``reset`` it asks ``loop.next_setting()`` and calls the env's ``set_parameters``; it records the episode and
    calls ``loop.observe`` when it terminates or is truncated (an episode cut short by another ``reset`` is dropped
    and its setting is used again). ``info["adr"]``: iteration, slot, physical values, scored. Wrap the bare env
    (before observation wrappers such as normalization): the loop's reference episodes run on a bare env of the
    same id. Any number of wrappers may share one loop in one process (``DummyVecEnv``); ``SubprocVecEnv`` is
    refused (the loop cannot be copied into another process)."""

    def __init__(self, env: gym.Env[Any, Any], loop: ADRLoop) -> None:
        # recorded (not copied) so that ``env.spec.make()`` rebuilds the wrapper around the same loop
        gym.utils.RecordConstructorArgs.__init__(self, loop=loop, _disable_deepcopy=True)
        super().__init__(env)
        unwrapped = env.unwrapped
        if not callable(getattr(unwrapped, "set_parameters", None)):
            raise ADRError(f"{type(unwrapped).__name__} has no set_parameters(values): ADR needs an env whose "
                           f"simulator settings can be set per episode (the adr/* envs, or implement it)")
        space = getattr(unwrapped, "randomization_space", None)
        if space is not None and space.to_dict() != loop.space.to_dict():
            raise ADRError(f"the env's randomization space ({space.env_id}: {space.names}) is not the loop's "
                           f"({loop.space.env_id}: {loop.space.names})")
        obs_shape, act_shape = env.observation_space.shape, env.action_space.shape
        if obs_shape != (loop.obs_dim,) or act_shape != (loop.act_dim,):
            raise ADRError(f"the env has observations {obs_shape} and actions {act_shape}; the loop's discriminator "
                           f"was built for ({loop.obs_dim},) and ({loop.act_dim},)")
        self.loop = loop
        self._setting: Setting | None = None
        self._steps: list[tuple[np.ndarray, np.ndarray, float, np.ndarray, bool]] = []
        self._obs: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self._setting is None or self._setting.iteration != self.loop.iteration:  # the last one finished / stale
            self._setting = self.loop.next_setting()
        self.env.unwrapped.set_parameters(self._setting.physical)  # type: ignore[attr-defined]
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs, self._steps = np.asarray(obs, dtype=np.float32), []
        info = dict(info)
        info["adr"] = {"iteration": self._setting.iteration, "slot": self._setting.slot,
                       "parameters": self._setting.physical.tolist(), "scored": self._setting.scored}
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._setting is not None and self._obs is not None:
            next_obs = np.asarray(obs, dtype=np.float32)
            self._steps.append((self._obs, np.asarray(action, dtype=np.float32).reshape(-1), float(reward), next_obs,
                                bool(terminated)))
            self._obs = next_obs
            if terminated or truncated:
                self._hand_over(bool(truncated and not terminated), info)
        return obs, reward, terminated, truncated, info

    def _hand_over(self, truncated: bool, info: dict[str, Any]) -> None:
        setting, steps = self._setting, self._steps
        assert setting is not None
        self._setting, self._steps, self._obs = None, [], None
        obs, actions, rewards, next_obs, terminated = (np.asarray(column) for column in zip(*steps))
        unwrapped = self.env.unwrapped
        episode_return = float(np.sum(rewards, dtype=np.float64))
        solved = bool(unwrapped.is_solved(episode_return, info)) if hasattr(unwrapped, "is_solved") else False
        trajectory = Trajectory(
            obs=obs.astype(np.float32), actions=actions.astype(np.float32), next_obs=next_obs.astype(np.float32),
            rewards=rewards.astype(np.float32), terminated=terminated.astype(bool), params=setting.physical,
            params_normalized=setting.normalized, kind="randomized", iteration=setting.iteration, slot=setting.slot,
            policy_version=0, episode_return=episode_return, length=len(steps), truncated=truncated, solved=solved,
            final_distance=float(info.get("distance", float("nan"))))
        self.loop.observe(setting, trajectory)
