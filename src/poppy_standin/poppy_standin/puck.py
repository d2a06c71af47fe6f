"""The stand-in's table and puck (``--task pusher``), and the camera tracker that reports where the puck is.

The puck is ErgoPusher's own model (``adr_core.envs.ergo_pusher.add_table_and_puck``: 2 cm radius, 10 g, two slide
joints whose dry friction and viscous damping are what the env randomizes) in the stand-in arm's physics world, so
the arm pushes it with the servo model of its setting. Puck settings (standin.yaml ``puck``) are named as in the
paper's real-robot experiment: ``reference`` (the env's default), ``slippery`` and ``rough``, both outside the training
range.

The tracker stands for an overhead camera: ``rate_hz`` frames a second, each reporting the puck's position as it was
``latency_s`` earlier (exposure, transfer, detection), stamped with that capture time, with independent Gaussian
noise of ``noise_m`` per axis. Positions are in the env's world frame (metres, table plane).
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from adr_core.envs import ergo_pusher
from adr_core.envs.ergo_jr import ErgoJrSim

from .settings import StandInError, check_value

PUCK_BOUNDS: dict[str, tuple[float, float, str]] = {
    "frictionloss": (0.0, 0.5, "N (dry friction of each slide joint)"),
    "damping": (0.0, 2.0, "N*s/m (viscous damping of each slide joint)"),
}
TRACKER_BOUNDS: dict[str, tuple[float, float, str]] = {
    "rate_hz": (1.0, 240.0, "frames/s"),
    "latency_s": (0.0, 0.5, "s"),
    "noise_m": (0.0, 0.02, "m (std per axis)"),
}
HISTORY_S = 1.0  # puck states kept for the tracker's latency (> every latency allowed)
START = (0.0, -0.1)  # where the puck rests until a run asks for another start (in front of the arm)


@dataclass(frozen=True)
class PuckSetting:
    name: str
    frictionloss: float
    damping: float


@dataclass(frozen=True)
class TrackerModel:
    rate_hz: float
    latency_s: float
    noise_m: float


def _checked(cls: type, bounds: Mapping[str, tuple[float, float, str]], data: Mapping[str, Any], where: str,
             **extra: Any) -> Any:
    unknown = sorted(set(data) - set(bounds))
    if unknown:
        raise StandInError(f"{where}: unknown key(s) {unknown}; known: {sorted(bounds)}")
    missing = [k for k in bounds if k not in data]
    if missing:
        raise StandInError(f"{where}: missing key(s) {missing}")
    return cls(**extra, **{k: check_value(k, data[k], where, bounds) for k in bounds})


def load_puck(data: Any, setting: str, overrides: Mapping[str, Any] | None = None) -> tuple[PuckSetting,
                                                                                             TrackerModel]:
    """The puck of ``setting`` and the tracker from the stand-in file's ``puck`` and ``tracker`` sections."""
    if not isinstance(data, Mapping) or not isinstance(data.get("puck"), Mapping):
        raise StandInError("the stand-in file has no 'puck' section (needed by --task pusher)")
    puck = dict(data["puck"])
    settings = puck.pop("settings", None) or {}
    if setting not in settings:
        raise StandInError(f"puck setting {setting!r} is not in the stand-in file; known: {sorted(settings)}")
    values = {**puck, **(settings[setting] or {})}
    tracker_values = dict(data.get("tracker") or {})
    for key, value in (overrides or {}).items():
        if key in PUCK_BOUNDS:
            values[key] = value
        elif key in TRACKER_BOUNDS:
            tracker_values[key] = value
        else:
            raise StandInError(f"--puck-set {key}: expected one of {sorted([*PUCK_BOUNDS, *TRACKER_BOUNDS])}")
    where = f"puck.settings.{setting}"
    return (_checked(PuckSetting, PUCK_BOUNDS, values, where, name=setting),
            _checked(TrackerModel, TRACKER_BOUNDS, tracker_values, "tracker"))


def parse_puck_assignment(text: str) -> tuple[str, float]:
    """``key=value`` of ``--puck-set``; the key must be a puck or tracker key."""
    key, sep, value = text.partition("=")
    known = sorted([*PUCK_BOUNDS, *TRACKER_BOUNDS])
    if not sep or key not in known:
        raise StandInError(f"--puck-set {text!r}: expected key=value with key one of {known}")
    try:
        return key, float(value)
    except ValueError:
        raise StandInError(f"--puck-set {text!r}: {value!r} is not a number") from None


class PuckWorld:
    """Table and puck in the arm's physics world. The physics thread calls ``after_step`` after every physics step
    and ``record`` after every ``advance``; other threads only call ``request_start`` and ``history``."""

    def __init__(self, sim: ErgoJrSim, setting: PuckSetting, start: tuple[float, float] = START) -> None:
        self.sim, self.setting = sim, setting
        self.table, self.puck = ergo_pusher.add_table_and_puck(sim.client)
        ergo_pusher.set_puck_damping(sim.client, self.puck, setting.damping)
        self._place(start)
        self._lock = threading.Lock()
        self._requested: tuple[float, float] | None = None
        self._history: deque[tuple[float, float, float]] = deque()
        self.placed = 0

    def _place(self, position: tuple[float, float]) -> None:
        ergo_pusher.place_puck(self.sim.client, self.puck, position)
        ergo_pusher.command_puck_friction(self.sim.client, self.puck, self.setting.frictionloss)

    def request_start(self, x: float, y: float) -> None:
        """Put the puck at rest at (x, y) before the next physics step (what the rig's operator does by hand)."""
        travel = ergo_pusher.PUCK_TRAVEL
        if not (math.isfinite(x) and math.isfinite(y) and abs(x) <= travel and abs(y) <= travel):
            raise ValueError(f"puck start ({x}, {y}) is off the table (|x|, |y| <= {travel} m)")
        with self._lock:
            self._requested = (float(x), float(y))

    def after_step(self) -> None:
        with self._lock:
            requested, self._requested = self._requested, None
        if requested is not None:
            self._place(requested)
            self.placed += 1

    def state(self) -> tuple[tuple[float, float], tuple[float, float]]:
        return ergo_pusher.puck_state(self.sim.client, self.puck)

    def record(self, wall_time: float) -> None:
        (x, y), _ = self.state()
        with self._lock:
            self._history.append((wall_time, x, y))
            while self._history and self._history[0][0] < wall_time - HISTORY_S:
                self._history.popleft()

    def history(self) -> list[tuple[float, float, float]]:
        with self._lock:
            return list(self._history)


class Tracker:
    """What the camera reports at wall time ``now``: the newest puck state captured at or before ``now - latency``,
    plus noise, stamped with its capture time; None before the first such state."""

    def __init__(self, model: TrackerModel, seed: int = 0) -> None:
        self.model = model
        self.rng = np.random.default_rng(seed)

    def reading(self, history: list[tuple[float, float, float]], now: float) -> tuple[float, float, float] | None:
        captured_by = now - self.model.latency_s
        sample = None
        for entry in reversed(history):
            if entry[0] <= captured_by:
                sample = entry
                break
        if sample is None:
            return None
        stamp, x, y = sample
        if self.model.noise_m > 0:
            dx, dy = self.rng.normal(0.0, self.model.noise_m, 2)
            x, y = x + float(dx), y + float(dy)
        return stamp, x, y


def wall_clock() -> float:
    """The clock of the tracker's stamps: the system clock, as ROS's default (system time) clock."""
    return time.time()
