"""Rollout pictures of every env at its default and at an extreme setting (docs/figures/envs/*.png).

    python -m adr_core.envs.rollout_pictures [OUT_DIR]

Each picture is a strip of frames of one seeded episode under a fixed scripted policy, so the default and the
extreme strip differ only by the randomized parameters.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
from gymnasium.envs.box2d.lunar_lander import heuristic
from PIL import Image, ImageDraw

from . import make_env
from .randomized import RandomizedEnvMixin

Policy = Callable[[object, np.ndarray, int], np.ndarray]


def lander_policy(env: object, obs: np.ndarray, t: int) -> np.ndarray:
    return np.asarray(heuristic(env, obs), dtype=np.float32)  # type: ignore[no-untyped-call]


def pusher_policy(env: object, obs: np.ndarray, t: int) -> np.ndarray:
    return np.array([0.6 if t < 25 else 0.0, 0.0, 0.0], dtype=np.float32)


def reacher_policy(env: object, obs: np.ndarray, t: int) -> np.ndarray:
    return np.array([0.9, 0.3, 0.3, 0.0], dtype=np.float32)


def ergo_pusher_policy(env: object, obs: np.ndarray, t: int) -> np.ndarray:
    yaw = 0.8 if t <= 30 else 0.8 - 1.2 * min(t - 30, 40) / 40
    return np.array([yaw, -0.8, -0.13, -0.2], dtype=np.float32)


# env id -> (file stem, seed, policy, frames to show, extreme setting as {name: multiplier of default} or absolute)
SCENES: dict[str, tuple[str, int, Policy, tuple[int, ...], str, dict[str, float]]] = {
    "adr/LunarLander-v0": ("lunar_lander", 3, lander_policy, (0, 60, 120, 200, 400),
                           "main_engine_power = 8 (hard edge)", {"main_engine_power": 8.0}),
    "adr/Pusher3DOF-v0": ("pusher3dof", 1, pusher_policy, (0, 15, 30, 60, 99), "puck friction & damping 0.5x (test "
                          "edge)", {"puck_frictionloss": 0.005, "puck_damping": 0.0125}),
    "adr/ErgoReacher-v0": ("ergo_reacher", 0, reacher_policy, (0, 5, 10, 20, 99), "hard: gains 0.2x, default torque",
                           {}),
    "adr/ErgoPusher-v0": ("ergo_pusher", 3, ergo_pusher_policy, (0, 30, 45, 60, 99), "puck friction & damping 0.5x",
                          {"puck_frictionloss": 0.005, "puck_damping": 0.0125}),
}


def rollout_frames(
    env_id: str, parameters: np.ndarray, seed: int, policy: Policy, shown: tuple[int, ...]
) -> list[np.ndarray]:
    env = make_env(env_id, render_mode="rgb_array")
    cast(RandomizedEnvMixin, env.unwrapped).set_parameters(parameters)
    obs, _ = env.reset(seed=seed)
    frames = [cast(np.ndarray, env.render())] if 0 in shown else []
    for t in range(1, max(shown) + 1):
        obs, _, terminated, truncated, _ = env.step(policy(env.unwrapped, obs, t - 1))
        if t in shown or terminated or truncated:
            frames.append(cast(np.ndarray, env.render()))
        if terminated or truncated:
            break
    env.close()
    return frames


def strip(frames: list[np.ndarray], title: str, height: int = 240) -> Image.Image:
    tiles = [Image.fromarray(f).resize((round(f.shape[1] * height / f.shape[0]), height)) for f in frames]
    width = sum(t.width for t in tiles) + 4 * (len(tiles) - 1)
    canvas = Image.new("RGB", (width, height + 22), "white")
    x = 0
    for tile in tiles:
        canvas.paste(tile, (x, 22))
        x += tile.width + 4
    ImageDraw.Draw(canvas).text((6, 5), title, fill=(0, 0, 0))
    return canvas


def main(argv: list[str] | None = None) -> int:
    out = Path((argv or sys.argv[1:] or ["docs/figures/envs"])[0])
    out.mkdir(parents=True, exist_ok=True)
    for env_id, (stem, seed, policy, shown, extreme_label, extreme) in SCENES.items():
        space = cast(RandomizedEnvMixin, make_env(env_id).unwrapped).randomization_space
        default = space.reference()
        extreme_values = (
            space.range_box("hard")[0]
            if not extreme
            else space.validate({**dict(zip(space.names, default)), **extreme})
        )
        for tag, values, label in (("default", default, "default"), ("extreme", extreme_values, extreme_label)):
            frames = rollout_frames(env_id, values, seed, policy, shown)
            path = out / f"{stem}_{tag}.png"
            strip(frames, f"{env_id}  {label}  (seed {seed}; frames at steps {', '.join(map(str, shown))})").save(path)
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
