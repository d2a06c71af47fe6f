"""Fit the simulator's servo model to a log: CMA-ES (the ``cma`` package) on the replay's angle error.

Per actuated joint and per repeat of the excitation, CMA-ES over five numbers, searched in [0, 1] each (gain,
torque cap and speed cap on a log scale): the joint's position gain, torque cap and gear play, and the speed cap and
latency, minimizing the mean squared difference between the joint's measured and replayed angles over the segments
that move it (the other joints under the current estimate of theirs). It starts where the trace itself points
(``initial_guess``) and runs in two stages (the torque cap out of the way first); then the torque cap is lowered
while the error stays within 5 % of the best: a servo that never saturates in the log fits any larger cap, so the
estimate is the smallest cap the log supports. The joint's estimate is the mean of
its repeats (geometric for gain and torque), the shared speed cap and latency the median over every joint and
repeat; the spread between repeats (and between joints, for the shared two) is the estimate's uncertainty, which
widens the training range written for it (``space.py``). A deploy log's episodes alternate between two "repeats",
and since every joint moves in them, a second pass refits each joint under the first pass's estimates of the others.

The joint-angle readings' noise is the standard deviation of the measured angles while the arm holds still at the
start of each segment (an identification log; a deploy log has no holds: the fit's residual, an upper bound); the
puck tracker's rate, latency and noise are read off its frames (capture stamps, receipt times, spread at rest).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..envs.ergo_jr import JOINT_NAMES
from .excitation import HOLD_S
from .log import ArmLog
from .replay import ArmModel, Replay, ServoParams, env_model

# name, low, high, log scale: the search box (physical values; wider than any servo the bounds of sim_to_real allow
# to train on are not needed: an estimate at an edge of this box is reported as such)
SEARCH = (("gain", 0.005, 0.5, True), ("max_torque", 0.005, 1.0, True), ("max_speed", 0.2, 15.0, True),
          ("latency_s", 0.0, 0.12, False), ("backlash", 0.0, 0.1, False))
DEFAULT_BUDGET = 600  # CMA-ES evaluations per joint and repeat (50 generations of 12)
POPULATION = 12
TORQUE_PROFILE = tuple(0.8 ** k for k in range(1, 21))  # the torque cap probed downward from the best fit


@dataclass(frozen=True)
class Estimate:
    value: float
    uncertainty: float  # spread of the repeats' (and joints') estimates
    samples: tuple[float, ...]  # the repeats' own estimates

    @property
    def relative(self) -> float:
        return self.uncertainty / abs(self.value) if self.value else math.inf


@dataclass(frozen=True)
class TrackerEstimate:
    latency_s: float
    period_s: float
    noise_m: float
    frames: int


@dataclass
class Identification:
    env_id: str
    gains: dict[str, Estimate]
    max_torques: dict[str, Estimate]
    backlash: dict[str, Estimate]
    max_speed: Estimate
    latency_s: Estimate
    observation_noise: float  # rad (std)
    rms_before: dict[str, float]  # rad, each actuated joint over its segments: the env's own servos
    rms_after: dict[str, float]  # ... the fitted model
    tracker: TrackerEstimate | None = None
    evaluations: int = 0
    driver_max_speed: float | None = None
    at_search_edge: list[str] = field(default_factory=list)

    def model(self) -> ArmModel:
        """The fitted arm (held joints: the mean of the actuated joints' gain and torque, no play)."""
        servos = {j: ServoParams(self.gains[j].value, self.max_torques[j].value, self.backlash[j].value)
                  for j in self.gains}
        held = ServoParams(float(np.mean([s.gain for s in servos.values()])),
                           float(np.mean([s.max_torque for s in servos.values()])), 0.0)
        servos.update({j: held for j in JOINT_NAMES if j not in servos})
        return ArmModel(servos, self.max_speed.value, self.latency_s.value)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Identification:
        """The estimates as ``to_dict`` (``identification.json``) wrote them."""
        def estimate(value: dict[str, Any]) -> Estimate:
            return Estimate(float(value["value"]), float(value["uncertainty"]),
                            tuple(float(v) for v in value["samples"]))

        try:
            tracker = data.get("tracker")
            return cls(env_id=str(data["env_id"]),
                       gains={j: estimate(v) for j, v in data["gains"].items()},
                       max_torques={j: estimate(v) for j, v in data["max_torques"].items()},
                       backlash={j: estimate(v) for j, v in data["backlash"].items()},
                       max_speed=estimate(data["max_speed"]), latency_s=estimate(data["latency_s"]),
                       observation_noise=float(data["observation_noise"]),
                       rms_before={j: float(v) for j, v in data["rms_before"].items()},
                       rms_after={j: float(v) for j, v in data["rms_after"].items()},
                       tracker=TrackerEstimate(**tracker) if tracker else None,
                       evaluations=int(data.get("evaluations", 0)), driver_max_speed=data.get("driver_max_speed"),
                       at_search_edge=list(data.get("at_search_edge", [])))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not the estimates adr-identify writes (identification.json): {error}") from None


def _decode(x: np.ndarray) -> dict[str, float]:
    values = {}
    for u, (name, low, high, log) in zip(np.clip(x, 0.0, 1.0), SEARCH):
        values[name] = float(math.exp(math.log(low) + u * (math.log(high) - math.log(low))) if log
                             else low + u * (high - low))
    return values


def _encode(values: dict[str, float]) -> np.ndarray:
    out = []
    for name, low, high, log in SEARCH:
        v = min(max(values[name], low), high)
        out.append((math.log(v) - math.log(low)) / (math.log(high) - math.log(low)) if log
                   else (v - low) / (high - low))
    return np.array(out)


def segment_error(replay: Replay, log: ArmLog, joint: str, model: ArmModel, repeat: int | None = None) -> float:
    """Mean squared angle error (rad^2) of ``joint`` over the segments that move it (one repeat, or all)."""
    index = JOINT_NAMES.index(joint)
    errors = []
    for segment in log.segments:
        if joint in segment.joints and (repeat is None or segment.repeat == repeat):
            _, measured = replay.measured(segment)
            errors.append(replay.predict(segment, model)[:, index] - measured[:, index])
    joined = np.concatenate(errors)
    return float(np.mean(joined ** 2))


def initial_guess(replay: Replay, log: ArmLog, joint: str, repeat: int, base: ArmModel) -> dict[str, float]:
    """Where CMA-ES starts, read off the measured trace: the speed cap from the fastest motion (95th percentile of
    the speed over 25 ms windows), the latency from the delay between a large command change and the first
    motion, the play from how far holds approached from above and from below settle apart. A log without such
    moments keeps the base model's values."""
    index = JOINT_NAMES.index(joint)
    speeds: list[np.ndarray] = []
    delays: list[float] = []
    above: list[float] = []
    below: list[float] = []
    for segment in log.segments:
        if joint not in segment.joints or segment.repeat != repeat:
            continue
        times, angles = replay.measured(segment)
        q = angles[:, index]
        window = max(1, int(round(0.025 / max(np.median(np.diff(times)), 1e-3))))
        if len(q) > window:
            speeds.append(np.abs(q[window:] - q[:-window]) / (times[window:] - times[:-window]))
        inside = (log.command_t >= segment.start_s) & (log.command_t <= segment.end_s)
        t_cmd, cmd = log.command_t[inside], log.commands[inside, index]
        changes = np.flatnonzero(np.abs(np.diff(cmd)) > 1e-9) + 1
        for n, k in enumerate(changes):
            step = cmd[k] - cmd[k - 1]
            before = np.searchsorted(times, t_cmd[k])
            if abs(step) > 0.2 and before < len(q):
                moved = np.flatnonzero(np.abs(q[before:] - q[min(before, len(q) - 1)]) > 0.01)
                if moved.size:
                    delays.append(times[before + moved[0]] - t_cmd[k] - 0.01)
            end = t_cmd[changes[n + 1]] if n + 1 < len(changes) else segment.end_s
            if end - t_cmd[k] >= 0.3 and abs(step) < 0.2:  # a small step held: where did it settle?
                settled = q[(times > end - 0.08) & (times <= end)]
                if settled.size:
                    (above if step < 0 else below).append(float(np.median(settled)) - cmd[k])
    guess = {"gain": base.servos[joint].gain, "max_torque": 1.0, "max_speed": min(base.max_speed, 10.0),
             "latency_s": max(base.latency_s, 0.01), "backlash": 0.01}
    if speeds:
        guess["max_speed"] = float(np.percentile(np.concatenate(speeds), 95))
    if delays:
        guess["latency_s"] = float(min(max(np.median(delays), 0.0), 0.1))
    if above and below:
        guess["backlash"] = float(min(max(np.median(above) - np.median(below), 0.0), 0.09))
    return guess


def fit_joint(replay: Replay, log: ArmLog, joint: str, repeat: int, base: ArmModel, budget: int,
              seed: int) -> tuple[dict[str, float], int]:
    """CMA-ES over the joint's five numbers, in two stages from ``initial_guess``: first the gain, speed cap,
    latency and play with the torque cap out of the way (1 N*m: a servo that never saturates), then all five from
    there with a smaller step (the torque cap shows only where the servo saturates); (best values, evaluations)."""
    import cma

    def loss_of(v: dict[str, float]) -> float:
        model = base.with_joint(joint, ServoParams(v["gain"], v["max_torque"], v["backlash"]), v["max_speed"],
                                v["latency_s"])
        return segment_error(replay, log, joint, model, repeat)

    def search(start: dict[str, float], free: tuple[int, ...], sigma: float, evaluations: int,
               stage_seed: int) -> tuple[dict[str, float], float, int]:
        x0 = _encode(start)

        def loss(x: np.ndarray) -> float:
            full = x0.copy()
            full[list(free)] = np.asarray(x)
            return loss_of(_decode(full))

        strategy = cma.CMAEvolutionStrategy(x0[list(free)], sigma, {
            "bounds": [0.0, 1.0], "maxfevals": evaluations, "popsize": POPULATION, "seed": stage_seed,
            "verbose": -9, "tolfun": 1e-14, "tolx": 1e-5})
        while not strategy.stop():
            candidates = strategy.ask()
            strategy.tell(candidates, [loss(np.asarray(c)) for c in candidates])
        best = x0.copy()
        best[list(free)] = np.asarray(strategy.result.xbest)
        return _decode(best), float(strategy.result.fbest), int(strategy.result.evaluations)

    start = initial_guess(replay, log, joint, repeat, base)
    names = [name for name, *_ in SEARCH]
    first = tuple(i for i, name in enumerate(names) if name != "max_torque")
    stage1, loss1, used1 = search(start, first, 0.15, int(budget * 0.6), seed + 1)
    stage2, loss2, used2 = search(stage1, tuple(range(len(names))), 0.08, budget - used1, seed + 2)
    best, best_loss = (stage2, loss2) if loss2 <= loss1 else (stage1, loss1)
    # the torque cap: the smallest that still reproduces the trace (within 5 % of the best error); a servo that
    # never saturated in the log fits any larger cap equally well, and the smallest is the one the log supports
    torque, probes = best["max_torque"], 0
    for factor in TORQUE_PROFILE:
        candidate = best["max_torque"] * factor
        if candidate < SEARCH[1][1]:
            break
        probes += 1
        if loss_of({**best, "max_torque": candidate}) > best_loss * 1.05 + 1e-12:
            break
        torque = candidate
    return {**best, "max_torque": torque}, used1 + used2 + probes


def identify(log: ArmLog, actuated: tuple[str, ...], budget: int = DEFAULT_BUDGET, seed: int = 0,
             progress: Callable[[str], None] | None = None, workers: int = 1) -> Identification:
    """The servo model (and sensing) of the arm that produced ``log``. The fits of one pass are independent (each
    joint's under the same model of the others), so ``workers`` processes share them; the result does not depend
    on how many."""
    say = progress or (lambda _: None)
    replay = Replay(log.env_id, log)
    try:
        before = env_model(log.env_id)
        start_speed = log.max_speed if log.max_speed is not None else 5.0
        current = ArmModel(before.servos, start_speed, 0.02)
        repeats = sorted({s.repeat for s in log.segments})
        passes = 2 if log.source == "deploy" else 1
        fits: dict[tuple[str, int], dict[str, float]] = {}
        evaluations = 0
        for number in range(passes):
            jobs = [(joint, repeat, current, budget, seed + 100 * number + 10 * repeat + JOINT_NAMES.index(joint))
                    for joint in actuated for repeat in repeats]
            for (joint, repeat, *_), (values, used) in zip(jobs, _run_fits(replay, log, jobs, workers)):
                fits[(joint, repeat)] = values
                evaluations += used
                say(f"{joint} repeat {repeat}: gain {values['gain']:.4g}, torque {values['max_torque']:.3g} N*m, "
                    f"speed {values['max_speed']:.3g} rad/s, latency {values['latency_s'] * 1000:.1f} ms, play "
                    f"{math.degrees(values['backlash']):.2f} deg")
            servos = dict(current.servos)
            for joint in actuated:
                joint_values = [fits[(joint, r)] for r in repeats]
                servos[joint] = ServoParams(_geometric([v["gain"] for v in joint_values]),
                                            _geometric([v["max_torque"] for v in joint_values]),
                                            float(np.mean([v["backlash"] for v in joint_values])))
            shared = list(fits.values())
            current = ArmModel(servos, float(np.median([v["max_speed"] for v in shared])),
                               float(np.median([v["latency_s"] for v in shared])))
        ident = Identification(
            env_id=log.env_id,
            gains={j: _estimate([fits[(j, r)]["gain"] for r in repeats], geometric=True) for j in actuated},
            max_torques={j: _estimate([fits[(j, r)]["max_torque"] for r in repeats], geometric=True)
                         for j in actuated},
            backlash={j: _estimate([fits[(j, r)]["backlash"] for r in repeats]) for j in actuated},
            max_speed=_estimate([v["max_speed"] for v in fits.values()], median=True),
            latency_s=_estimate([v["latency_s"] for v in fits.values()], median=True),
            observation_noise=0.0, rms_before={}, rms_after={}, evaluations=evaluations,
            driver_max_speed=log.max_speed)
        fitted = ident.model()
        for joint in actuated:
            ident.rms_before[joint] = math.sqrt(segment_error(replay, log, joint, before))
            ident.rms_after[joint] = math.sqrt(segment_error(replay, log, joint, fitted))
        ident.observation_noise = reading_noise(log, actuated, ident.rms_after)
        ident.tracker = tracker_estimate(log)
        ident.at_search_edge = _at_edges(fits)
        return ident
    finally:
        replay.close()


FitJob = tuple[str, int, ArmModel, int, int]  # joint, repeat, the model of the others, budget, seed
_WORKER: list[Replay] = []


def _run_fits(replay: Replay, log: ArmLog, jobs: list[FitJob], workers: int) -> list[tuple[dict[str, float], int]]:
    if workers <= 1 or len(jobs) == 1:
        return [fit_joint(replay, log, joint, repeat, base, budget, seed) for joint, repeat, base, budget, seed in jobs]
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(min(workers, len(jobs)), initializer=_init_worker, initargs=(log,)) as pool:
        return pool.map(_fit_in_worker, jobs, chunksize=1)


def _init_worker(log: ArmLog) -> None:
    _WORKER.append(Replay(log.env_id, log))


def _fit_in_worker(job: FitJob) -> tuple[dict[str, float], int]:
    joint, repeat, base, budget, seed = job
    replay = _WORKER[0]
    return fit_joint(replay, replay.log, joint, repeat, base, budget, seed)


def reading_noise(log: ArmLog, actuated: tuple[str, ...], residuals: dict[str, float]) -> float:
    """Std of the joint-angle readings: over the still start of every segment (an identification log), else the
    fit's residual (a deploy log: no holds)."""
    if log.source != "identify":
        return float(np.mean(list(residuals.values())))
    deviations = []
    for segment in log.segments:
        times, angles = log.states_in(segment)
        still = times <= segment.start_s + HOLD_S * 0.8
        if still.sum() >= 5:
            for joint in actuated:
                values = angles[still, JOINT_NAMES.index(joint)]
                deviations.append(values - values.mean())
    return float(np.std(np.concatenate(deviations))) if deviations else 0.0


def tracker_estimate(log: ArmLog) -> TrackerEstimate | None:
    """The puck tracker's latency (receipt - capture), frame period and position noise at rest, from its frames."""
    if log.puck is None or len(log.puck) < 10:
        return None
    received, captured, xy = log.puck[:, 0], log.puck[:, 1], log.puck[:, 2:4]
    return TrackerEstimate(latency_s=float(np.median(received - captured)),
                           period_s=float(np.median(np.diff(captured))), noise_m=position_noise(xy),
                           frames=len(log.puck))


def position_noise(xy: np.ndarray) -> float:
    """The per-axis std of a tracker's white position noise, robust to the puck moving meanwhile (an arm that
    reaches its start pose fast may nudge it): from the median absolute second difference of each axis (white noise
    of std s gives second differences of std s * sqrt(6); a smooth motion adds little to them), RMS over the axes."""
    second = np.diff(np.asarray(xy, dtype=float), n=2, axis=0)
    sigma = np.median(np.abs(second - np.median(second, axis=0)), axis=0) / 0.6745 / np.sqrt(6.0)
    return float(np.sqrt(np.mean(sigma ** 2)))


def _geometric(values: list[float]) -> float:
    return float(math.exp(np.mean(np.log(values))))


def _estimate(values: list[float], geometric: bool = False, median: bool = False) -> Estimate:
    if median:
        value = float(np.median(values))
        spread = float(np.std(values))
    else:
        value = _geometric(values) if geometric else float(np.mean(values))
        spread = float((max(values) - min(values)) / 2.0)
    return Estimate(value, spread, tuple(float(v) for v in values))


def _at_edges(fits: dict[tuple[str, int], dict[str, float]]) -> list[str]:
    edges = []
    for (joint, repeat), values in fits.items():
        for name, low, high, _ in SEARCH:
            if name in ("latency_s", "backlash") and values[name] <= low:
                continue  # zero latency or play is a physical value, not the box's edge
            if values[name] <= low * 1.001 or values[name] >= high * 0.999:
                edges.append(f"{joint}/{repeat}: {name}={values[name]:.4g}")
    return edges
