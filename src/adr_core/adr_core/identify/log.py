"""What an arm did, as identification reads it: the commands sent, the joint angles measured, when, and where the puck
tracker saw the puck. Two sources:

- an **identification log** (``adr-identify`` on an arm, or ``identify_arm.launch.py``): ``identify_log.csv`` with
  rows ``kind, t_s, m1..m6`` (``command``: the six targets sent [rad], at their send time; ``state``: the six angles
  measured [rad], at the driver's read stamp; ``puck``: ``m1`` = capture time, ``m2``, ``m3`` = x, y [m], at the
  receipt time) and ``identify_log.json`` beside it (format, env, joint names, the excitation's segments, the
  driver's moving speed);
- a **deploy step log** (``deploy_real`` with ``results_file:=``/``steps_file:=``): the ``real`` rows of each
  episode (command at ``t_s``: the action times pi/2 on the actuated joints, 0 on the held ones; the measured angles
  at ``t_s - feedback_age_s``); each episode is a segment in which every actuated joint moves.

Anything that cannot be identified from is refused with one line (``LogError``): a log of another task or arm, one
too short, time going backwards, a value that is not a number, a file that is missing or unreadable.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..envs.ergo_jr import JOINT_NAMES
from .excitation import Segment

LOG_CSV, LOG_JSON = "identify_log.csv", "identify_log.json"
LOG_FORMAT = 1
KINDS = ("command", "state", "puck")
MIN_STATES_PER_SEGMENT = 60  # one second of feedback at the policy's rate
EPISODE_GAP_S = 100.0  # deploy logs: episode k's times are shifted by k * this, so one time axis holds them all


class LogError(ValueError):
    """A log that cannot be identified from; the message names the file and why."""


@dataclass(frozen=True)
class ArmLog:
    env_id: str
    source: str  # "identify" or "deploy"
    command_t: np.ndarray  # (K,) s
    commands: np.ndarray  # (K, 6) rad, JOINT_NAMES order
    state_t: np.ndarray  # (M,) s
    states: np.ndarray  # (M, 6) rad
    segments: tuple[Segment, ...]
    max_speed: float | None = None  # the driver's moving speed while the log was taken [rad/s], when known
    puck: np.ndarray | None = None  # (P, 4): received_s, captured_s, x, y

    def states_in(self, segment: Segment) -> tuple[np.ndarray, np.ndarray]:
        keep = (self.state_t >= segment.start_s) & (self.state_t <= segment.end_s)
        return self.state_t[keep], self.states[keep]


def read_log(path: str | Path, env_id: str, actuated: tuple[str, ...]) -> ArmLog:
    """An identification log (its CSV, JSON or folder) or a deploy step log, checked for ``env_id``."""
    path = Path(path)
    if path.is_dir():
        path = path / LOG_CSV
    if path.suffix == ".json":
        path = path.with_suffix(".csv")
    if not path.is_file():
        raise LogError(f"{path}: no such log (an identification log folder or identify_log.csv, or a deploy steps CSV)")
    try:
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise LogError(f"{path}: cannot read it ({error})") from None
    if not rows:
        raise LogError(f"{path}: the file is empty")
    header = rows[0]
    if header[:2] == ["kind", "t_s"]:
        log = _identify_log(path, header, rows[1:], env_id)
    elif header[:4] == ["episode", "source", "step", "t_s"]:
        log = _deploy_log(path, header, rows[1:], env_id, actuated)
    else:
        raise LogError(f"{path}: neither an identification log (kind, t_s, m1..m6) nor a deploy steps CSV "
                       f"(episode, source, step, t_s, ...); its header starts {header[:4]}")
    _check_segments(path, log, actuated)
    return log


def write_log(folder: str | Path, env_id: str, command_t: list[float], commands: list[list[float]],
              state_t: list[float], states: list[list[float]], segments: tuple[Segment, ...],
              max_speed: float | None, puck: list[tuple[float, float, float, float]] | None = None) -> Path:
    """``identify_log.csv`` and ``identify_log.json`` in ``folder``; returns the CSV's path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [("command", t, values) for t, values in zip(command_t, commands)]
    rows += [("state", t, values) for t, values in zip(state_t, states)]
    rows += [("puck", received, [captured, x, y, 0.0, 0.0, 0.0]) for received, captured, x, y in puck or []]
    rows.sort(key=lambda row: (row[1], KINDS.index(row[0])))
    with (folder / LOG_CSV).open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kind", "t_s", *JOINT_NAMES])
        writer.writerows([kind, repr(float(t)), *(repr(float(v)) for v in values)] for kind, t, values in rows)
    meta = {"format": LOG_FORMAT, "env_id": env_id, "joint_names": list(JOINT_NAMES), "max_speed": max_speed,
            "segments": [{"joints": list(s.joints), "repeat": s.repeat, "start_s": s.start_s, "end_s": s.end_s}
                         for s in segments]}
    (folder / LOG_JSON).write_text(json.dumps(meta, indent=1))
    return folder / LOG_CSV


def _identify_log(path: Path, header: list[str], rows: list[list[str]], env_id: str) -> ArmLog:
    if header[2:] != list(JOINT_NAMES):
        raise LogError(f"{path}: joints {header[2:]}, not the Ergo Jr's {list(JOINT_NAMES)}: a log of another arm")
    meta_path = path.with_name(LOG_JSON)
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as error:
        raise LogError(f"{meta_path}: the log's description is missing or unreadable ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != LOG_FORMAT:
        raise LogError(f"{meta_path}: an identification log of format {LOG_FORMAT} was expected")
    if meta.get("env_id") != env_id:
        raise LogError(f"{path}: a log of {meta.get('env_id')!r}'s arm (its actuated joints), not {env_id!r}'s")
    values: dict[str, list[tuple[float, list[float]]]] = {kind: [] for kind in KINDS}
    for number, row in enumerate(rows, start=2):
        if len(row) != 2 + len(JOINT_NAMES) or row[0] not in KINDS:
            raise LogError(f"{path}:{number}: expected kind (command, state, puck), t_s and six values")
        t, numbers = _numbers(path, number, row[1:])
        values[row[0]].append((t, numbers))
    try:
        segments = tuple(Segment(tuple(s["joints"]), int(s["repeat"]), float(s["start_s"]), float(s["end_s"]))
                         for s in meta["segments"])
        max_speed = None if meta.get("max_speed") is None else float(meta["max_speed"])
    except (KeyError, TypeError, ValueError) as error:
        raise LogError(f"{meta_path}: unreadable segments or max_speed ({error})") from None
    command_t, commands = _arrays(path, "command", values["command"])
    state_t, states = _arrays(path, "state", values["state"])
    puck = None
    if values["puck"]:
        puck = np.array([[t, v[0], v[1], v[2]] for t, v in values["puck"]])
    return ArmLog(env_id, "identify", command_t, commands, state_t, states, segments, max_speed, puck)


def _deploy_log(path: Path, header: list[str], rows: list[list[str]], env_id: str,
                actuated: tuple[str, ...]) -> ArmLog:
    from ..envs import ergo_pusher, ergo_reacher

    module = {ergo_reacher.ENV_ID: ergo_reacher, ergo_pusher.ENV_ID: ergo_pusher}[env_id]
    obs = [c for c in header if c.startswith("obs_")]
    actions = [c for c in header if c.startswith("action_")]
    joints = [c.removeprefix("joint_") for c in header if c.startswith("joint_")]
    expected_obs = ergo_pusher.OBS_SIZE if env_id == ergo_pusher.ENV_ID else 2 * len(actuated) + 2
    if joints != list(JOINT_NAMES) or len(actions) != len(actuated) or len(obs) != expected_obs:
        raise LogError(f"{path}: a deploy log of {len(obs)} observations, {len(actions)} actions and joints "
                       f"{joints}; {env_id} on the Ergo Jr has {expected_obs}, {len(actuated)} and "
                       f"{list(JOINT_NAMES)}: a log of another task or arm")
    column = {name: i for i, name in enumerate(header)}
    action_columns = [column[a] for a in actions]
    joint_columns = [column[f"joint_{j}"] for j in JOINT_NAMES]
    actuated_index = [JOINT_NAMES.index(j) for j in actuated]
    episodes: dict[int, list[tuple[float, float, list[float], list[float]]]] = {}
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise LogError(f"{path}:{number}: {len(row)} values, the header has {len(header)}")
        if row[1] != "real":
            continue
        try:
            episode = int(row[0])
        except ValueError:
            raise LogError(f"{path}:{number}: episode {row[0]!r} is not a number") from None
        t, (age,) = _numbers(path, number, [row[3], row[4]])
        _, act = _numbers(path, number, ["0", *(row[i] for i in action_columns)])
        _, measured = _numbers(path, number, ["0", *(row[i] for i in joint_columns)])
        episodes.setdefault(episode, []).append((t, age, act, measured))
    if not episodes:
        raise LogError(f"{path}: no 'real' rows (steps measured on an arm)")
    command_t, commands, state_t, states, segments = [], [], [], [], []
    for k, (episode, steps) in enumerate(sorted(episodes.items())):
        times = [s[0] for s in steps]
        if any(b < a for a, b in zip(times, times[1:])):
            raise LogError(f"{path}: time goes backwards in episode {episode}")
        offset = k * EPISODE_GAP_S
        for t, age, act, measured in steps:
            targets = [0.0] * len(JOINT_NAMES)
            for i, a in zip(actuated_index, act):
                targets[i] = max(-1.0, min(1.0, a)) * module.ACTION_SCALE
            command_t.append(offset + t)
            commands.append(targets)
            state_t.append(offset + t - age)
            states.append(measured)
        segments.append(Segment(tuple(actuated), k % 2, offset + times[0] - 0.05, offset + times[-1] + 0.05))
    order = np.argsort(state_t, kind="stable")
    return ArmLog(env_id, "deploy", np.array(command_t), np.array(commands), np.array(state_t)[order],
                  np.array(states)[order], tuple(segments))


def _numbers(path: Path, number: int, cells: list[str]) -> tuple[float, list[float]]:
    try:
        values = [float(c) for c in cells]
    except ValueError:
        raise LogError(f"{path}:{number}: {cells} holds something that is not a number") from None
    if not all(math.isfinite(v) for v in values):
        raise LogError(f"{path}:{number}: a value is not a finite number ({cells})")
    return values[0], values[1:]


def _arrays(path: Path, kind: str, values: list[tuple[float, list[float]]]) -> tuple[np.ndarray, np.ndarray]:
    times = np.array([t for t, _ in values])
    if np.any(np.diff(times) < 0):
        raise LogError(f"{path}: time goes backwards in the {kind} rows")
    return times, np.array([v for _, v in values]).reshape(len(values), len(JOINT_NAMES))


def _check_segments(path: Path, log: ArmLog, actuated: tuple[str, ...]) -> None:
    if len(log.command_t) == 0:
        raise LogError(f"{path}: no commands")
    excited = {joint for segment in log.segments for joint in segment.joints}
    missing = [j for j in actuated if j not in excited]
    if missing:
        raise LogError(f"{path}: no segment moves {missing}; {log.env_id}'s actuated joints are {list(actuated)}")
    for segment in log.segments:
        times, _ = log.states_in(segment)
        if len(times) < MIN_STATES_PER_SEGMENT:
            raise LogError(f"{path}: too short: the segment of {list(segment.joints)} at "
                           f"{segment.start_s:.1f}-{segment.end_s:.1f} s has {len(times)} measurements "
                           f"(at least {MIN_STATES_PER_SEGMENT})")
