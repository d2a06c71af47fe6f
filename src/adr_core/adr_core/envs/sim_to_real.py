"""Optional sim-to-real effects of the Ergo envs: what a real (or stand-in) arm does that the plain simulator does not.

A space YAML turns an effect on by listing its dimension (see ``config/spaces/ErgoReacher-v0-sim2real.yaml``);
without any of them the env runs exactly as before (same code path, same random numbers). The effects sit between
the policy and the simulated servos and sensors:

- ``action_latency`` (control steps, resolved to physics steps of 1/240 s: ``round(latency * frame_skip)``): the
  servos act on the command the policy sent that long ago; before that they hold the start pose. A whole number of
  control steps delays the action stream by that many steps; a fraction switches the servos to the newer command
  part-way through a control step (a stand-in arm's 20 ms is 1.2 steps of 1/60 s: the new target acts from the
  fifth physics step on).
- ``<joint>_backlash`` (rad, per actuated joint): gear play, modelled as a play (hysteresis) operator on the
  servo target: the effective target only moves once the command leaves a band of this width around it, so a
  joint approached from above stops up to the band higher than the same target approached from below. (The link
  does not swing freely inside the band: PyBullet joints have no free play without a different URDF.)
- ``observation_noise`` (rad): Gaussian noise of this std on every joint-angle reading of the observation
  (velocities, the tip, the puck and the goal stay exact), drawn from the env's seeded ``np_random``.
- ``max_joint_speed`` (rad/s): PyBullet's ``maxVelocity`` of every actuated position motor (the XL-320 turns at
  most 11.9 rad/s unloaded; a driver's moving speed caps it further: the stand-in's default 1.5 rad/s).
- ``<joint>_gain``, ``<joint>_max_torque`` (PyBullet positionGain, N*m, per actuated joint): the servo's position
  gain and torque cap. ErgoReacher randomizes them in every space (they are its paper dimensions); ErgoPusher takes
  them as optional dimensions (without them its servos use ErgoReacher's defaults), so an identified arm
  (``adr-identify``) can be trained on as it is.
- ErgoPusher's puck tracker (``puck_latency`` s, ``puck_noise`` m, ``puck_period`` s): the puck position and
  velocity in the observation come from a camera model instead of the exact state (``PuckTracker``: frames every
  period, each the position at its capture plus noise, usable ``puck_latency`` after it; the velocity is the
  difference of the last two frames over their capture times, as the deploy runner computes it).

Physical bounds (checked against the space's limits when the env is built, so a bad YAML fails before training):
latency 0..10 steps, noise 0..0.5 rad, backlash 0..0.5 rad, speed 0.1..100 rad/s, gain 1e-4..1, torque cap
1e-4..2 N*m, puck latency 0..0.5 s, puck noise 0..0.05 m, puck period 0..0.5 s (0: a frame every physics step).
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from ..randomization import RandomizationError, RandomizationSpace

ACTION_LATENCY = "action_latency"
OBSERVATION_NOISE = "observation_noise"
MAX_JOINT_SPEED = "max_joint_speed"
BACKLASH_SUFFIX = "_backlash"
GAIN_SUFFIX = "_gain"
MAX_TORQUE_SUFFIX = "_max_torque"
PUCK_LATENCY, PUCK_NOISE, PUCK_PERIOD = "puck_latency", "puck_noise", "puck_period"
PUCK_TRACKER = (PUCK_LATENCY, PUCK_NOISE, PUCK_PERIOD)
MAX_LATENCY_STEPS = 10
_BOUNDS = {ACTION_LATENCY: (0.0, float(MAX_LATENCY_STEPS)), OBSERVATION_NOISE: (0.0, 0.5),
           MAX_JOINT_SPEED: (0.1, 100.0), BACKLASH_SUFFIX: (0.0, 0.5), GAIN_SUFFIX: (1e-4, 1.0),
           MAX_TORQUE_SUFFIX: (1e-4, 2.0), PUCK_LATENCY: (0.0, 0.5), PUCK_NOISE: (0.0, 0.05),
           PUCK_PERIOD: (0.0, 0.5)}
_SUFFIXES = (BACKLASH_SUFFIX, GAIN_SUFFIX, MAX_TORQUE_SUFFIX)


def sim_to_real_dimensions(actuated: Sequence[str], servo: bool = False, puck: bool = False) -> tuple[str, ...]:
    """The optional dimension names of an env whose actuated joints are ``actuated``; ``servo``: also each joint's
    gain and torque cap (an env that does not randomize them anyway); ``puck``: the puck tracker's."""
    names = (ACTION_LATENCY, OBSERVATION_NOISE, MAX_JOINT_SPEED) + tuple(f"{j}{BACKLASH_SUFFIX}" for j in actuated)
    if servo:
        names += tuple(f"{j}{GAIN_SUFFIX}" for j in actuated) + tuple(f"{j}{MAX_TORQUE_SUFFIX}" for j in actuated)
    return names + (PUCK_TRACKER if puck else ())


def check_bounds(space: RandomizationSpace) -> None:
    """Every sim-to-real (and servo) dimension of ``space`` within its physical bounds, else one line naming it."""
    low, high = space.limits()
    for i, name in enumerate(space.names):
        key = next((s for s in _SUFFIXES if name.endswith(s)), name)
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

    def __init__(self, actuated: Sequence[str], frame_skip: int) -> None:
        self._names = set(sim_to_real_dimensions(actuated))
        self._backlash_names = [f"{j}{BACKLASH_SUFFIX}" for j in actuated]
        self.frame_skip = int(frame_skip)
        self.present = False
        self.latency_steps = 0  # physics steps
        self.noise = 0.0
        self.max_speed: float | None = None
        self.backlash = [0.0] * len(actuated)
        self._pending: deque[list[float]] = deque()
        self._effective: list[float] = []

    def attach(self, space: RandomizationSpace) -> None:
        """Check the space's limits against the physical bounds and note whether it has any effect."""
        check_bounds(space)
        self.present = bool(self._names & set(space.names))

    def set(self, param: Callable[[str, float], float]) -> None:
        """Read this episode's values; ``param(name, absent)`` gives a dimension's value or ``absent``."""
        self.latency_steps = int(round(param(ACTION_LATENCY, 0.0) * self.frame_skip))
        self.noise = param(OBSERVATION_NOISE, 0.0)
        speed = param(MAX_JOINT_SPEED, 0.0)
        self.max_speed = speed if speed > 0.0 else None
        self.backlash = [param(name, 0.0) for name in self._backlash_names]

    def reset(self, start_targets: list[float]) -> None:
        """A new episode whose servos hold ``start_targets``."""
        whole = self.latency_steps // self.frame_skip
        self._pending = deque([list(start_targets)] * (whole + 1))
        self._effective = list(start_targets)

    def segments(self, commanded: list[float]) -> list[tuple[list[float], int]]:
        """The servo targets in effect over this control step for the policy's ``commanded`` ones, as (targets,
        physics steps) pairs in time order: one pair, or two when the latency ends part-way through the step."""
        whole, part = divmod(self.latency_steps, self.frame_skip)
        pending = self._pending
        pending.append(commanded)
        if len(pending) > whole + 2:
            pending.popleft()
        newer = pending[-1 - whole]
        if part == 0:
            return [(self._played(newer), self.frame_skip)]
        older = pending[-2 - whole]
        return [(self._played(older), part), (self._played(newer), self.frame_skip - part)]

    def _played(self, command: list[float]) -> list[float]:
        """The effective targets once ``command`` has gone through each joint's gear play."""
        effective = self._effective
        for i, (value, band) in enumerate(zip(command, self.backlash)):
            half = band / 2.0
            effective[i] = min(max(effective[i], value - half), value + half)
        return list(effective)

    def read_angles(self, angles: list[float], rng: np.random.Generator) -> list[float]:
        """Joint-angle readings as the policy sees them."""
        if self.noise > 0.0:
            noisy = np.asarray(angles, dtype=np.float64) + rng.normal(0.0, self.noise, len(angles))
            return [float(a) for a in noisy]
        return angles


class PuckTracker:
    """A camera tracker's view of the puck, in physics steps of ``dt``: a frame every ``period`` (at a phase drawn
    per episode), holding the puck's position at its capture plus N(0, noise^2) per axis, usable ``latency`` after
    it. The observation reads the newest usable frame; its velocity is the difference of the newest two frames over
    their capture times (what the deploy runner computes from the tracker's stamped readings)."""

    def __init__(self, dt: float) -> None:
        self.dt = float(dt)
        self.present = False
        self.latency_steps, self.noise, self.period_steps = 0, 0.0, 1
        self._frames: deque[tuple[int, float, float]] = deque()
        self._step = 0
        self._next_capture = 0

    def attach(self, space: RandomizationSpace) -> None:
        self.present = bool(set(PUCK_TRACKER) & set(space.names))

    def set(self, param: Callable[[str, float], float]) -> None:
        self.latency_steps = int(round(param(PUCK_LATENCY, 0.0) / self.dt))
        self.noise = param(PUCK_NOISE, 0.0)
        self.period_steps = max(1, int(round(param(PUCK_PERIOD, 0.0) / self.dt)))

    def reset(self, position: tuple[float, float], rng: np.random.Generator) -> None:
        """The puck at rest at ``position``: the frames the camera took of it before the episode's first step."""
        self._step = 0
        self._next_capture = int(rng.integers(0, self.period_steps)) if self.period_steps > 1 else 0
        self._frames = deque()
        before = math.ceil((self.latency_steps + 1) / self.period_steps) + 2
        for k in range(before, 0, -1):
            self._capture(self._next_capture - k * self.period_steps, position, rng)

    def after_physics_step(self, position: tuple[float, float], rng: np.random.Generator) -> None:
        self._step += 1
        if self._step >= self._next_capture:
            self._capture(self._step, position, rng)
            self._next_capture += self.period_steps

    def reading(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """(position, velocity) as the tracker reports them now."""
        newest = len(self._frames) - 1
        while self._frames[newest][0] + self.latency_steps > self._step:
            newest -= 1
        (t1, x1, y1), (t0, x0, y0) = self._frames[newest], self._frames[newest - 1]
        span = (t1 - t0) * self.dt
        return (x1, y1), ((x1 - x0) / span, (y1 - y0) / span)

    def _capture(self, step: int, position: tuple[float, float], rng: np.random.Generator) -> None:
        x, y = position
        if self.noise > 0.0:
            dx, dy = rng.normal(0.0, self.noise, 2)
            x, y = x + float(dx), y + float(dy)
        self._frames.append((step, x, y))
        keep = self.latency_steps // self.period_steps + 3
        while len(self._frames) > keep:
            self._frames.popleft()
