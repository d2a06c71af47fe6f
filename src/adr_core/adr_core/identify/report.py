"""What ``adr-identify`` writes: the identified space (YAML), every estimate (JSON), a summary (Markdown) and the figure
of measured against simulated joint traces, before the fit (the env's own servos) and after."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..envs.ergo_jr import JOINT_NAMES
from ..yaml_files import write_yaml
from .fit import Identification
from .log import ArmLog
from .replay import Replay, env_model
from .space import identified_space

SPACE_FILE, ESTIMATES_FILE, SUMMARY_FILE, FIGURE_FILE = "identified.yaml", "identification.json", \
    "identification.md", "traces.png"


def write_outputs(out: str | Path, ident: Identification, log: ArmLog, source: str,
                  torque_cap: float | None = None) -> dict[str, Path]:
    """Every output file in ``out`` (created); their paths by kind. ``torque_cap``: ``identified_space``'s."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    space = identified_space(ident, f"adr-identify of {source}", torque_cap)
    data = space.to_dict()
    data["description"] = (f"{ident.env_id} as identified by adr-identify from {source}: servo model and sensing "
                           f"centred on the estimates (identification.json), ranges widened by their uncertainty")
    write_yaml(out / SPACE_FILE, data)
    (out / ESTIMATES_FILE).write_text(json.dumps({"source": source, "torque_cap": torque_cap, **ident.to_dict()},
                                                 indent=1))
    (out / SUMMARY_FILE).write_text(summary(ident, source))
    traces_figure(ident, log).savefig(out / FIGURE_FILE, dpi=110)
    return {"space": out / SPACE_FILE, "estimates": out / ESTIMATES_FILE, "summary": out / SUMMARY_FILE,
            "figure": out / FIGURE_FILE}


def summary(ident: Identification, source: str) -> str:
    lines = [f"# {ident.env_id}: the arm identified from {source}", "",
             "| joint | gain | torque cap (N·m) | gear play (deg) | RMS error before / after (deg) |",
             "|---|---|---|---|---|"]
    for joint in ident.gains:
        gain, torque, play = ident.gains[joint], ident.max_torques[joint], ident.backlash[joint]
        lines.append(f"| {joint} | {gain.value:.4g} ± {gain.uncertainty:.2g} | {torque.value:.3g} ± "
                     f"{torque.uncertainty:.2g} | {math.degrees(play.value):.2f} ± {math.degrees(play.uncertainty):.2f}"
                     f" | {math.degrees(ident.rms_before[joint]):.2f} / {math.degrees(ident.rms_after[joint]):.2f} |")
    lines += ["", f"- speed cap: {ident.max_speed.value:.3g} ± {ident.max_speed.uncertainty:.2g} rad/s"
                  + (f" (the driver's moving speed: {ident.driver_max_speed:g} rad/s)"
                     if ident.driver_max_speed is not None else ""),
              f"- latency: {ident.latency_s.value * 1000:.1f} ± {ident.latency_s.uncertainty * 1000:.1f} ms "
              f"(command sent to the joint moving, as the driver reads it)",
              f"- joint-angle readings: {math.degrees(ident.observation_noise):.3f} deg std at rest"]
    if ident.tracker is not None:
        tracker = ident.tracker
        lines.append(f"- puck tracker: {1 / tracker.period_s:.1f} frames/s, {tracker.latency_s * 1000:.0f} ms from "
                     f"capture to receipt, {tracker.noise_m * 1000:.2f} mm std at rest ({tracker.frames} frames)")
    lines.append(f"- CMA-ES evaluations: {ident.evaluations}")
    if ident.at_search_edge:
        lines.append(f"- at the edge of the search box (not identified there): {', '.join(ident.at_search_edge)}")
    return "\n".join(lines) + "\n"


def traces_figure(ident: Identification, log: ArmLog) -> Figure:
    """Each actuated joint over its first segment: measured, the env's own servos, the fitted model."""
    joints = list(ident.gains)
    figure = Figure(figsize=(10, 2.4 * len(joints)), layout="constrained")
    axes = figure.subplots(len(joints), 1, squeeze=False)[:, 0]
    replay = Replay(log.env_id, log)
    try:
        models = (("the env's servos", env_model(log.env_id), "tab:orange"), ("fitted", ident.model(), "tab:green"))
        for axis, joint in zip(axes, joints):
            segment = next(s for s in log.segments if joint in s.joints)
            times, measured = replay.measured(segment)
            index = JOINT_NAMES.index(joint)
            axis.plot(times - times[0], np.degrees(measured[:, index]), color="black", lw=1.6, label="measured")
            for label, model, color in models:
                axis.plot(times - times[0], np.degrees(replay.predict(segment, model)[:, index]), color=color,
                          lw=1.0, label=label)
            commands = (log.command_t >= segment.start_s) & (log.command_t <= segment.end_s)
            axis.step(log.command_t[commands] - times[0], np.degrees(log.commands[commands, index]), where="post",
                      color="grey", lw=0.7, ls="--", label="command")
            axis.set_ylabel(f"{joint} (deg)")
            axis.set_title(f"{joint}: RMS error {math.degrees(ident.rms_before[joint]):.2f} deg with the env's "
                           f"servos, {math.degrees(ident.rms_after[joint]):.2f} deg fitted", fontsize=9)
        axes[0].legend(loc="upper right", fontsize=8, ncols=4)
        axes[-1].set_xlabel("time in the segment (s)")
    finally:
        replay.close()
    return figure
