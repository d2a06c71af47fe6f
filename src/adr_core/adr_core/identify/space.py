"""The randomization space an identified arm trains in: the env's own dimensions, and the servo and sensing ones
centred on the estimates, each range widened by its estimate's uncertainty (twice the spread, at least a floor).

| dimension | reference | training range |
|---|---|---|
| `action_latency` | the latency in control steps | +- max(2 spread, 0.25 steps), from 0 |
| `max_joint_speed` | the speed cap | +- max(2 spread, 10 %) |
| `<joint>_gain` | the gain | +- max(2 relative spread, 15 %) |
| `<joint>_max_torque` | the torque cap (the smallest the log supports) | +- max(2 relative spread, 25 %) |
| `<joint>_backlash` | the play | +- max(2 spread, 0.3 degrees), from 0 |
| `observation_noise` | the readings' std | [0, max(2 std, 0.003 rad)] |
| `puck_latency`, `puck_period`, `puck_noise` | the tracker's | +- 10 ms, +- 10 %, [0, max(2 std, 1 mm)] |

The torque cap is special: a servo that never saturates in the log fits any larger cap, so the fit's estimate is the
smallest cap the log supports, a lower bound. With ``torque_cap`` (the servo's datasheet stall torque at the driver's
torque limit: the most it can give) each joint whose lower bound lies below it trains over [lower bound, cap], its
reference the geometric mean of the two.

Every range is clipped to the dimension's physical bounds, which are also its limits (so named ranges of other
settings can be evaluated). The space's named range ``identified`` is the estimate itself.
"""
from __future__ import annotations

import math
from typing import Any

from ..envs import sim_to_real as s2r
from ..randomization import RandomizationSpace, load_space
from .excitation import CONTROL_PERIOD_S
from .fit import Identification

FLOORS = {"latency_steps": 0.25, "speed": 0.10, "gain": 0.15, "torque": 0.25, "backlash": math.radians(0.3),
          "noise": 0.003, "puck_latency": 0.01, "puck_period": 0.10, "puck_noise": 0.001}


def _bounds(name: str) -> tuple[float, float]:
    key = next((suffix for suffix in (s2r.BACKLASH_SUFFIX, s2r.GAIN_SUFFIX, s2r.MAX_TORQUE_SUFFIX)
                if name.endswith(suffix)), name)
    return s2r._BOUNDS[key]


def identified_space(ident: Identification, description: str,
                     torque_cap: float | None = None) -> RandomizationSpace:
    """The packaged space of the identified env plus (or with) the identified dimensions."""
    data = load_space(ident.env_id).to_dict()
    dims: list[dict[str, Any]] = data["dimensions"]
    point: dict[str, float] = {}

    def put(name: str, value: float, low: float, high: float, unit: str, what: str) -> None:
        lo_bound, hi_bound = _bounds(name)
        value = min(max(value, lo_bound), hi_bound)
        low, high = max(lo_bound, min(low, value)), min(hi_bound, max(high, value))
        entry = {"name": name, "default": value, "unit": unit, "description": f"{what} ({description})",
                 "train": {"absolute": [low, high]}, "limits": {"absolute": [lo_bound, hi_bound]}}
        for i, dim in enumerate(dims):
            if dim["name"] == name:
                dims[i] = entry
                break
        else:
            dims.append(entry)
        point[name] = value

    steps = ident.latency_s.value / CONTROL_PERIOD_S
    half = max(2 * ident.latency_s.uncertainty / CONTROL_PERIOD_S, FLOORS["latency_steps"])
    put(s2r.ACTION_LATENCY, steps, steps - half, steps + half, "control steps (1/60 s)",
        f"identified latency {ident.latency_s.value * 1000:.1f} ms")
    speed = ident.max_speed
    half = max(2 * speed.uncertainty, FLOORS["speed"] * speed.value)
    put(s2r.MAX_JOINT_SPEED, speed.value, speed.value - half, speed.value + half, "rad/s", "identified speed cap")
    for joint in ident.gains:
        for suffix, estimate, floor, unit in ((s2r.GAIN_SUFFIX, ident.gains[joint], FLOORS["gain"],
                                               "PyBullet positionGain"),
                                              (s2r.MAX_TORQUE_SUFFIX, ident.max_torques[joint], FLOORS["torque"],
                                               "N*m")):
            relative = max(2 * estimate.relative, floor)
            low, high, value = estimate.value * (1 - relative), estimate.value * (1 + relative), estimate.value
            what = f"identified {suffix.strip('_').replace('_', ' ')} of {joint}"
            if suffix == s2r.MAX_TORQUE_SUFFIX and torque_cap is not None and estimate.value < torque_cap:
                low, high, value = estimate.value, torque_cap, math.sqrt(estimate.value * torque_cap)
                what = (f"torque cap of {joint}: from the smallest the log supports ({estimate.value:.3g} N*m) to the "
                        f"servo's {torque_cap:.3g} N*m")
            put(f"{joint}{suffix}", value, low, high, unit, what)
        play = ident.backlash[joint]
        half = max(2 * play.uncertainty, FLOORS["backlash"])
        put(f"{joint}{s2r.BACKLASH_SUFFIX}", play.value, play.value - half, play.value + half, "rad",
            f"identified gear play of {joint} ({math.degrees(play.value):.2f} deg)")
    noise = ident.observation_noise
    put(s2r.OBSERVATION_NOISE, noise, 0.0, max(2 * noise, FLOORS["noise"]), "rad (std)",
        "joint-angle readings' noise at rest")
    if ident.tracker is not None and ident.env_id.endswith("ErgoPusher-v0"):
        tracker = ident.tracker
        put(s2r.PUCK_LATENCY, tracker.latency_s, tracker.latency_s - FLOORS["puck_latency"],
            tracker.latency_s + FLOORS["puck_latency"], "s", "puck tracker latency (receipt - capture)")
        put(s2r.PUCK_PERIOD, tracker.period_s, tracker.period_s * (1 - FLOORS["puck_period"]),
            tracker.period_s * (1 + FLOORS["puck_period"]), "s", "puck tracker frame period")
        put(s2r.PUCK_NOISE, tracker.noise_m, 0.0, max(2 * tracker.noise_m, FLOORS["puck_noise"]), "m (std)",
            "puck tracker position noise at rest")
    ranges = dict(data.get("ranges") or {})
    ranges["identified"] = {name: {"absolute": value} for name, value in point.items()}
    data["ranges"] = ranges
    return RandomizationSpace.from_dict(data)
