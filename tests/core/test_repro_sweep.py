"""experiments/repro_sweep.py on hand-made report files: the per-setting tables list every seed and give the mean
and std across seeds; the focus table counts the last quarter's proposals in the final policy's failure region."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from experiments.repro_sweep import focus_figure, focus_table, load_sweep, main, sweep_markdown

ENV = "adr/LunarLander-v0"
ENGINES = (8.0, 9.0, 10.0)


def write(report: Path, runs: Path, solved: dict[tuple[str, int], list[float]]) -> None:
    report.mkdir(parents=True)
    with (report / "lunarlander_scores.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "method", "seed", "setting", "return_mean", "solved_fraction"])
        for (method, seed), shares in solved.items():
            run = f"lunarlander_{method.lower()}_s{seed}"
            writer.writerow([run, method, seed, "hard", 0.0, 0.0])
            (report / "sweeps" / run).mkdir(parents=True)
            with (report / "sweeps" / run / "sweep_points.csv").open("w", newline="") as points:
                w = csv.writer(points)
                w.writerow(["point", "swept", "main_engine_power", "episodes", "return_mean", "final_distance_mean",
                            "solved_fraction"])
                for i, (engine, share) in enumerate(zip(ENGINES, shares)):
                    w.writerow([i, "main_engine_power", engine, 50, 300 * share - 50, "nan", share])
            (runs / run).mkdir(parents=True)
            with (runs / run / "sampled_parameters.csv").open("w", newline="") as samples:
                w = csv.writer(samples)
                w.writerow(["iteration", "u_main_engine_power", "main_engine_power"])
                for iteration in range(8):  # first half at 10, last quarter (iterations 6, 7) all at 8
                    w.writerow([iteration, 0.0, 8.0 if iteration >= 6 else 10.0])


@pytest.fixture
def grid(tmp_path):
    report, runs = tmp_path / "report", tmp_path / "runs"
    write(report, runs, {("ADR", 0): [0.2, 1.0, 1.0], ("ADR", 1): [0.4, 0.8, 1.0], ("UDR", 0): [0.0, 0.5, 1.0]})
    return report, runs


def test_tables_give_mean_std_across_seeds_and_every_seed(grid):
    report, _ = grid
    sweep = load_sweep(report, ENV)
    assert sweep.dimension == "main_engine_power" and sweep.values == ENGINES and sweep.episodes == 50
    assert sweep.methods["ADR"][0].solved == {0: 0.2, 1: 0.4}
    text = sweep_markdown(sweep, ENV)
    assert f"| 8 | 30 ± {100 * np.std([0.2, 0.4], ddof=1):.0f} | 0 |" in text  # ADR 2 seeds, UDR 1 seed (no std)
    assert "| ADR | 0 | 20 | 100 | 100 |" in text and "| ADR | 1 | 40 | 80 | 100 |" in text
    assert "| UDR | 0 | 0 | 50 | 100 |" in text


def test_focus_counts_the_last_quarter_in_the_failure_region(grid, tmp_path):
    report, runs = grid
    sweep = load_sweep(report, ENV)
    seeds = {0: runs / "lunarlander_adr_s0", 1: runs / "lunarlander_adr_s1"}
    table = focus_table(sweep, seeds)
    assert "| 0 | 8 | 33 % | 100 % |" in table  # failure region {8}: a third of the range, all of the last quarter
    assert focus_figure(sweep, seeds, tmp_path / "f.png", ENV).stat().st_size > 5000
    assert main([str(report), "--runs", str(runs)]) == 0
    assert (report / "figures" / "lunarlander_adr_failures_vs_proposals.png").is_file()  # the training's proposals
    assert "failure points" in (report / "per_setting.md").read_text()


def test_a_probe_around_the_final_policy_gives_its_own_focus_figure_and_table(grid, tmp_path):
    report, runs = grid
    probes = tmp_path / "probes"
    (probes / "lunarlander_adr_s0").mkdir(parents=True)
    with (probes / "lunarlander_adr_s0" / "proposals.csv").open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["iteration", "slot", "u_main_engine_power", "main_engine_power", "reward"])
        for iteration in range(8):  # the probe keeps proposing engine 10, which the policy solves
            w.writerow([iteration, 0, 0.1, 10.0, 0.0])
    assert main([str(report), "--runs", str(runs), "--probes", str(probes)]) == 0
    text = (report / "per_setting.md").read_text()
    assert (report / "figures" / "lunarlander_adr_failures_vs_probe_proposals.png").is_file()
    assert text.count("| 0 | 8 | 33 % |") == 2  # seed 0 in both tables: training (100 %), probe (0 %)
    assert "| 0 | 8 | 33 % | 100 % |" in text and "| 0 | 8 | 33 % | 0 % |" in text


def test_runs_swept_at_different_points_are_refused(grid):
    report, _ = grid
    path = report / "sweeps" / "lunarlander_udr_s0" / "sweep_points.csv"
    path.write_text(path.read_text().replace("\n2,main_engine_power,10.0", "\n2,main_engine_power,11.0"))
    with pytest.raises(ValueError, match="differ from the other runs"):
        load_sweep(report, ENV)


def test_a_grid_over_several_dimensions_is_refused_in_one_line(grid):
    """A report that swept a grid (Pusher3DOF's two puck dimensions at once) has no single swept dimension: the
    per-setting tables say so instead of failing on an empty column name (what stopped the Pusher3DOF claims)."""
    report, _ = grid
    for path in (report / "sweeps").glob("*/sweep_points.csv"):
        path.write_text(path.read_text().replace(",main_engine_power,", ",,"))
    with pytest.raises(ValueError, match="a grid over several dimensions at once"):
        load_sweep(report, ENV)
