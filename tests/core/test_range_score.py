"""experiments/range_score.py: a run scored at the reference, over its training range and its hard range, from a seed
alone (the preset searches of issues 59 and 60 choose with it)."""
from __future__ import annotations

import json

from test_evaluation_support import tiny_runs  # noqa: F401

from experiments.range_score import main, score_run


def test_a_run_is_scored_on_the_reference_and_its_ranges(tiny_runs, tmp_path, capsys):
    run = tiny_runs("adr/LunarLander-v0", "adr", 0)
    row = score_run(run, episodes=3, seed=5, workers=1)
    assert {"reference_solved", "range_solved", "hard_solved"} <= set(row) and "reference_tight" not in row
    assert row == score_run(run, episodes=3, seed=5, workers=1)  # the seed fixes points and initial states
    assert main([str(run), "--episodes", "2", "--out", str(tmp_path / "rows.jsonl")]) == 0
    assert json.loads((tmp_path / "rows.jsonl").read_text())["episodes"] == 2
    assert "| training range |" in capsys.readouterr().out


def test_a_pusher_run_also_gets_the_share_within_a_fifth_of_its_threshold(tiny_runs):
    row = score_run(tiny_runs("adr/Pusher3DOF-v0", "udr", 0), episodes=2, seed=5, workers=1)
    assert row["tight_threshold"] == 0.05 and {"reference_tight", "range_tight", "hard_tight"} <= set(row)
