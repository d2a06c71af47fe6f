"""Issue 30: statistics stay in their columns. A message of the graph cannot rename or overwrite another field of a
metrics.csv row, and out-of-bound rewards are refused before they reach a file."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from adr_core.iteration import DISCRIMINATOR_COLUMNS, IterationResult, sampler_columns
from adr_trainer_node.graph_steps import GraphSteps

STEPS = SimpleNamespace(run_id="run", position=lambda: (3, 2))  # iteration 3 in progress, 2 completed


def refusal(names: list[str], values: list[float], columns: tuple[str, ...]) -> str | None:
    return GraphSteps._statistics_refusal(STEPS, "run", 1, names, np.asarray(values, float),  # type: ignore
                                          columns)


def test_forged_metric_names_are_refused_and_the_real_ones_accepted() -> None:
    assert refusal(["d_randomized", "discriminator_loss"], [0.4, 0.6], DISCRIMINATOR_COLUMNS) is None
    assert refusal(["svpg_value_loss"], [1.0], sampler_columns()) is None
    forged = refusal(["return_mean", "iteration", "critic_loss"], [12345.0, 777.0, 0.0], DISCRIMINATOR_COLUMNS)
    assert forged is not None and "not this producer's columns" in forged
    assert refusal(["svpg_value_loss"], [1.0], DISCRIMINATOR_COLUMNS) is not None  # another producer's column
    assert refusal(["d_reference", "d_reference"], [0.1, 0.2], DISCRIMINATOR_COLUMNS) is not None  # repeated
    assert "statistics are within" in refusal(["svpg_value_loss"], [5e10], sampler_columns())  # issue 30: bounds
    many = [f"m{i}" for i in range(300_000)]
    assert refusal(many, [0.0] * len(many), DISCRIMINATOR_COLUMNS) is not None  # refused, nothing kept


def test_an_iteration_row_takes_each_producers_statistics_only_in_its_own_columns() -> None:
    result = IterationResult(
        iteration=1, proposals=np.zeros((1, 1)), parameters=np.zeros((1, 1)), policy_version=0, randomized=[],
        reference=[], rewards=None, n_updates=0, agent_losses={},
        sampler_metrics={"svpg_value_loss": 2.0, "return_mean": 999.0},
        discriminator_metrics={"d_randomized": 0.3, "iteration": 777.0, "discriminator_loss": float("inf")},
        timings={})
    row = result.metrics()
    assert row["iteration"] == 1 and np.isnan(row["return_mean"])  # not the forged values
    assert row["svpg_value_loss"] == 2.0 and row["d_randomized"] == 0.3
    assert "discriminator_loss" not in row  # non-finite: not written


def test_statistics_of_finished_iterations_are_dropped_not_kept() -> None:
    counted: list[str] = []
    steps = SimpleNamespace(position=lambda: (5, 4), diagnostics=SimpleNamespace(count=counted.append))
    assert GraphSteps._stale(steps, 4) and GraphSteps._stale(steps, 0)  # type: ignore[arg-type]
    assert not GraphSteps._stale(steps, 5)  # type: ignore[arg-type]
    assert counted == ["stale_statistics", "stale_statistics"]
    assert not GraphSteps._stale(SimpleNamespace(position=lambda: (0, None)), 0)  # type: ignore[arg-type]
