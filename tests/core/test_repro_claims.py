"""The claim rules of experiments/repro_claims.py on hand-made report files, and the uniform-DR wrapper the SB3
comparison uses."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from adr_core.envs import make_env
from experiments.repro_claims import claims_markdown, load_scores, paper_claims
from experiments.sb3_uniform_dr import UniformDomainRandomization

ENV = "adr/LunarLander-v0"


def write_report(report: Path, hard: dict[str, list[float]], reference: dict[str, list[float]] | None = None) -> None:
    """A scores CSV (hard + reference rows; reference = hard + 50 unless given) and a 3-point sweep per run."""
    reference = reference or {}
    report.mkdir(parents=True, exist_ok=True)
    with (report / "lunarlander_scores.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "seed", "checkpoint", "agent_steps", "setting", "points", "episodes",
                         "return_mean", "return_std", "solved_fraction", "final_distance_mean"])
        for method, values in hard.items():
            for seed, value in enumerate(values):
                run = f"{method}_s{seed}"
                at_reference = reference.get(method, [v + 50 for v in values])[seed]
                writer.writerow([run, method, seed, "x.pt", 1000, "reference", 1, 15, at_reference, 1.0, 0.5, ""])
                writer.writerow([run, method, seed, "x.pt", 1000, "hard", 3, 45, value, 1.0, float(value > 200), ""])
                sweep = report / "sweeps" / run
                sweep.mkdir(parents=True)
                with (sweep / "sweep_points.csv").open("w", newline="") as points:
                    point_writer = csv.writer(points)
                    point_writer.writerow(["point", "return_mean", "final_distance_mean"])
                    for i, offset in enumerate((-10.0, 0.0, 40.0)):
                        point_writer.writerow([i, value + offset, "nan"])


def verdicts(report: Path) -> list[str]:
    return [claim.verdict for claim in paper_claims(load_scores(report, ENV), ENV)]


def test_clear_results_are_reproduced(tmp_path):
    write_report(tmp_path, {"ADR": [150, 160, 155], "UDR": [50, 120, 10], "oracle": [230, 240, 250],
                            "baseline": [-100, -90, -120]}, reference={"baseline": [250, 260, 240]})
    assert verdicts(tmp_path) == ["reproduced"] * 4
    scores = load_scores(tmp_path, ENV)
    assert scores["ADR"].hard == {0: 150.0, 1: 160.0, 2: 155.0}
    assert scores["ADR"].full[1] == pytest.approx(160 + 10)  # mean of the sweep points
    text = claims_markdown(tmp_path, ENV, budget=1000, seeds=[0, 1, 2])
    assert "155.0 ± 5.0" in text and "s0: 150.0, s1: 160.0, s2: 155.0" in text and "Welch p =" in text


def test_opposite_results_are_not_reproduced(tmp_path):
    write_report(tmp_path, {"ADR": [0, 120, -80], "UDR": [150, 160, 155], "oracle": [-50, -60, -40],
                            "baseline": [250, 260, 240]})
    assert verdicts(tmp_path) == ["not reproduced"] * 4


def test_overlapping_results_are_inconclusive(tmp_path):
    write_report(tmp_path, {"ADR": [100, 140, 120], "UDR": [90, 150, 110], "oracle": [190, 230, 170],
                            "baseline": [150, 260, 190]})
    assert verdicts(tmp_path) == ["inconclusive"] * 4


def test_a_baseline_that_fails_everywhere_shows_nothing_about_the_hard_range(tmp_path):
    write_report(tmp_path, {"baseline": [-100, -90, -120]}, reference={"baseline": [-20, 30, 10]})
    claim = paper_claims(load_scores(tmp_path, ENV), ENV)[3]
    assert claim.verdict == "inconclusive" and "does not yet do well on its own training setting" in claim.numbers


def test_missing_methods_and_single_seeds_are_inconclusive(tmp_path):
    write_report(tmp_path, {"ADR": [150], "UDR": [10]})
    claims = paper_claims(load_scores(tmp_path, ENV), ENV)
    assert [c.verdict for c in claims] == ["inconclusive"] * 4
    assert "fewer than 2 seeds" in claims[0].numbers and "not run" in claims[2].numbers


def test_uniform_dr_wrapper_draws_a_new_setting_in_the_training_range_at_each_reset():
    env = UniformDomainRandomization(make_env(ENV), seed=0)
    powers = [env.reset(seed=k)[1]["parameters"]["main_engine_power"] for k in range(20)]
    env.close()
    assert min(powers) >= 8.0 and max(powers) <= 20.0 and len(set(np.round(powers, 6))) == 20


def test_small_metrics_keep_their_digits():
    from experiments.repro_claims import _fmt
    assert _fmt(0.0155, 0.0035) == "0.0155 ± 0.0035"  # final distances in m: not "0.0 ± 0.0"
    assert _fmt(155.0, 5.0) == "155.0 ± 5.0" and _fmt(0.5, float("nan")) == "0.5000 (1 seed)"
