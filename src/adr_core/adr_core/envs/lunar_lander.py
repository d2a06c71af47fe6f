"""adr/LunarLander-v0: gymnasium's LunarLanderContinuous-v3 with a per-instance main engine power.

Observation (8): x, y, vx, vy, angle, angular velocity, left/right leg contact (gymnasium's layout).
Action (2, [-1, 1]): main throttle (<= 0 off, (0, 1] -> 50..100 % power), lateral engines.
Reward: gymnasium's shaping reward; solved when the episode return is > 200. 1000-step limit.

How the engine power is overridden: gymnasium's ``step`` reads the module global
``MAIN_ENGINE_POWER``. Each instance runs the *same* ``step`` bytecode bound to its own copy of the
module's globals dict, in which ``MAIN_ENGINE_POWER`` is the instance's value. That is exact (it is
gymnasium's code, byte for byte), thread-safe (no shared global is written) and free per step (a
global lookup in another dict); the only cost is one dict copy per instance.
"""
from __future__ import annotations

import types
from typing import Any, cast

import numpy as np
from gymnasium.error import DependencyNotInstalled
from gymnasium.utils import EzPickle

from .extras import missing

try:
    from gymnasium.envs.box2d import lunar_lander as stock
except DependencyNotInstalled as error:  # gymnasium's message suggests swig; the wheel needs none
    # gymnasium.envs.box2d imports its car racing env too, which needs pygame: name whichever is absent
    raise missing("Box2D", "adr/LunarLander-v0", "pygame" if "pygame" in str(error) else "Box2D") from None

from ..randomization import RandomizationSpace
from .randomized import RandomizedEnvMixin
from .registry import env_record

ENV_ID = "adr/LunarLander-v0"
MAIN_ENGINE_POWER = "main_engine_power"
SOLVED_RETURN = env_record(ENV_ID).solved.threshold  # 200


def _step_with_private_globals(engine_globals: dict[str, Any]) -> types.FunctionType:
    code = stock.LunarLander.step
    return types.FunctionType(code.__code__, engine_globals, code.__name__, code.__defaults__, code.__closure__)


class RandomizedLunarLander(RandomizedEnvMixin, stock.LunarLander):
    metadata = stock.LunarLander.metadata

    def __init__(self, render_mode: str | None = None, space: RandomizationSpace | str | None = None) -> None:
        stock.LunarLander.__init__(self, render_mode=render_mode, continuous=True)
        EzPickle.__init__(self, render_mode, space)
        self._engine_globals = dict(vars(stock))
        self._stock_step = _step_with_private_globals(self._engine_globals)
        self._init_randomization(space, ENV_ID, (MAIN_ENGINE_POWER,))

    def _apply_parameters(self, values: np.ndarray) -> None:
        self._engine_globals["MAIN_ENGINE_POWER"] = self._param(values, MAIN_ENGINE_POWER)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        parameters = self._begin_episode_parameters()
        obs, info = super().reset(seed=seed, options=options)
        info["parameters"] = parameters
        return obs, info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return cast("tuple[np.ndarray, float, bool, bool, dict[str, Any]]", self._stock_step(self, action))

    @property
    def main_engine_power(self) -> float:
        return float(self._engine_globals["MAIN_ENGINE_POWER"])

    def is_solved(self, episode_return: float, info: dict[str, Any]) -> bool:
        return float(episode_return) > SOLVED_RETURN
