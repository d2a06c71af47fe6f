"""The paper's claims, decided from an adr-report directory by stated rules (reproduce.py writes claims.md with it).

Per run, the value of a setting is its final policy's mean metric there, from ``<env>_scores.csv`` (LunarLander:
episode return on the ``hard`` setting = main engine 8, 9.5, 11, every evaluation episode and seed), and the
full-range value is the mean over the run's sweep (``sweeps/<run>/sweep_points.csv``: 8, 9, ..., 20). Across the
seeds of a method: mean, sample std (ddof 1), and every per-seed value.

Rules (``n >= 2`` seeds per method involved, else "inconclusive"):
  A beats B on hard         d = mean_A - mean_B (sign flipped where lower is better), pooled s = sqrt((s_A^2 +
                            s_B^2) / 2): d > s -> reproduced; d < -s -> not reproduced; else inconclusive.
  A more consistent than B  r = s_B / s_A: r >= 2 -> reproduced; r <= 1/2 -> not reproduced; else inconclusive.
  A does well on hard       mean - s beyond the solved threshold (LunarLander: > 200) -> reproduced;
                            mean + s short of it -> not reproduced; else inconclusive.
  A fails on hard           only judged once A does well on its own training setting (reference: mean - s beyond
                            the threshold; else inconclusive: failing everywhere says nothing about the hard range);
                            then mean + s short of the threshold -> reproduced; mean - s beyond it -> not
                            reproduced; else inconclusive.
One-sided Welch t-test and F-test p-values are printed for information; they do not decide.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from adr_core.evaluation.solved import SolvedCriterion, solved_criterion

RULES = __doc__.split("Rules", 1)[1].split("\n", 1)[1].rstrip()
REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"


@dataclass
class MethodScores:
    method: str
    hard: dict[int, float] = field(default_factory=dict)  # seed -> value on the hard setting
    hard_solved: dict[int, float] = field(default_factory=dict)
    reference: dict[int, float] = field(default_factory=dict)  # seed -> value on the reference setting
    full: dict[int, float] = field(default_factory=dict)  # seed -> mean over the sweep

    @staticmethod
    def summary(values: dict[int, float]) -> tuple[float, float, int]:
        """(mean, sample std (NaN below 2 seeds), seeds)."""
        array = np.array(list(values.values()), dtype=float)
        if array.size == 0:
            return math.nan, math.nan, 0
        return float(array.mean()), float(array.std(ddof=1)) if array.size > 1 else math.nan, int(array.size)


@dataclass(frozen=True)
class Claim:
    text: str
    verdict: str
    numbers: str


def load_scores(report_dir: Path, env_id: str) -> dict[str, MethodScores]:
    criterion = solved_criterion(env_id)
    column = "return_mean" if criterion.metric == "return" else "final_distance_mean"
    short = env_id.split("/")[-1].split("-")[0].lower()
    methods: dict[str, MethodScores] = {}
    with (report_dir / f"{short}_scores.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["setting"] not in ("hard", "reference") or row[column] == "":
                continue
            scores = methods.setdefault(row["method"], MethodScores(row["method"]))
            seed = int(row["seed"])
            if row["setting"] == "reference":
                scores.reference[seed] = float(row[column])
                continue
            scores.hard[seed] = float(row[column])
            scores.hard_solved[seed] = float(row["solved_fraction"])
            sweep = report_dir / "sweeps" / row["run"] / "sweep_points.csv"
            if sweep.is_file():
                with sweep.open(newline="") as points:
                    values = [float(p[column]) for p in csv.DictReader(points) if p[column] not in ("", "nan")]
                scores.full[seed] = float(np.mean(values)) if values else math.nan
    return methods


def _num(value: float, scale: float | None = None) -> str:
    """1 decimal for returns; 4 for metrics below 1 (final distances in m), so they are not all printed as 0.0."""
    scale = abs(value) if scale is None else scale
    return f"{value:.4f}" if scale < 1 else f"{value:.1f}"


def _fmt(mean: float, std: float) -> str:
    scale = max(abs(mean), 0 if math.isnan(std) else abs(std))
    return f"{_num(mean, scale)} ± {_num(std, scale)}" if not math.isnan(std) else f"{_num(mean)} (1 seed)"


def beats(a: MethodScores | None, b: MethodScores | None, higher_is_better: bool, text: str) -> Claim:
    if a is None or b is None:
        return Claim(text, INCONCLUSIVE, "a method of the claim was not run")
    (ma, sa, na), (mb, sb, nb) = a.summary(a.hard), b.summary(b.hard)
    if na < 2 or nb < 2:
        return Claim(text, INCONCLUSIVE, f"{a.method} {_fmt(ma, sa)} vs {b.method} {_fmt(mb, sb)}: fewer than 2 seeds")
    sign = 1.0 if higher_is_better else -1.0
    d, pooled = sign * (ma - mb), math.sqrt((sa**2 + sb**2) / 2)
    verdict = REPRODUCED if d > pooled else NOT_REPRODUCED if d < -pooled else INCONCLUSIVE
    p = stats.ttest_ind(list(a.hard.values()), list(b.hard.values()), equal_var=False,
                        alternative="greater" if higher_is_better else "less").pvalue
    scale = max(abs(ma), abs(mb))
    return Claim(text, verdict, f"{a.method} {_fmt(ma, sa)} vs {b.method} {_fmt(mb, sb)}; difference "
                                f"{'+' if d >= 0 else ''}{_num(d, scale)}, pooled std {_num(pooled, scale)}; "
                                f"Welch p = {p:.3f}")


def more_consistent(a: MethodScores | None, b: MethodScores | None, text: str) -> Claim:
    if a is None or b is None:
        return Claim(text, INCONCLUSIVE, "a method of the claim was not run")
    (_, sa, na), (_, sb, nb) = a.summary(a.hard), b.summary(b.hard)
    if na < 2 or nb < 2:
        return Claim(text, INCONCLUSIVE, "fewer than 2 seeds")
    ratio = sb / sa if sa > 0 else math.inf
    verdict = REPRODUCED if ratio >= 2 else NOT_REPRODUCED if ratio <= 0.5 else INCONCLUSIVE
    p = float(stats.f.sf(ratio**2, nb - 1, na - 1)) if math.isfinite(ratio) else 0.0
    scale = max(abs(v) for v in (*a.hard.values(), *b.hard.values()))
    return Claim(text, verdict, f"std across seeds: {a.method} {_num(sa, scale)}, {b.method} {_num(sb, scale)}; "
                                f"ratio {ratio:.2f}; "
                                f"F-test p = {p:.3f}")


def _side(values: dict[int, float], criterion: SolvedCriterion) -> tuple[bool, bool]:
    """(clearly solves, clearly misses): mean -/+ std beyond / short of the solved threshold."""
    mean, std, _ = MethodScores.summary(values)
    sign = 1.0 if criterion.higher_is_better else -1.0
    worst, best = sign * mean - std, sign * mean + std  # in "higher is better" units
    return worst > sign * criterion.threshold, best < sign * criterion.threshold


def against_threshold(a: MethodScores | None, criterion: SolvedCriterion, should_solve: bool, text: str) -> Claim:
    if a is None:
        return Claim(text, INCONCLUSIVE, "the method was not run")
    mean, std, n = a.summary(a.hard)
    if n < 2:
        return Claim(text, INCONCLUSIVE, f"{a.method} {_fmt(mean, std)}: fewer than 2 seeds")
    solved = np.mean(list(a.hard_solved.values()))
    numbers = f"{a.method} {_fmt(mean, std)} ({criterion.label}); solved in {100 * solved:.0f}% of hard episodes"
    solves, misses = _side(a.hard, criterion)
    if should_solve:
        return Claim(text, REPRODUCED if solves else NOT_REPRODUCED if misses else INCONCLUSIVE, numbers)
    reference_mean, reference_std, _ = a.summary(a.reference)
    numbers += f"; reference {_fmt(reference_mean, reference_std)}"
    if not _side(a.reference, criterion)[0]:
        return Claim(text, INCONCLUSIVE, numbers + ": it does not yet do well on its own training setting")
    return Claim(text, REPRODUCED if misses else NOT_REPRODUCED if solves else INCONCLUSIVE, numbers)


def paper_claims(methods: dict[str, MethodScores], env_id: str) -> list[Claim]:
    criterion = solved_criterion(env_id)
    higher = criterion.higher_is_better
    adr, udr, oracle, baseline = (methods.get(m) for m in ("ADR", "UDR", "oracle", "baseline"))
    return [beats(adr, udr, higher, "ADR beats UDR on the hard range"),
            more_consistent(adr, udr, "ADR is more consistent across seeds than UDR (hard range)"),
            against_threshold(oracle, criterion, True, "the oracle (trained on the hard range) does well on it"),
            against_threshold(baseline, criterion, False, "the baseline (reference only) fails on the hard range")]


def claims_data(report_dir: Path, env_id: str) -> dict:
    """The numbers and verdicts as plain data (claims.json)."""
    methods = load_scores(report_dir, env_id)
    return {"env_id": env_id,
            "methods": {name: {"hard": s.hard, "hard_solved": s.hard_solved, "reference": s.reference,
                               "full": s.full}
                        for name, s in methods.items()},
            "claims": [{"claim": c.text, "verdict": c.verdict, "numbers": c.numbers}
                       for c in paper_claims(methods, env_id)]}


def claims_markdown(report_dir: Path, env_id: str, budget: int, seeds: list[int]) -> str:
    methods = load_scores(report_dir, env_id)
    criterion = solved_criterion(env_id)
    metric = "return" if criterion.metric == "return" else "final distance"
    lines = [f"# Paper claims on {env_id} at {budget} agent steps per run, seeds {seeds}", "",
             f"Metric: {metric} of each run's final policy (no exploration noise); hard = the space's 'hard' range; "
             f"full = mean over the generalization sweep. Mean ± sample std across seeds.", "",
             f"| method | seeds | hard {metric} | per seed (hard) | hard solved | reference | full range |",
             "|---|---|---|---|---|---|---|"]
    for name, scores in methods.items():
        mean, std, n = scores.summary(scores.hard)
        full_mean, full_std, _ = scores.summary(scores.full)
        reference_mean, reference_std, _ = scores.summary(scores.reference)
        per_seed = ", ".join(f"s{seed}: {_num(value, abs(mean))}" for seed, value in sorted(scores.hard.items()))
        solved = 100 * np.mean(list(scores.hard_solved.values()))
        lines.append(f"| {name} | {n} | {_fmt(mean, std)} | {per_seed} | {solved:.0f}% "
                     f"| {_fmt(reference_mean, reference_std)} | {_fmt(full_mean, full_std)} |")
    lines += ["", "| claim | verdict at this budget | numbers |", "|---|---|---|"]
    lines += [f"| {c.text} | **{c.verdict}** | {c.numbers} |" for c in paper_claims(methods, env_id)]
    lines += ["", "Rules:", "", "```", RULES, "```", "",
              "Sampling histograms: `report/figures/*_sampling_*.png`; everything else: `report/summary.md`."]
    return "\n".join(lines) + "\n"
