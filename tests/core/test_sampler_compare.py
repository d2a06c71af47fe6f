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


def test_holm_rejects_step_down_and_stops_at_the_first_kept_hypothesis() -> None:
    # 4 tests, in any order: 0.01 < 0.05/4, 0.015 < 0.05/3, 0.03 >= 0.05/2 -> stop (0.04 is kept too)
    assert sc.holm([0.03, 0.01, 0.015, 0.04]) == [False, True, True, False]
    assert sc.holm([0.03, 0.01, 0.02, 0.04]) == [False, True, False, False]  # 0.02 >= 0.05/3
    assert sc.holm([0.012, 0.013]) == [True, True]  # 0.012 < 0.025, 0.013 < 0.05
    assert sc.holm([0.03, math.nan]) == [True, False]  # a NaN is not counted: 0.03 < 0.05/1
    assert sc.holm([0.2, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007]) == [False] + [True] * 7


def test_the_paired_t_rule_on_known_differences() -> None:
    better = sc.PairedTest.of((0.2, 0.3, 0.25, 0.2, 0.3))  # std 0.05, t = 0.25 / (0.05 / sqrt 5) = 11.18, 4 df
    assert better.n == 5 and better.mean == pytest.approx(0.25) and better.p == pytest.approx(3.64e-4, rel=0.01)
    assert better.low == pytest.approx(0.25 - 2.776 * 0.0224, abs=1e-3) and better.verdict(True) == "better"
    noise = sc.PairedTest.of((0.2, -0.1, 0.05, -0.2, 0.1))
    assert noise.p > 0.5 and noise.verdict(noise.p < 0.05) == "no difference detected"
    assert sc.PairedTest.of((-0.1, -0.1, -0.1)).verdict(True) == "worse"  # no spread, a constant shift
    assert sc.PairedTest.of((0.0, 0.0)).p == 1.0
    assert sc.PairedTest.of((0.4,)).verdict(True) == "inconclusive"
    assert sc.PairedTest.of((0.1, math.nan)).verdict(True) == "inconclusive"


def comparison(differences: tuple[float, ...], other: str = "UDR") -> sc.Comparison:
    return sc.Comparison("ALP-GMM", other, "hard end", tuple(range(500, 500 + len(differences))), differences, "")


def test_holm_can_take_back_a_raw_verdict_and_unplanned_seeds_are_partial() -> None:
    weak = comparison((0.30, -0.05, 0.25, 0.20, 0.05, 0.15))  # p about 0.04: better raw, not after Holm over 3
    null = comparison((0.1, -0.1, 0.05, -0.05, 0.0, 0.02), "ADR")
    (_, raw, corrected), _ = sc.paired_t_verdicts([weak, null])[0], None
    assert raw == "better" and corrected == "no difference detected"
    three = sc.paired_t_verdicts([weak, null, null])
    assert [v[1:] for v in three][1:] == [("no difference detected",) * 2] * 2
    partial = sc.paired_t_verdicts([weak], planned=33)
    assert partial[0][1:] == ("partial (6 of 33)", "partial (6 of 33)")
    table = sc.paired_t_markdown([weak], planned=33)
    assert "partial (6 of 33)" in table and "| 6 | s500: +30" in table


def test_main_with_the_paired_t_rule(tmp_path: Path) -> None:
    a = write_report(tmp_path / "a", "UDR", {s: [0.2] * 13 for s in range(500, 506)})
    b = write_report(tmp_path / "b", "ALP-GMM", {s: [0.2 + 0.1 + 0.01 * k] * 13 for k, s in enumerate(range(500, 506))})
    out = tmp_path / "compare.md"
    assert sc.main(["--method", f"UDR={a}:UDR", "--method", f"ALP-GMM={b}:ALP-GMM", "--candidates", "ALP-GMM",
                    "--against", "UDR", "--rule", "paired-t", "--out", str(out)]) == 0
    assert "| ALP-GMM | UDR | hard end | **better** | **better** | +12.5" in out.read_text()
    with pytest.raises(SystemExit):
        sc.main(["--method", f"UDR={a}:UDR", "--candidates", "UDR", "--against", "UDR", "--rule", "paired-t",
                 "--planned-seeds", "-1"])


def write_robot_report(directory: Path, label: str, hard: dict[int, float], sweep: dict[int, list[float]]) -> Path:
    """An ErgoReacher adr-report folder: the scores table's reference/hard rows and a two-dimension sweep per run."""
    (directory / "sweeps").mkdir(parents=True)
    with (directory / "ergoreacher_scores.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "seed", "setting", "solved_fraction"])
        for seed, share in hard.items():
            writer.writerow([f"run_{label}_{seed}", label, seed, "reference", 1.0])
            writer.writerow([f"run_{label}_{seed}", label, seed, "hard", share])
    for seed, shares in sweep.items():
        run = directory / "sweeps" / f"run_{label}_{seed}"
        run.mkdir()
        with (run / "sweep_points.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["point", "swept", "gain_m1", "gain_m2", "episodes", "return_mean", "final_distance_mean",
                             "solved_fraction"])
            for i, share in enumerate(shares):  # first half sweeps gain_m1, second half gain_m2
                swept = "gain_m1" if i < len(shares) // 2 else "gain_m2"
                writer.writerow([i, swept, 1.0 + i, 1.0, 20, -3.0, 0.02, share])
    return directory


def test_a_robot_env_is_judged_on_its_hard_setting_and_its_whole_sweep(tmp_path: Path) -> None:
    seeds = range(510, 514)
    udr = write_robot_report(tmp_path / "u", "UDR", {s: 0.80 for s in seeds}, {s: [0.9, 0.7, 0.8, 0.6] for s in seeds})
    alp = write_robot_report(tmp_path / "a", "ALP-GMM", {s: 0.90 + 0.01 * (s - 510) for s in seeds},
                             {s: [0.9, 0.7, 0.8, 0.6] for s in seeds})
    shares = sc.method_shares(alp, "adr/ErgoReacher-v0", "ALP-GMM", load_sweep(alp, "adr/ErgoReacher-v0"))
    assert list(shares) == ["hard setting", "full sweep"]
    assert shares["hard setting"] == pytest.approx({510: 0.90, 511: 0.91, 512: 0.92, 513: 0.93})
    assert shares["full sweep"] == pytest.approx({s: 0.75 for s in seeds})  # every point of both dimensions
    out = tmp_path / "compare.md"
    assert sc.main(["--env", "adr/ErgoReacher-v0", "--method", f"UDR={udr}:UDR", "--method", f"ALP-GMM={alp}:ALP-GMM",
                    "--candidates", "ALP-GMM", "--against", "UDR", "--rule", "paired-t", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| ALP-GMM | UDR | hard setting | **better** |" in text
    assert "| ALP-GMM | UDR | full sweep | **no difference detected** |" in text
    with pytest.raises(ValueError, match="no runs labelled 'oracle'"):
        sc.setting_shares(udr, "adr/ErgoReacher-v0", "oracle")
