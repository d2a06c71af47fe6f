"""Apply the pre-registered decision rule of results/adr_collapse/rules.md to the runs done (issue 60, item 3).

    python -m experiments.adr_collapse_outcome RUNS_ROOT [--out results/adr_collapse/outcome.md]

RUNS_ROOT holds ``<arm>/s<seed>/`` as `experiments.reproduce` wrote them (``adr``, ``no_lfr``, ``constant``; the
reproducibility check's ADR run of seed 503 in ``adr_repro/s503`` stands for ADR's arm there). Per run: the final
policy's sweep (13 engine settings 8-20, 50 episodes each, ``report/sweeps/*/sweep_points.csv``), its solved share
over the whole sweep and the hard end (8-11), "collapsed" when under 10 % of the sweep is solved, the mean episode
length over the last 5 iterations and the engines the sampler proposed over the last 5 iterations (mean,
sd). Seeds count only when all three arms finished, in the rules' order. The test: per variant, an exact
one-sided sign test (McNemar) on the discordant pairs against ADR, Holm across the two variants at alpha 0.05.
"""
from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

from adr_core.cli_types import ArgumentParser

ORDER = (503, 500, 505, 501, 506, 502, 513, 504, 519, 507, 520, 508, 526, 527, 529, 531, 532)
COLLAPSED_IN_CAMPAIGN = {503, 505, 506, 513, 519, 520, 526, 527, 529, 531, 532}
ARMS = ("adr", "no_lfr", "constant")
VARIANTS = ("no_lfr", "constant")
COLLAPSE = 0.10
ALPHA = 0.05
HARD = (8.0, 11.0)


def run_dir(root: Path, arm: str, seed: int) -> Path | None:
    for candidate in ([root / "adr_repro" / f"s{seed}"] if arm == "adr" else []) + [root / arm / f"s{seed}"]:
        if list(candidate.glob("report/sweeps/*/sweep_points.csv")):
            return candidate
    return None


def measure(folder: Path) -> dict[str, float]:
    points = list(csv.DictReader(next(folder.glob("report/sweeps/*/sweep_points.csv")).open()))
    solved = [float(p["solved_fraction"]) for p in points]
    hard = [float(p["solved_fraction"]) for p in points if HARD[0] <= float(p["main_engine_power"]) <= HARD[1]]
    metrics = list(csv.DictReader(next(folder.glob("runs/*/metrics.csv")).open()))
    proposals = list(csv.DictReader(next(folder.glob("runs/*/sampled_parameters.csv")).open()))
    last = {int(row["iteration"]) for row in proposals}
    tail = sorted(last)[-5:]
    engines = [float(row["main_engine_power"]) for row in proposals if int(row["iteration"]) in tail]
    return {"sweep": sum(solved) / len(solved), "hard": sum(hard) / len(hard),
            "length": sum(float(r["length_mean"]) for r in metrics[-5:]) / len(metrics[-5:]),
            "engine": sum(engines) / len(engines),
            "spread": (sum((e - sum(engines) / len(engines)) ** 2 for e in engines) / len(engines)) ** 0.5,
            "steps": float(metrics[-1]["agent_steps"])}


def sign_test(b: int, c: int) -> float:
    """P[Binomial(b + c, 1/2) >= b]: one-sided, the variant collapses less than ADR."""
    n = b + c
    return sum(math.comb(n, k) for k in range(b, n + 1)) / 2 ** n if n else 1.0


def t_interval(diffs: list[float]) -> tuple[float, float, float]:
    from scipy import stats

    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return mean, float("nan"), float("nan")
    sd = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5
    half = stats.t.ppf(0.975, n - 1) * sd / n ** 0.5
    return mean, mean - half, mean + half


def outcome(root: Path) -> str:
    rows: dict[int, dict[str, dict[str, float]]] = {}
    for seed in ORDER:
        folders = {arm: run_dir(root, arm, seed) for arm in ARMS}
        if any(folder is None for folder in folders.values()):
            continue
        rows[seed] = {arm: measure(folder) for arm, folder in folders.items()}  # type: ignore[arg-type]
    lines = [f"Seeds with all three arms done: {len(rows)} of {len(ORDER)} ({', '.join(map(str, rows))}).", "",
             "| seed | collapsed in the campaign | " + " | ".join(
                 f"{arm}: sweep / hard / length / engine (sd)" for arm in ARMS) + " |",
             "|---|---|" + "---|" * len(ARMS)]
    for seed, arms in rows.items():
        cells = [f"{a['sweep']:.0%} / {a['hard']:.0%} / {a['length']:.0f} / {a['engine']:.1f} ({a['spread']:.1f})"
                 + (" **collapsed**" if a["sweep"] < COLLAPSE else "") for a in arms.values()]
        lines.append(f"| {seed} | {'yes' if seed in COLLAPSED_IN_CAMPAIGN else 'no'} | " + " | ".join(cells) + " |")
    lines += ["", "Collapses (under 10 % of the sweep solved): " + ", ".join(
        f"{arm} {sum(r[arm]['sweep'] < COLLAPSE for r in rows.values())}/{len(rows)}" for arm in ARMS), ""]
    tests = []
    for variant in VARIANTS:
        b = sum(r["adr"]["sweep"] < COLLAPSE <= r[variant]["sweep"] for r in rows.values())
        c = sum(r[variant]["sweep"] < COLLAPSE <= r["adr"]["sweep"] for r in rows.values())
        tests.append((variant, b, c, sign_test(b, c)))
    ranked = sorted(tests, key=lambda t: t[3])
    passed: dict[str, bool] = {}
    still = True
    for rank, (variant, _b, _c, p) in enumerate(ranked):
        still = still and p <= ALPHA / (len(ranked) - rank)
        passed[variant] = still
    lines += ["| variant | b (ADR collapsed, variant not) | c (the reverse) | one-sided p | Holm at 0.05 | "
              "sweep share minus ADR's, mean [95 % t] | hard end minus ADR's |", "|---|---|---|---|---|---|---|"]
    for variant, b, c, p in tests:
        sweep = t_interval([r[variant]["sweep"] - r["adr"]["sweep"] for r in rows.values()])
        hard = t_interval([r[variant]["hard"] - r["adr"]["hard"] for r in rows.values()])
        lines.append(f"| {variant} | {b} | {c} | {p:.3g} | {'passes' if passed[variant] else 'fails'} | "
                     f"{sweep[0]:+.1%} [{sweep[1]:+.1%}, {sweep[2]:+.1%}] | "
                     f"{hard[0]:+.1%} [{hard[1]:+.1%}, {hard[2]:+.1%}] |")
    reading = {(True, False): "the agent's reference data causes the collapse, not the sampler",
               (False, True): "the sampler's discriminator-driven proposals cause it",
               (True, True): "removing either is enough (they act together)",
               (False, False): "neither alone: the cause lies in what both keep (the agent under ADR's iteration "
                               "structure)"}[(passed["no_lfr"], passed["constant"])]
    lines += ["", f"Reading by the rule: {reading}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="adr_collapse_outcome", description=__doc__)
    parser.add_argument("root", type=Path, help="the campaign's runs folder (runs/adr_collapse)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"{args.root}: no such folder")
    text = outcome(args.root)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
