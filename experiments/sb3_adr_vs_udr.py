"""The "ADR for any learner" benchmark's verdict (issue 29; rules in docs/adr_any_learner.md, fixed before the runs):
SB3 SAC + this project's ADR against SB3 SAC + uniform DR, from the JSON records ``experiments/sb3_robot.py`` wrote.

    python -m experiments.sb3_adr_vs_udr runs/sb3_adr_vs_udr            # table + verdict (Markdown) on stdout

Rule: ADR helps when its median time to land is shorter **and** its mean solved share over the hard engines (8-11,
20 episodes each) is higher than UDR's by more than the seed-to-seed std of the paired difference; it hurts when both
go the other way by the same margin; otherwise "no difference measured". A run that never landed counts as
infinitely slow (the median is "not within the cap" when most did not land).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from adr_core.cli_types import ArgumentParser

HARD = (8.0, 9.0, 10.0, 11.0)


def load(directory: Path) -> dict[str, dict[int, dict]]:
    runs: dict[str, dict[int, dict]] = {}
    for path in sorted(directory.glob("*_s*.json")):
        record = json.loads(path.read_text())
        runs.setdefault(record["sampler"], {})[int(record["seed"])] = record
    return runs


def hard_share(record: dict) -> float:
    rows = [r for r in record["sweep"] if any(abs(r["value"] - e) < 1e-6 for e in HARD)]
    return sum(r["solved"] for r in rows) / len(rows)


def time_to_land(record: dict) -> float:
    return float(record["landed"]["train_s"]) if record.get("landed") else math.inf


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def verdict(runs: dict[str, dict[int, dict]]) -> tuple[str, list[str]]:
    adr, udr = runs.get("adr", {}), runs.get("udr", {})
    seeds = sorted(set(adr) & set(udr))
    lines = ["| seed | sampler | agent steps | training s | landed at | final return | final solved | solved 8-11 | "
             "solved per engine 8..20 |", "|---|---|---|---|---|---|---|---|---|"]
    for seed in seeds:
        for name, record in (("ADR", adr[seed]), ("UDR", udr[seed])):
            per_engine = " ".join(f"{100 * r['solved']:.0f}" for r in record["sweep"])
            landed = record.get("landed")
            landed_at = f"{landed['train_s']:.0f} s" if landed else "never"
            lines.append(f"| {seed} | {name} | {record['agent_steps']} | {record['train_s']:.0f} | {landed_at} | "
                         f"{record['final_return_mean']:.0f} | {100 * record['final_solved']:.0f} % | "
                         f"{100 * hard_share(record):.0f} % | {per_engine} |")
    if len(seeds) < 2:
        return "not enough paired seeds", lines
    differences = [hard_share(adr[s]) - hard_share(udr[s]) for s in seeds]
    mean_difference, spread = statistics.mean(differences), statistics.stdev(differences)
    t_adr, t_udr = median([time_to_land(adr[s]) for s in seeds]), median([time_to_land(udr[s]) for s in seeds])
    faster, slower = t_adr < t_udr, t_adr > t_udr
    per_seed = ", ".join(f"{100 * d:+.0f}" for d in differences)
    summary = (f"median time to land: ADR {t_adr:.0f} s, UDR {t_udr:.0f} s; solved share over engines 8-11, ADR - "
               f"UDR per seed: {per_seed} points (mean {100 * mean_difference:+.1f}, std {100 * spread:.1f})")
    if faster and mean_difference > spread:
        return f"ADR helps: {summary}", lines
    if slower and -mean_difference > spread:
        return f"ADR hurts: {summary}", lines
    return f"no difference measured: {summary}", lines


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="the --json files' folder (runs/sb3_adr_vs_udr)")
    args = parser.parse_args(argv)
    runs = load(args.directory)
    if not runs:
        print(f"no records in {args.directory}", file=sys.stderr)
        return 2
    text, lines = verdict(runs)
    print("\n".join(lines))
    print()
    print(f"**Verdict (rule of docs/adr_any_learner.md):** {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
