"""The paired rule that judges samplers beyond the paper (experiments/sampler_compare.py), on made-up runs whose
answer is known: better, worse, no difference, and the edge cases (one seed, equal means, NaN, no common seed)."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from experiments import sampler_compare as sc
from experiments.repro_sweep import load_sweep

ENGINES = [8.0 + i for i in range(13)]  # 8 .. 20, the claims grid's 13 sweep points


@pytest.mark.parametrize(("differences", "verdict"), [
    ([0.2, 0.3, 0.25, 0.2, 0.3], "better"),
    ([-0.2, -0.3, -0.25, -0.2, -0.3], "worse"),
    ([0.2, -0.1, 0.05, -0.2, 0.1], "no difference measured"),
    ([0.0, 0.0, 0.0], "no difference measured"),  # equal means, no spread
    ([0.4], "inconclusive"),  # one seed
    ([], "inconclusive"),
    ([0.1, math.nan, 0.2], "inconclusive"),
])
def test_the_rule(differences: list[float], verdict: str) -> None:
    assert sc.decide(differences) == verdict


def write_report(directory: Path, label: str, solved: dict[int, list[float]]) -> Path:
    """An adr-report folder with one run per seed of ``label``: its solved share at engines 8..20."""
    (directory / "sweeps").mkdir(parents=True)
    with (directory / "lunarlander_scores.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "seed"])
        for seed in solved:
            writer.writerow([f"run_{label}_{seed}", label, seed])
    for seed, shares in solved.items():
        run = directory / "sweeps" / f"run_{label}_{seed}"
        run.mkdir()
        with (run / "sweep_points.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["point", "swept", "main_engine_power", "episodes", "return_mean", "final_distance_mean",
                             "solved_fraction"])
            for i, (engine, share) in enumerate(zip(ENGINES, shares)):
                writer.writerow([i, "main_engine_power", engine, 50, 100.0, "", share])
    return directory


def test_a_sampler_better_at_the_hard_end_only_is_better_there_and_not_over_the_full_range(tmp_path: Path) -> None:
    base = {seed: [0.2] * 4 + [0.9] * 9 for seed in (300, 301, 302)}
    new = {seed: [0.5 + 0.05 * k] * 4 + [0.9 - 0.1 * k] * 9 for k, seed in enumerate((300, 301, 302))}
    reports = {"paper ADR": (write_report(tmp_path / "a", "ADR", base), "ADR"),
               "boundary ADR": (write_report(tmp_path / "b", "boundary ADR", new), "boundary ADR")}
    shares = {name: {r: sc.range_shares(load_sweep(d, "adr/LunarLander-v0"), label, *sc.RANGES[r])
                     for r in sc.RANGES} for name, (d, label) in reports.items()}
    assert shares["paper ADR"]["hard end"] == pytest.approx({300: 0.2, 301: 0.2, 302: 0.2})
    (hard, full) = sc.compare(shares, ["boundary ADR"], ["paper ADR"])
    assert (hard.range_name, hard.verdict) == ("hard end", "better")
    assert hard.differences == pytest.approx((0.3, 0.35, 0.4))
    # full range: 4 points +0.3..+0.4, 9 points 0 / -0.1 / -0.2 -> +0.092, +0.038, -0.015: spread beats the mean
    assert full.verdict == "no difference measured"
    assert "mean difference" in full.numbers()


def test_runs_are_paired_by_seed_and_a_missing_label_is_named(tmp_path: Path) -> None:
    a = write_report(tmp_path / "a", "ADR", {300: [0.5] * 13, 301: [0.5] * 13})
    b = write_report(tmp_path / "b", "UDR", {301: [0.7] * 13, 302: [0.1] * 13})
    shares = {name: {r: sc.range_shares(load_sweep(d, "adr/LunarLander-v0"), label, *sc.RANGES[r])
                     for r in sc.RANGES} for name, d, label in (("ADR", a, "ADR"), ("UDR", b, "UDR"))}
    (hard, _) = sc.compare(shares, ["UDR"], ["ADR"])
    assert hard.seeds == (301,) and hard.verdict == "inconclusive"  # one common seed
    with pytest.raises(ValueError, match="no runs labelled 'oracle'"):
        sc.range_shares(load_sweep(a, "adr/LunarLander-v0"), "oracle", 8, 11)


def test_the_method_argument_is_parsed_and_refused_with_the_expected_form() -> None:
    assert sc.parse_method("boundary ADR=runs/x/report:boundary ADR") == ("boundary ADR", Path("runs/x/report"),
                                                                          "boundary ADR")
    with pytest.raises(Exception, match="NAME=REPORT_DIR:LABEL"):
        sc.parse_method("runs/x/report")


def test_main_writes_the_verdicts_the_per_engine_tables_and_the_figure(tmp_path: Path) -> None:
    a = write_report(tmp_path / "a", "ADR", {300: [0.2] * 13, 301: [0.4] * 13})
    b = write_report(tmp_path / "b", "boundary ADR", {300: [0.6] * 13, 301: [1.0] * 13})
    out, figure = tmp_path / "compare.md", tmp_path / "compare.png"
    assert sc.main(["--method", f"paper ADR={a}:ADR", "--method", f"boundary ADR={b}:boundary ADR",
                    "--candidates", "boundary ADR", "--against", "paper ADR", "--out", str(out),
                    "--figure", str(figure)]) == 0
    text = out.read_text()
    assert "| boundary ADR | paper ADR | hard end | **better** |" in text  # +40, +60: mean 50 > std 14
    assert "| 8 | 30 ± 14 | 80 ± 28 |" in text  # per engine: solved % mean ± std across seeds, per method
    assert "| boundary ADR | 301 | 100 |" in text  # every seed's row
    assert figure.stat().st_size > 1000 and figure.read_bytes()[:4] == b"\x89PNG"


def test_sweeps_with_different_points_are_not_merged(tmp_path: Path) -> None:
    a = load_sweep(write_report(tmp_path / "a", "ADR", {300: [0.2] * 13}), "adr/LunarLander-v0")
    b = load_sweep(write_report(tmp_path / "b", "UDR", {300: [0.2] * 13}), "adr/LunarLander-v0")
    shifted = sc.Sweep(b.dimension, tuple(v + 0.5 for v in b.values), b.methods, b.episodes)
    assert list(sc.merged_sweep({"x": (a, "ADR"), "y": (b, "UDR")}).methods) == ["x", "y"]
    with pytest.raises(ValueError, match="y: its sweep"):
        sc.merged_sweep({"x": (a, "ADR"), "y": (shifted, "UDR")})
