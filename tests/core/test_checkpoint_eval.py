"""experiments/checkpoint_eval.py: named checkpoints of a run on time_to_land's final episodes; a missing one is
named in one line and nothing is written for it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_configs import tiny_config

from adr_core.envs import make_env
from adr_core.evaluation.policies import load_policy
from adr_core.training.trainer import Trainer
from experiments import checkpoint_eval
from experiments.landing import FINAL_SEED, evaluate_callable


def test_each_named_checkpoint_is_scored_on_the_final_episodes_and_a_missing_one_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "runs" / "ours_s1"
    Trainer(tiny_config(evaluate_every=1, evaluate_episodes=1), run).run()
    out = tmp_path / "rows.jsonl"
    code = checkpoint_eval.main([str(run), "--checkpoints", "best.pt", "latest.pt", "nope.pt", "--episodes", "2",
                                 "--out", str(out)])
    assert code == 1  # one checkpoint was missing
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.pt skipped" in err[0]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["checkpoint"] for r in rows] == ["best.pt", "latest.pt"] and rows[0]["run"] == "runs/ours_s1"
    latest = evaluate_callable(load_policy(run).policy(), 2, FINAL_SEED, make_env("adr/LunarLander-v0"))
    assert rows[1]["final_solved"] == latest["solved_fraction"]  # what time_to_land's final evaluation says
    assert rows[1]["final_return_mean"] == pytest.approx(latest["return_mean"])
    assert rows[0]["agent_steps"] == load_policy(run / "checkpoints" / "best.pt").agent_steps


def test_fewer_than_one_episode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        checkpoint_eval.main([str(tmp_path), "--episodes", "0", "--out", str(tmp_path / "rows.jsonl")])
