"""The excitation an arm is identified from: steps and sweeps of one actuated joint at a time, the others held at 0.

Per joint and repeat (about 9.4 s at the control rate, 1/60 s):

- a hold at 0 (the segment starts at rest, so its first measurement is the state the replay starts from);
- large steps (0 -> +0.5 -> -0.3 -> 0 rad, 1 s each): the speed cap, the latency and the torque the joint gets;
- small steps (+-0.05 rad, 0.5 s each, reversing): the position gain (the speed cap does not bind) and the gear
  play (each reversal crosses the band);
- three sine sweeps (0.25 rad at 0.7 Hz; 0.08 rad at 2 Hz and 0.04 rad at 4 Hz, both below the default speed cap):
  tracking lag and play at three speeds; the lag's growth with frequency tells the gain from the latency;
- a hold at 0.

Every target stays within +-0.5 rad of the upright start pose (inside the driver's joint limits; on the pushing rig
the arm stays clear of the table). The commands are the policy runner's: six joint targets at 60 Hz.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..envs.ergo_jr import JOINT_NAMES, PHYSICS_DT

CONTROL_PERIOD_S = 4 * PHYSICS_DT  # the Ergo envs' 4 physics steps of 1/240 s
HOLD_S = 0.6
LARGE_STEPS = ((0.5, 1.0), (-0.3, 1.0), (0.0, 0.8))  # (target rad, duration s)
SMALL_STEPS = ((0.05, 0.5), (-0.05, 0.5), (0.05, 0.5), (0.0, 0.5))
SWEEPS = ((0.25, 0.7, 1), (0.08, 2.0, 2), (0.04, 4.0, 4))  # (amplitude rad, frequency Hz, periods)


@dataclass(frozen=True)
class Segment:
    """The stretch of a log in which ``joints`` move and the others hold: what one fit replays."""

    joints: tuple[str, ...]
    repeat: int  # which repeat of the excitation (deploy logs: the episode's half)
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Excitation:
    times: np.ndarray  # (N,) s from the first command
    targets: np.ndarray  # (N, 6) rad, JOINT_NAMES order
    segments: tuple[Segment, ...]


def joint_pattern() -> np.ndarray:
    """One joint's targets over one segment, one value per control period."""
    per = round(1.0 / CONTROL_PERIOD_S)
    parts = [np.zeros(round(HOLD_S * per))]
    parts += [np.full(round(duration * per), target) for target, duration in LARGE_STEPS + SMALL_STEPS]
    for amplitude, frequency, periods in SWEEPS:
        t = np.arange(round(periods / frequency * per)) * CONTROL_PERIOD_S
        parts.append(amplitude * np.sin(2 * math.pi * frequency * t))
    parts.append(np.zeros(round(HOLD_S * per)))
    return np.concatenate(parts)


def excitation(actuated: tuple[str, ...], repeats: int = 2) -> Excitation:
    """The whole program for the env whose actuated joints are ``actuated``: every repeat excites each joint once."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    pattern = joint_pattern()
    blocks, segments, start = [], [], 0
    for repeat in range(repeats):
        for joint in actuated:
            block = np.zeros((len(pattern), len(JOINT_NAMES)))
            block[:, JOINT_NAMES.index(joint)] = pattern
            blocks.append(block)
            segments.append(Segment((joint,), repeat, start * CONTROL_PERIOD_S,
                                    (start + len(pattern)) * CONTROL_PERIOD_S))
            start += len(pattern)
    targets = np.concatenate(blocks)
    return Excitation(np.arange(len(targets)) * CONTROL_PERIOD_S, targets, tuple(segments))
