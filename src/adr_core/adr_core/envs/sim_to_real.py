"""Optional sim-to-real effects of the Ergo envs: action latency, joint-sensor noise, gear backlash, servo speed.

A space YAML turns an effect on by listing its dimension (see ``config/spaces/ErgoReacher-v0-sim2real.yaml``);
without it the env runs exactly as before (same code path, same random numbers). The effects sit between the
policy and the simulated servos:

- ``action_latency`` (control steps, rounded to an integer): the servos receive the action of ``k`` steps ago;
  for the first ``k`` steps of an episode they keep holding the start pose.
- ``<joint>_backlash`` (rad, per actuated joint): gear play, modelled as a play (hysteresis) operator on the
  servo target: the effective target only moves once the command leaves a band of this width around it, so a
  joint approached from above stops up to the band higher than the same target approached from below. (The link
  does not swing freely inside the band: PyBullet joints have no free play without a different URDF.)
- ``observation_noise`` (rad): Gaussian noise of this std on every joint-angle reading of the observation
  (velocities, the tip, the puck and the goal stay exact), drawn from the env's seeded ``np_random``.
- ``max_joint_speed`` (rad/s): PyBullet's ``maxVelocity`` of every actuated position motor (the XL-320 turns at
  most 11.9 rad/s unloaded; the driver's notes name servo speed as the main gap to the real arm).

Physical bounds (checked against the space's limits when the env is built, so a bad YAML fails before training):
latency 0..10 steps, noise 0..0.5 rad, backlash 0..0.5 rad, speed 0.1..100 rad/s.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from ..randomization import RandomizationError, RandomizationSpace

ACTION_LATENCY = "action_latency"
OBSERVATION_NOISE = "observation_noise"
MAX_JOINT_SPEED = "max_joint_speed"
BACKLASH_SUFFIX = "_backlash"
MAX_LATENCY_STEPS = 10
_BOUNDS = {ACTION_LATENCY: (0.0, float(MAX_LATENCY_STEPS)), OBSERVATION_NOISE: (0.0, 0.5),
           MAX_JOINT_SPEED: (0.1, 100.0), BACKLASH_SUFFIX: (0.0, 0.5)}


def sim_to_real_dimensions(actuated: Sequence[str]) -> tuple[str, ...]:
    """The optional dimension names of an env whose actuated joints are ``actuated``."""
    return (ACTION_LATENCY, OBSERVATION_NOISE, MAX_JOINT_SPEED) + tuple(f"{j}{BACKLASH_SUFFIX}" for j in actuated)


def _check_bounds(space: RandomizationSpace) -> None:
    low, high = space.limits()
    for i, name in enumerate(space.names):
        key = BACKLASH_SUFFIX if name.endswith(BACKLASH_SUFFIX) else name
        if key not in _BOUNDS:
            continue
        lo, hi = _BOUNDS[key]
        if low[i] < lo or high[i] > hi:
            raise RandomizationError(
                f"{space.env_id}: dimension {name!r} allows [{low[i]:.6g}, {high[i]:.6g}], outside its physical "
                f"bounds [{lo:g}, {hi:g}]")


class SimToReal:
    """The effects a space turns on, for one env. ``present`` is False when the space has none of them
    (then the env skips this class entirely)."""

    def __init__(self, actuated: Sequence[str]) -> None:
        self._names = set(sim_to_real_dimensions(actuated))
        self._backlash_names = [f"{j}{BACKLASH_SUFFIX}" for j in actuated]
        self.present = False
        self.latency = 0
        self.noise = 0.0
        self.max_speed: float | None = None
        self.backlash = [0.0] * len(actuated)
        self._pending: deque[list[float]] = deque()
        self._effective: list[float] = []

    def attach(self, space: RandomizationSpace) -> None:
        """Check the space's limits against the physical bounds and note whether it has any effect."""
        _check_bounds(space)
        self.present = bool(self._names & set(space.names))

    def set(self, param: Callable[[str, float], float]) -> None:
        """Read this episode's values; ``param(name, absent)`` gives a dimension's value or ``absent``."""
        self.latency = int(round(param(ACTION_LATENCY, 0.0)))
        self.noise = param(OBSERVATION_NOISE, 0.0)
        speed = param(MAX_JOINT_SPEED, 0.0)
        self.max_speed = speed if speed > 0.0 else None
        self.backlash = [param(name, 0.0) for name in self._backlash_names]

    def reset(self, start_targets: list[float]) -> None:
        """A new episode whose servos hold ``start_targets``."""
        self._pending = deque([list(start_targets)] * self.latency)
        self._effective = list(start_targets)

    def targets(self, commanded: list[float]) -> list[float]:
        """The servo targets that take effect this step for the policy's ``commanded`` targets."""
        if self.latency:
            self._pending.append(commanded)
            commanded = self._pending.popleft()
        effective = self._effective
        for i, (command, band) in enumerate(zip(commanded, self.backlash)):
            half = band / 2.0
            effective[i] = min(max(effective[i], command - half), command + half)
        return list(effective)

    def read_angles(self, angles: list[float], rng: np.random.Generator) -> list[float]:
        """Joint-angle readings as the policy sees them."""
        if self.noise > 0.0:
            noisy = np.asarray(angles, dtype=np.float64) + rng.normal(0.0, self.noise, len(angles))
            return [float(a) for a in noisy]
        return angles
