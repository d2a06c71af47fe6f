"""adr-report on tiny runs (ADR x 2 seeds and UDR on LunarLander, ADR on Pusher3DOF): files written, and the data
behind every figure equal to what the runs and a direct evaluation give (lines, images, labels; no pixels)."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from test_evaluation_support import tiny_runs  # noqa: F401

from adr_core.evaluation import load_policy, sweep, sweep_grid
from adr_core.evaluation.grids import SweepGrid
from adr_core.evaluation.points import PointOutcomes
from adr_core.evaluation.solved import solved_criterion
from adr_core.evaluation.sweeps import SweepResult
from adr_core.randomization import load_space
from adr_core.report.build import ReportOptions, build_report
from adr_core.report.cli import main as report_main
from adr_core.report.degenerate import degenerate_regions
from adr_core.report.evaluations import EvaluationOptions
from adr_core.report.outcome import wilson_interval
from adr_core.report.run_data import load_run

LUNAR, PUSHER = "adr/LunarLander-v0", "adr/Pusher3DOF-v0"
OPTIONS = ReportOptions(evaluation=EvaluationOptions(episodes=2, seeds=(0, 1), curve_episodes=1, workers=2,
                                                     reference_episodes=6),
                        points=4, stages=2, bins=6)


@pytest.fixture(scope="module")
def report(tiny_runs, tmp_path_factory):
    runs = [tiny_runs(LUNAR, "adr", 0), tiny_runs(LUNAR, "adr", 1), tiny_runs(LUNAR, "udr", 0), tiny_runs(PUSHER)]
    return build_report(runs, tmp_path_factory.mktemp("report"), OPTIONS, log=lambda _: None)


def lines_by_gid(ax) -> dict:
    return {line.get_gid(): line for line in ax.lines if line.get_gid()}


def test_files_and_page(report):
    out = report.out_dir
    lunar, pusher = report.envs
    assert (lunar.env_id, pusher.env_id) == (LUNAR, PUSHER)
    assert set(lunar.figures) == {"generalization", "generalization_solved", "learning_curves", "training_curves",
                                  "sampling_adr", "sampling_udr", "sampler_dynamics"}
    assert set(pusher.figures) == {"heatmap_adr", "learning_curves", "training_curves", "sampling_adr",
                                   "sampler_dynamics"}
    for env in report.envs:
        for name, paths in env.files.items():
            assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 5000 for p in paths)
            assert f"figures/{env.short_name}_{name}.png" in report.markdown.read_text()
    html = report.html.read_text()
    assert html.count("<img ") == 12 and "<table>" in html
    for run_name in ("LunarLander-v0_adr_seed0", "LunarLander-v0_adr_seed1", "LunarLander-v0_udr_seed0"):
        assert (out / "sweeps" / run_name / "sweep.npz").is_file()


def test_table_numbers_are_the_saved_scores(report):
    with (report.out_dir / "lunarlander_scores.csv").open() as handle:
        rows = [r for r in csv.DictReader(handle) if r["method"] == "UDR"]
    by_setting = {r["setting"]: float(r["return_mean"]) for r in rows}
    assert set(by_setting) == {"reference", "hard"}
    markdown = report.markdown.read_text()
    udr_row = next(line for line in markdown.splitlines() if line.startswith("| UDR | 1 |"))
    assert f"{by_setting['reference']:.3g}" in udr_row and f"{by_setting['hard']:.3g}" in udr_row


def test_generalization_curve_is_the_mean_across_seeds_of_direct_sweeps(report, tiny_runs):
    figure = report.envs[0].figures["generalization"]
    ax = figure.axes[0]
    lines = lines_by_gid(ax)
    assert set(lines) == {"mean:ADR", "mean:UDR"}
    grid = sweep_grid(load_space(LUNAR), points=4)
    direct = [sweep(load_policy(tiny_runs(LUNAR, "adr", s)), grid, episodes=2, seeds=[0, 1], workers=1).mean()
              for s in (0, 1)]
    np.testing.assert_allclose(lines["mean:ADR"].get_xdata(), [8.0, 12.0, 16.0, 20.0])
    np.testing.assert_allclose(lines["mean:ADR"].get_ydata(), np.mean(direct, axis=0), rtol=0, atol=1e-9)
    assert lines["mean:ADR"].get_label() == "ADR (2 seeds)" and lines["mean:UDR"].get_label().startswith("UDR (1 run")
    solved = [line for line in ax.lines if line.get_label().startswith("solved")]
    assert len(solved) == 1 and list(solved[0].get_ydata()) == [200.0, 200.0]
    assert ax.get_xlabel() == "main_engine_power" and ax.get_ylabel() == "episode return"
    shares = lines_by_gid(report.envs[0].figures["generalization_solved"].axes[0])
    direct_solved = [100 * sweep(load_policy(tiny_runs(LUNAR, "adr", s)), grid, episodes=2, seeds=[0, 1],
                                 workers=1).solved_fraction() for s in (0, 1)]
    np.testing.assert_allclose(shares["mean:ADR"].get_ydata(), np.mean(direct_solved, axis=0), rtol=0, atol=1e-9)


def test_learning_curves_are_the_evaluated_checkpoints(report):
    lunar = report.envs[0]
    ax_reference, ax_hard = lunar.figures["learning_curves"].axes[:2]
    assert "reference" in ax_reference.get_title() and "hard" in ax_hard.get_title()
    udr = next(c for c in lunar.curves["hard"] if c.method == "UDR")
    line = lines_by_gid(ax_hard)["mean:UDR"]
    np.testing.assert_array_equal(line.get_xdata(), udr.steps)
    np.testing.assert_array_equal(line.get_ydata(), udr.values)
    evaluation = next(e for e in lunar.evaluations if e.run.method == "UDR")
    kept = sorted(p.name for p in (evaluation.run.path / "checkpoints").glob("iter_*.pt"))
    assert len(udr.steps) == len(kept) and udr.source == "checkpoints"
    assert udr.steps[-1] == evaluation.policy.agent_steps


def test_training_curves_and_sampler_dynamics_come_from_metrics(report):
    lunar = report.envs[0]
    run = load_run(next(e.run.path for e in lunar.evaluations if e.run.label == "ADR seed 1"))
    ax_reward = lunar.figures["sampler_dynamics"].axes[0]
    line = lines_by_gid(ax_reward)["reward:ADR seed 1"]
    np.testing.assert_array_equal(line.get_xdata(), run.metrics["agent_steps"])
    np.testing.assert_array_equal(line.get_ydata(), run.metrics["sampler_reward_mean"])
    assert not any(gid.startswith("reward:UDR") for gid in lines_by_gid(ax_reward))  # UDR has no discriminator
    spread = lines_by_gid(lunar.figures["sampler_dynamics"].axes[1])["spread:ADR seed 1"]
    first = run.samples.normalized[run.samples.iteration == 0][:, 0]
    assert spread.get_ydata()[0] == pytest.approx(abs(first[0] - first[1]))  # two particles: their distance
    panels = [ax.get_title() for ax in lunar.figures["training_curves"].axes]
    assert any("randomized" in t for t in panels) and any("reference" in t for t in panels)


def test_sampling_histograms_count_the_sampled_parameters(report):
    lunar = report.envs[0]
    ax = lunar.figures["sampling_udr"].axes[0]
    run = load_run(next(e.run.path for e in lunar.evaluations if e.run.method == "UDR"))
    stages = lines_by_gid(ax)
    assert set(stages) == {"stage:0", "stage:1"}
    total = sum(np.asarray(stages[g].get_ydata()) for g in stages)
    counts = np.bincount(np.clip((run.samples.normalized[:, 0] * 6).astype(int), 0, 5), minlength=6)
    shares = [np.asarray(stages[g].get_ydata()) for g in sorted(stages)]
    assert all(s.sum() == pytest.approx(1.0) for s in shares)
    assert set(np.flatnonzero(total)) == set(np.flatnonzero(counts))
    np.testing.assert_allclose(stages["stage:0"].get_xdata(), 8.0 + 12.0 * (np.arange(6) + 0.5) / 6)


def test_heatmap_shows_the_sweep_and_the_sampling_histogram(report, tiny_runs):
    pusher = report.envs[1]
    figure = pusher.figures["heatmap_adr"]
    ax = figure.axes[0]
    sweep_result = pusher.evaluations[0].sweep
    n0, n1 = sweep_result.grid.shape
    np.testing.assert_array_equal(ax.images[0].get_array(), sweep_result.mean().reshape(n0, n1).T)
    assert {p.get_label() for p in ax.patches} == {"train range", "hard range"}
    assert ax.collections, "the sampling contours are drawn"
    run = load_run(tiny_runs(PUSHER))
    assert ax.get_xlabel().startswith("puck_frictionloss") and "final distance" in figure.axes[1].get_ylabel()
    assert len(run.samples.physical) > 0


def test_degenerate_ranges_are_flagged_where_sampling_concentrates_and_nothing_is_solved():
    space = load_space(LUNAR)
    grid = SweepGrid("per_dimension", ("main_engine_power",), np.linspace(8, 20, 13)[:, None], np.zeros(13, int), (13,))
    solved = np.ones((13, 1, 4), bool)
    solved[:3] = False  # never solved at 8, 9, 10
    returns = np.where(solved, 250.0, -100.0)
    result = SweepResult(LUNAR, grid, (0,), 4, PointOutcomes(returns, np.full_like(returns, np.nan), solved,
                                                              np.ones_like(returns, int)), solved_criterion(LUNAR))
    rng = np.random.default_rng(0)
    lopsided = np.concatenate([rng.uniform(0.0, 0.2, 600), rng.uniform(0.0, 1.0, 400)])[:, None]
    (region,) = degenerate_regions(space, lopsided, [result], bins=10)
    assert (region.dimension, region.low, region.high) == ("main_engine_power", 8.0, pytest.approx(10.4))
    assert region.sampling_ratio > 3 and region.solved_fraction == 0.0 and region.metric_mean == -100.0
    assert degenerate_regions(space, rng.uniform(0, 1, (1000, 1)), [result], bins=10) == []  # uniform: no flag


def test_adr_report_cli(tiny_runs, tmp_path, capsys):
    out = tmp_path / "report"
    assert report_main([str(tiny_runs(LUNAR, "adr", 0)), "--out", str(out), "--points", "3", "--episodes", "1",
                        "--seeds", "0", "--no-checkpoint-curves", "--workers", "1", "--formats", "png"]) == 0
    assert (out / "summary.md").is_file() and (out / "figures" / "lunarlander_generalization.png").is_file()
    assert not list((out / "figures").glob("*.svg"))
    with pytest.raises(SystemExit) as missing:  # checked while parsing, before anything is written
        report_main([str(tmp_path / "missing"), "--out", str(out)])
    assert missing.value.code == 2 and "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert report_main([str(tmp_path / "empty"), "--out", str(out)]) == 2


def test_a_run_without_checkpoints_is_reported_not_evaluated(tiny_runs, tmp_path):
    run = tmp_path / "no_checkpoints"
    run.mkdir()
    for name in ("config.yaml", "metrics.csv", "sampled_parameters.csv"):
        (run / name).write_bytes((tiny_runs() / name).read_bytes())
    report = build_report([run], tmp_path / "report", OPTIONS, log=lambda _: None)
    (env,) = report.envs
    assert env.evaluations[0].policy is None and "holds no checkpoint" in env.evaluations[0].problem
    assert set(env.figures) == {"training_curves", "sampling_adr", "sampler_dynamics"}
    assert "no policy of this method could be evaluated" in report.markdown.read_text()


def test_outcome_lines_state_the_reference_and_the_solved_share_at_every_sweep_point(report):
    lines = (report.out_dir / "outcome.txt").read_text().splitlines()
    assert len(lines) == 4  # one per run, the pusher too
    lunar = report.envs[0]
    evaluation = lunar.evaluations[0]
    line = next(x for x in lines if x.startswith(evaluation.run.path.name))
    reference = evaluation.scores["reference"].summary()
    assert f"reference (main_engine_power 13): return {reference['return_mean']:.0f}" in line
    outcomes = evaluation.scores["reference"].outcomes
    assert outcomes.solved.size == 6  # reference_episodes over the 2 evaluation seeds (the sweep: 2 per seed)
    low, high = wilson_interval(int(outcomes.solved.sum()), 6)
    assert (f"solved {100 * reference['solved_fraction']:.0f}% (95% CI {100 * low:.0f}-{100 * high:.0f}%, "
            f"6 episodes)") in line
    cells = line.split("solved by main_engine_power: ")[1].split("; ")[0].split(", ")
    points, solved = evaluation.sweep.grid.points, evaluation.sweep.solved_fraction()
    expected = [f"{p[0]:.4g}: {100 * v:.0f}%" for p, v in zip(points, solved)]
    assert cells == expected and len(cells) == 4  # OPTIONS.points
    hard = (points[:, 0] >= 8) & (points[:, 0] <= 11)  # the range's means, from the same sweep points
    assert (f"mean over the training range 8-20 {100 * solved.mean():.0f}%, hard end 8-11 "
            f"{100 * solved[hard].mean():.0f}%") in line
    pusher_line = next(x for x in lines if "Pusher" in x)
    assert "solved over the grid" in pusher_line and "least at (" in pusher_line
    assert "final distance quartiles" in pusher_line and "within 0.05:" in pusher_line  # a fifth of 0.25 m
    assert "Outcome (final policy)" in report.markdown.read_text()


def test_the_wilson_interval_matches_known_values():
    low, high = wilson_interval(94, 100)
    assert (round(low, 3), round(high, 3)) == (0.875, 0.972)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def _curve(run: str, steps: list[float], values: list[float]):
    from adr_core.report.curves import Curve
    return Curve(run, "ADR", "reference", "evaluation.csv", np.array(steps, float), np.array(values, float))


def test_curves_of_runs_of_different_lengths_are_aggregated_with_the_shorter_ones_held_at_their_last_value():
    from adr_core.report.curves import aggregate, ended_early
    long = _curve("ADR seed 0", [10, 20, 30, 40], [0, 100, 200, 300])
    short = _curve("ADR seed 1", [10, 20], [50, 250])  # stopped early at 20 (e.g. its early stop)
    late = _curve("ADR seed 2", [30, 40], [0, 0])  # its first point after the others' (kept checkpoints)
    steps, mean, std = aggregate([long, short, late], points=4)
    np.testing.assert_allclose(steps, [10, 20, 30, 40])
    # 10, 20: long and short only (late starts at 30); 30, 40: short holds 250
    np.testing.assert_allclose(mean, [25, 175, (200 + 250 + 0) / 3, (300 + 250 + 0) / 3])
    np.testing.assert_allclose(std[0], 25)
    assert ended_early([long, short, late]) == ["ADR seed 1"]
    # runs that do not overlap at all (the case that used to abort the report) and runs of one point each
    steps, mean, _ = aggregate([_curve("a", [10], [1.0]), _curve("b", [50, 60], [3.0, 5.0])], points=3)
    np.testing.assert_allclose(steps, [10, 35, 60])
    np.testing.assert_allclose(mean, [1.0, 1.0, 3.0])
    steps, mean, std = aggregate([_curve("a", [10], [1.0]), _curve("b", [10], [3.0])])
    assert steps.tolist() == [10] and mean.tolist() == [2.0] and std.tolist() == [1.0]


def test_the_runs_table_says_how_each_run_ended(report):
    from adr_core.report.run_data import load_run as load
    assert "| ended by |" in report.markdown.read_text()
    runs = [e.run for env in report.envs for e in env.evaluations]
    assert {run.ended_by() for run in runs} == {"budget"}, [run.ended_by() for run in runs]
    run = load(runs[0].path)
    (run.path / "early_stop.csv").write_text("agent_steps,met\n100,0\n200,1\n")
    try:
        assert run.ended_by().startswith("early stop at ")
    finally:
        (run.path / "early_stop.csv").unlink()
    short = type(run)(run.path, {**run.config, "total_agent_steps": 10**9}, run.metrics, run.samples)
    assert short.ended_by() == f"at {int(run.metrics['agent_steps'][-1])} of {10**9}"
