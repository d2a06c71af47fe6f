"""checkpoints/best.pt: the actor of the best periodic evaluation so far (engine/best_policy.py): kept only when an
evaluation ranks higher (solved share, then return), readable by every policy loader, and a resumed run continues
from the file's own best score."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import torch
from tiny_configs import tiny_config

from adr_core.engine.best_policy import BEST_POLICY, BestPolicy, score
from adr_core.evaluation.policies import load_policy
from adr_core.run_dir import run_identity
from adr_core.training.trainer import Trainer

IDENTITY = run_identity("adr/LunarLander-v0", {"names": ["x"]}, 8, 2)


def actor(value: float) -> dict[str, torch.Tensor]:
    return {"weight": torch.full((2, 8), value)}


def row(iteration: int, solved: float, ret: float) -> dict[str, float]:
    return {"iteration": iteration, "agent_steps": 100 * iteration, "reference_solved_fraction": solved,
            "reference_return_mean": ret}


def test_an_evaluation_is_kept_only_when_it_ranks_higher(tmp_path: Path) -> None:
    best = BestPolicy(tmp_path / BEST_POLICY, IDENTITY, {"seed": 1})
    assert best.offer(row(1, 0.2, -50.0), actor(1.0))
    assert not best.offer(row(2, 0.2, -50.0), actor(2.0))  # a tie keeps the earlier one
    assert not best.offer(row(3, 0.1, 100.0), actor(3.0))  # a higher return does not beat a higher solved share
    assert best.offer(row(4, 0.2, -10.0), actor(4.0))  # the same share with a higher return does
    assert not best.offer(row(5, math.nan, math.nan), actor(5.0))  # an evaluation without scores ranks lowest
    payload = torch.load(tmp_path / BEST_POLICY, weights_only=True)
    assert payload["iteration"] == 4 and torch.equal(payload["agent"]["actor"]["weight"], actor(4.0)["weight"])
    assert score(row(0, math.nan, 3.0)) == (-math.inf, 3.0)
    resumed = BestPolicy(tmp_path / BEST_POLICY, IDENTITY, {"seed": 1})  # a resumed run reads the file's score
    assert resumed.best == (0.2, -10.0) and not resumed.offer(row(6, 0.2, -20.0), actor(6.0))


def test_a_run_keeps_the_actor_of_its_best_evaluation_and_the_loaders_read_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    Trainer(tiny_config(evaluate_every=1, evaluate_episodes=1), run).run()
    with (run / "evaluation.csv").open(newline="") as handle:
        rows = [{k: float(v) if v else math.nan for k, v in r.items()} for r in csv.DictReader(handle)]
    assert len(rows) >= 3
    first_best = max(rows, key=score)  # max keeps the first of equal ranks, as the run does
    policy = load_policy(run / "checkpoints" / BEST_POLICY)
    payload = torch.load(run / "checkpoints" / BEST_POLICY, weights_only=True)
    assert payload["iteration"] == int(first_best["iteration"])
    assert score(payload["evaluation"]) == pytest.approx(score(first_best))  # evaluation.csv rounds its numbers
    assert policy.env_id == "adr/LunarLander-v0" and policy.agent_steps == int(first_best["agent_steps"])
