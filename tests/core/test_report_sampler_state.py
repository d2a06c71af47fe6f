"""The report's sampler-state figure: one panel per column a run's sampler record names, a line per run that reports
it, drawn from metrics.csv as it is; samplers without statistics of their own add nothing."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from adr_core.report.plots import sampler_state_figure
from adr_core.report.run_data import RunData, Samples


def run(sampler: str, seed: int, **columns: list[float]) -> RunData:
    steps = np.arange(1, 1 + len(next(iter(columns.values())))) * 1000.0 if columns else np.zeros(0)
    empty = Samples(names=("x",), iteration=np.zeros(0), normalized=np.zeros((0, 1)), physical=np.zeros((0, 1)))
    metrics = {"agent_steps": steps, **{k: np.asarray(v, dtype=float) for k, v in columns.items()}}
    return RunData(path=Path(f"/nowhere/{sampler}_{seed}"), config={"sampler": sampler, "seed": seed}, metrics=metrics,
                   samples=empty)


def lines(figure):
    return {line.get_gid(): line for ax in figure.axes for line in ax.lines}


def test_each_sampler_column_gets_a_panel_and_each_run_its_line():
    learn = run("learnability", 0, learnability_score_mean=[0.1, 0.2, 0.15], learnability_success_mean=[0.2, 0.5, 0.7],
                learnability_focused_share=[0.0, 0.5, 0.5])
    alp = run("alp_gmm", 1, alp_mean=[np.nan, 0.05, 0.02], alp_gmm_components=[np.nan, 3.0, 4.0],
              alp_gmm_focused_share=[0.0, 0.8, 0.8])
    udr = run("udr", 2, return_mean=[1.0, 2.0, 3.0])
    figure = sampler_state_figure([learn, alp, udr], "t")
    assert [ax.get_title() for ax in figure.axes] == [
        "learnability_score_mean", "learnability_success_mean", "learnability_focused_share", "alp_mean",
        "alp_gmm_components", "alp_gmm_focused_share"]
    drawn = lines(figure)
    assert not any("UDR" in gid for gid in drawn)  # UDR reports nothing of its own
    components = drawn[f"alp_gmm_components:{alp.label}"]
    np.testing.assert_array_equal(components.get_xdata(), [2000.0, 3000.0])  # NaN rows (before the first fit) left out
    np.testing.assert_array_equal(components.get_ydata(), [3.0, 4.0])


def test_no_figure_without_sampler_statistics():
    assert sampler_state_figure([run("udr", 0, return_mean=[1.0]), run("no_such_plugin", 1, x=[1.0])], "t") is None
