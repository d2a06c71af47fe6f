"""The spaces of results/pushing_transfer/diagnosis.md: the ErgoPusher space identified at 4 rad/s with one group of
dimensions removed at a time (a removed dimension runs at the simulator's default), one YAML per group in --out.

    python -m experiments.pushing_factor_spaces --out runs/factor_spaces
    python -m experiments.pusher_diagnosis scripted --space runs/factor_spaces/default_gain.yaml --seeds 10000 10030 \\
        --out scripted_default_gain.csv
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import yaml

from adr_core.cli_types import ArgumentParser

SOURCE = Path("results/identify/reference_speed4/identified.yaml")


def groups(names: list[str]) -> dict[str, list[str]]:
    def ending(*suffixes: str) -> list[str]:
        return [n for n in names if n.endswith(suffixes)]

    return {"full": [], "no_tracker": ["puck_latency", "puck_period", "puck_noise"],
            "default_servo": ending("_gain", "_max_torque"),
            "no_latency_backlash": ["action_latency", *ending("_backlash")],
            "default_torque": ending("_max_torque"), "default_gain": ending("_gain")}


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE, help="the identified space")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    source = yaml.safe_load(args.source.read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    for name, drop in groups([d["name"] for d in source["dimensions"]]).items():
        space = copy.deepcopy(source)
        space["dimensions"] = [d for d in space["dimensions"] if d["name"] not in drop]
        for named_range in space["ranges"].values():
            for key in drop:
                named_range.pop(key, None)
        space["description"] = f"diagnosis {name}: {args.source} without {drop}"
        (args.out / f"{name}.yaml").write_text(yaml.safe_dump(space, sort_keys=False))
        print(name, len(space["dimensions"]), "dimensions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
