"""adr-identify's accuracy against stand-in settings of known values (issue 59's targets).

    python -m experiments.identify_accuracy slow_laggy=runs/identify/slow_laggy_fit300 \\
        stiff_quick=runs/identify/stiff_quick_fit300 worn=runs/identify/worn_fit300 --out results/identify/accuracy.md

Each SETTING=FOLDER pairs a setting of the stand-in's packaged standin.yaml with the output folder of `adr-identify`
on a log recorded from that setting (its identification.json). The known values: the stand-in's servo model with the
setting applied; the arm's speed cap is the smaller of the servo's no-load speed and the driver's moving speed the log
was recorded at. Targets (issue 59): latency within one control step, speed cap within 15 %, gear play within 0.5
degrees, gain within 30 %, per actuated joint. The latency the fit sees includes the driver's loop and read (the
reference setting: 20 ms set, 30.7 ms measured), so the table also shows the error after that offset.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from adr_core.cli_types import ArgumentParser


def known_values(setting: str, driver_speed: float) -> dict[str, float]:
    from poppy_standin.settings import load

    servo = load(setting).servo
    return {"gain": servo.position_gain, "latency_s": servo.latency_s, "backlash_deg": servo.backlash_deg,
            "speed": min(servo.no_load_speed_rad_s, driver_speed)}


def rows(pairs: list[tuple[str, Path]], offset_s: float) -> list[str]:
    from adr_core.identify.excitation import CONTROL_PERIOD_S

    lines = ["| setting | quantity | known | estimated | error | target | met |", "|---|---|---|---|---|---|---|"]
    met_all = True
    for setting, folder in pairs:
        ident = json.loads((folder / "identification.json").read_text())
        known = known_values(setting, float(ident["driver_max_speed"]))

        def add(quantity: str, truth: float, estimate: float, error: float, target: str, ok: bool,
                setting: str = setting) -> None:
            nonlocal met_all
            met_all = met_all and ok
            lines.append(f"| {setting} | {quantity} | {truth:.4g} | {estimate:.4g} | {error:.3g} | {target} | "
                         f"{'yes' if ok else '**no**'} |")

        latency = float(ident["latency_s"]["value"])
        add("latency (s)", known["latency_s"], latency, latency - known["latency_s"],
            f"< {CONTROL_PERIOD_S:g} s", abs(latency - known["latency_s"]) < CONTROL_PERIOD_S)
        add("latency less the pipeline (s)", known["latency_s"], latency - offset_s,
            latency - offset_s - known["latency_s"], f"< {CONTROL_PERIOD_S:g} s",
            abs(latency - offset_s - known["latency_s"]) < CONTROL_PERIOD_S)
        speed = float(ident["max_speed"]["value"])
        add("speed cap (rad/s)", known["speed"], speed, speed / known["speed"] - 1, "15 %",
            abs(speed / known["speed"] - 1) <= 0.15)
        for joint in sorted(ident["gains"]):
            gain = float(ident["gains"][joint]["value"])
            add(f"{joint} gain", known["gain"], gain, gain / known["gain"] - 1, "30 %",
                abs(gain / known["gain"] - 1) <= 0.30)
            play = math.degrees(float(ident["backlash"][joint]["value"]))
            add(f"{joint} gear play (deg)", known["backlash_deg"], play, play - known["backlash_deg"], "0.5 deg",
                abs(play - known["backlash_deg"]) <= 0.5)
    lines.append("")
    lines.append(f"Every target met: {'yes' if met_all else 'no'}.")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="identify_accuracy", description=__doc__)
    parser.add_argument("pairs", nargs="+", help="SETTING=FOLDER")
    parser.add_argument("--pipeline-s", type=float, default=0.0107,
                        help="the driver's own latency, measured on the reference setting (30.7 - 20 ms) [0.0107]")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    pairs = []
    for item in args.pairs:
        setting, _, folder = item.partition("=")
        if not folder or not (Path(folder) / "identification.json").is_file():
            parser.error(f"{item}: expected SETTING=FOLDER with FOLDER/identification.json")
        pairs.append((setting, Path(folder)))
    text = "\n".join(rows(pairs, args.pipeline_s)) + "\n"
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
