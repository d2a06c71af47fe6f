"""Samplers side by side on what users care about: the solved share of each run's final policy over the hard end of
the range and over the whole range, paired by seed, decided by the rule of results/paper_claims/paper_claims.md
"Beyond the paper" (fixed before the runs):

    per seed i: v_i = mean solved share over the sweep points in the range (hard end: main engine 8..11; full: 8..20)
    d_i = v_i(candidate) - v_i(other), over the seeds both ran;  m = mean(d), s = std(d) (n - 1)
    m > s -> better;  m < -s -> worse;  otherwise no difference measured  (fewer than 2 pairs, or NaN: inconclusive)

Other envs than LunarLander (ErgoReacher) are judged on the space's 'hard' setting of the report's scores table
and on the mean solved share over every point of the generalization sweep (``OTHER_RANGES``).

Each method is a report directory of ``experiments.reproduce`` (adr-report's ``sweeps/<run>/sweep_points.csv``) and
the label its runs carry there, so runs of separate grids that share the rules (same preset, budget, seeds,
evaluation) can be compared; nothing is evaluated again.

    python -m experiments.sampler_compare --env adr/LunarLander-v0 \\
        --method "paper ADR=runs/claims_ll/report:ADR" --method "UDR=runs/claims_ll/report:UDR" \\
        --method "boundary ADR=runs/beyond_boundary/report:boundary ADR" \\
        --method "failure-aware ADR=runs/beyond_failure_aware/report:ADR" \\
        --candidates "boundary ADR" "failure-aware ADR" --against "paper ADR" UDR --out runs/beyond_compare.md \\
        --figure runs/beyond_compare.png

``--rule paired-t`` is the issue-44 rule (results/samplers/rules.md, fixed before its runs): per comparison a
two-sided paired t-test of the d_i at alpha 0.05 (better / worse / no difference detected), the mean difference
with its 95 % t-interval and n, and the same verdicts after a Holm correction across every comparison of the
table; ``--planned-seeds N`` marks every comparison with fewer than N pairs "partial (n of N)" instead of a verdict
(the campaign's decision waits for its planned seeds), the numbers shown all the same.

--out also gets every method's solved % and metric per sweep point (mean ± std across seeds, every seed's row);
--figure draws the solved % per sweep point: every method's mean, then each method's seeds.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adr_core.cli_types import ArgumentParser
from experiments.repro_sweep import Sweep, load_sweep, runs_of, sweep_markdown

RANGES = {"hard end": (8.0, 11.0), "full range": (-math.inf, math.inf)}  # LunarLander main engine, inclusive
LUNAR_LANDER = "adr/LunarLander-v0"
# other envs (ErgoReacher: results/samplers/rules.md): the space's 'hard' setting of the report's scores table, and
# the mean solved share over every point of the generalization sweep (every swept dimension)
OTHER_RANGES = ("hard setting", "full sweep")


@dataclass(frozen=True)
class Comparison:
    candidate: str
    other: str
    range_name: str
    seeds: tuple[int, ...]
    differences: tuple[float, ...]  # per paired seed, candidate - other (solved share, 0..1)
    verdict: str

    def numbers(self) -> str:
        d = np.asarray(self.differences)
        if d.size == 0:
            return "no seed in common"
        std = f", std {100 * d.std(ddof=1):.1f}" if d.size > 1 else ""
        per_seed = ", ".join(f"s{s}: {100 * x:+.0f}" for s, x in zip(self.seeds, d))
        return f"mean difference {100 * d.mean():+.1f} points{std} ({per_seed})"


ALPHA = 0.05


@dataclass(frozen=True)
class PairedTest:
    """The paired t-test of one comparison (``--rule paired-t``); p is NaN when it cannot be computed."""
    n: int
    mean: float
    low: float  # 95 % t-interval of the mean difference
    high: float
    p: float

    @classmethod
    def of(cls, differences: tuple[float, ...]) -> PairedTest:
        from scipy import stats

        d = np.asarray(differences, float)
        if d.size < 2 or not np.all(np.isfinite(d)):
            return cls(int(d.size), float(d.mean()) if d.size else math.nan, math.nan, math.nan, math.nan)
        mean, sem = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
        if sem <= 1e-12:  # no spread (to rounding): no t-test; equal runs are no difference, a shift is one
            return cls(int(d.size), mean, mean, mean, 1.0 if mean == 0.0 else 0.0)
        half = float(stats.t.ppf(1 - ALPHA / 2, d.size - 1)) * sem
        p = float(stats.ttest_1samp(d, 0.0).pvalue)
        return cls(int(d.size), mean, mean - half, mean + half, p)

    def verdict(self, rejected: bool) -> str:
        if math.isnan(self.p):
            return "inconclusive"
        if not rejected:
            return "no difference detected"
        return "better" if self.mean > 0 else "worse"


def holm(p_values: list[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down: which hypotheses are rejected at family-wise level alpha (NaN p: never, and not counted)."""
    order = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    rejected = [False] * len(p_values)
    for rank, (p, i) in enumerate(order):
        if p >= alpha / (len(order) - rank):
            break
        rejected[i] = True
    return rejected


def paired_t_verdicts(comparisons: list[Comparison], planned: int = 0) -> list[tuple[PairedTest, str, str]]:
    """Per comparison: its test, the raw verdict and the Holm-corrected one (across the list); with ``planned``
    seeds, a comparison of fewer pairs is 'partial (n of planned)' both ways."""
    tests = [PairedTest.of(c.differences) for c in comparisons]
    corrected = holm([t.p for t in tests])
    out = []
    for test, rejected in zip(tests, corrected):
        if test.n < planned:
            partial = f"partial ({test.n} of {planned})"
            out.append((test, partial, partial))
        else:
            out.append((test, test.verdict(test.p < ALPHA), test.verdict(rejected)))
    return out


def paired_t_markdown(comparisons: list[Comparison], planned: int = 0) -> str:
    lines = ["| candidate | against | range | verdict (p < 0.05) | Holm-corrected | mean difference [95 % CI], "
             "points | p | n | per seed |", "|---|---|---|---|---|---|---|---|---|"]
    for c, (t, raw, corrected) in zip(comparisons, paired_t_verdicts(comparisons, planned)):
        interval = f"[{100 * t.low:+.1f}, {100 * t.high:+.1f}]" if not math.isnan(t.low) else "[-]"
        per_seed = ", ".join(f"s{s}: {100 * x:+.0f}" for s, x in zip(c.seeds, c.differences))
        lines.append(f"| {c.candidate} | {c.other} | {c.range_name} | **{raw}** | **{corrected}** | "
                     f"{100 * t.mean:+.1f} {interval} | {t.p:.3g} | {t.n} | {per_seed} |")
    return "\n".join(lines) + "\n"


def decide(differences: list[float]) -> str:
    """The rule of the module docstring on paired differences."""
    d = np.asarray(differences, float)
    if d.size < 2 or not np.all(np.isfinite(d)):
        return "inconclusive"
    m, s = d.mean(), d.std(ddof=1)
    if m > s:
        return "better"
    if m < -s:
        return "worse"
    return "no difference measured"


def range_shares(sweep: Sweep, label: str, low: float, high: float) -> dict[int, float]:
    """Per seed of the runs labelled ``label``: the mean solved share over the sweep points in [low, high]."""
    if label not in sweep.methods:
        raise ValueError(f"no runs labelled {label!r}; the report has {sorted(sweep.methods)}")
    points = [i for i, value in enumerate(sweep.values) if low <= value <= high]
    seeds = set.intersection(*(set(sweep.methods[label][i].solved) for i in points))
    return {seed: float(np.mean([sweep.methods[label][i].solved[seed] for i in points])) for seed in sorted(seeds)}


def setting_shares(report_dir: Path, env_id: str, label: str, setting: str = "hard") -> dict[int, float]:
    """Per seed of the runs labelled ``label``: the solved share at ``setting`` in the report's scores table."""
    short = env_id.split("/")[-1].split("-")[0].lower()
    with (report_dir / f"{short}_scores.csv").open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["method"] == label]
    if not rows:
        raise ValueError(f"no runs labelled {label!r} in {report_dir}")
    return {int(r["seed"]): float(r["solved_fraction"]) for r in sorted(rows, key=lambda r: int(r["seed"]))
            if r["setting"] == setting}


def sweep_shares(report_dir: Path, env_id: str, label: str) -> dict[int, float]:
    """Per seed of the runs labelled ``label``: the mean solved share over every point of its sweep."""
    shares = {}
    for run, (method, seed) in sorted(runs_of(report_dir, env_id).items()):
        path = report_dir / "sweeps" / run / "sweep_points.csv"
        if method == label and path.is_file():
            with path.open(newline="") as handle:
                shares[seed] = float(np.mean([float(r["solved_fraction"]) for r in csv.DictReader(handle)]))
    return dict(sorted(shares.items()))


def method_shares(report_dir: Path, env_id: str, label: str, sweep: Sweep) -> dict[str, dict[int, float]]:
    """range name -> seed -> solved share, for the runs labelled ``label`` (LunarLander: RANGES on its sweep)."""
    if env_id == LUNAR_LANDER:
        return {r: range_shares(sweep, label, *RANGES[r]) for r in RANGES}
    return {"hard setting": setting_shares(report_dir, env_id, label), "full sweep": sweep_shares(report_dir, env_id,
                                                                                                  label)}


def compare(shares: dict[str, dict[str, dict[int, float]]], candidates: list[str],
            against: list[str]) -> list[Comparison]:
    """``shares[method][range][seed]`` -> every candidate against every other method, per range."""
    out = []
    for candidate in candidates:
        for other in against:
            for range_name in shares[candidate]:
                a, b = shares[candidate][range_name], shares[other][range_name]
                seeds = tuple(sorted(set(a) & set(b)))
                differences = [a[s] - b[s] for s in seeds]
                out.append(Comparison(candidate, other, range_name, seeds, tuple(differences), decide(differences)))
    return out


def markdown(comparisons: list[Comparison]) -> str:
    lines = ["| candidate | against | range | verdict | numbers (solved %, paired by seed) |", "|---|---|---|---|---|"]
    for c in comparisons:
        lines.append(f"| {c.candidate} | {c.other} | {c.range_name} | **{c.verdict}** | {c.numbers()} |")
    return "\n".join(lines) + "\n"


def merged_sweep(sweeps: dict[str, tuple[Sweep, str]]) -> Sweep:
    """``{name: (report's sweep, label)}`` -> one sweep whose methods are the names; the points must agree."""
    first = next(iter(sweeps.values()))[0]
    for name, (sweep, _) in sweeps.items():
        if (sweep.dimension, sweep.values, sweep.episodes) != (first.dimension, first.values, first.episodes):
            raise ValueError(f"{name}: its sweep ({sweep.dimension} at {sweep.values}, {sweep.episodes} episodes) "
                             f"differs from {first.dimension} at {first.values}, {first.episodes} episodes")
    return Sweep(first.dimension, first.values, {name: sweep.methods[label] for name, (sweep, label) in
                                                 sweeps.items()}, first.episodes)


def solved_figure(sweep: Sweep, out: Path, env_id: str) -> Path:
    """Solved % per sweep point: every method's mean across seeds (first panel), then one panel per method with
    each seed's line (outcomes are often bimodal across seeds, which a mean ± std band hides); the hard end shaded."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(sweep.methods)
    figure, axes = plt.subplots(1, 1 + len(names), figsize=(3.0 * (1 + len(names)), 3.2), sharey=True,
                                squeeze=False)
    values = np.array(sweep.values)
    low, high = RANGES["hard end"] if env_id == LUNAR_LANDER else (math.nan, math.nan)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, name in enumerate(names):
        points = sweep.methods[name]
        seeds = sorted(set.intersection(*(set(p.solved) for p in points)))
        shares = 100 * np.array([[p.solved[s] for p in points] for s in seeds])
        colour = colours[k % len(colours)]
        axes[0][0].plot(values, shares.mean(axis=0), marker="o", markersize=3, color=colour,
                        label=f"{name} ({len(seeds)} seeds)")
        ax = axes[0][1 + k]
        for seed, row in zip(seeds, shares):
            ax.plot(values, row, color=colour, alpha=0.45, linewidth=1)
            ax.annotate(str(seed), (values[-1], row[-1]), fontsize=6, color=colour, alpha=0.8)
        ax.plot(values, shares.mean(axis=0), color=colour, linewidth=2.2, label="mean")
        ax.set_title(f"{name}: each seed", fontsize=9)
    for ax in axes[0]:
        if env_id == LUNAR_LANDER:
            ax.axvspan(low, high, color="0.92")
        ax.set_xlabel(sweep.dimension, fontsize=8)
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0][0].set_title("mean across seeds", fontsize=9)
    axes[0][0].set_ylabel(f"solved % ({sweep.episodes} episodes per point)")
    axes[0][0].legend(fontsize=6, loc="lower right")
    shaded = f" (hard end {low:g}-{high:g} shaded)" if env_id == LUNAR_LANDER else f" ({sweep.dimension} sweep)"
    figure.suptitle(f"{env_id}: each run's final policy{shaded}", fontsize=9)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)
    return out


def parse_method(text: str) -> tuple[str, Path, str]:
    """'NAME=REPORT_DIR:LABEL' -> (name, report dir, label)."""
    name, sep, rest = text.partition("=")
    directory, colon, label = rest.rpartition(":")
    if not (sep and colon and name and directory and label):
        raise argparse.ArgumentTypeError(f"--method {text!r}: expected NAME=REPORT_DIR:LABEL")
    return name, Path(directory), label


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="adr/LunarLander-v0")
    parser.add_argument("--method", type=parse_method, action="append", required=True,
                        metavar="NAME=REPORT_DIR:LABEL")
    parser.add_argument("--candidates", nargs="+", required=True)
    parser.add_argument("--against", nargs="+", required=True)
    parser.add_argument("--rule", choices=("spread", "paired-t"), default="spread",
                        help="spread: mean difference beyond one std (results/paper_claims/paper_claims.md); "
                             "paired-t: paired t-test with a Holm correction over the table (issue 44, "
                             "results/samplers/rules.md)")
    parser.add_argument("--planned-seeds", type=int, default=0, metavar="N",
                        help="paired-t: comparisons with fewer than N pairs are reported as partial [0: none]")
    parser.add_argument("--out", type=Path, help="also write the verdicts and the per-point tables here")
    parser.add_argument("--figure", type=Path, help="draw each method's solved %% per sweep point here (PNG)")
    args = parser.parse_args(argv)
    methods = {name: (directory, label) for name, directory, label in args.method}
    unknown = sorted(set(args.candidates + args.against) - set(methods))
    if unknown:
        parser.error(f"{unknown} not given with --method; given: {sorted(methods)}")
    sweeps = {d: load_sweep(d, args.env) for d, _ in methods.values()}  # each report read once
    shares = {name: method_shares(d, args.env, label, sweeps[d]) for name, (d, label) in methods.items()}
    if args.planned_seeds < 0:
        parser.error(f"--planned-seeds must be >= 0, got {args.planned_seeds}")
    comparisons = compare(shares, args.candidates, args.against)
    text = (paired_t_markdown(comparisons, args.planned_seeds) if args.rule == "paired-t" else
            markdown(comparisons))
    print(text)
    merged = merged_sweep({name: (sweeps[d], label) for name, (d, label) in methods.items()})
    if args.out:
        args.out.write_text(text + "\n" + sweep_markdown(merged, args.env))
    if args.figure:
        print(f"figure: {solved_figure(merged, args.figure, args.env)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
