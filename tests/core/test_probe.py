"""The ADR probe: failure region from a sweep, focus statistics, the CLI's files and figure, refused policies."""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_evaluation_support import tiny_runs  # noqa: F401

from adr_core.evaluation.points import PointOutcomes
from adr_core.probe.cli import main as probe_main
from adr_core.probe.failure import FailureMap, failure_region
from adr_core.probe.focus import focus_statistics
from adr_core.randomization import load_space

HEURISTIC = "adr_core.probe.controllers:lunar_lander_heuristic"
TINY = ["--iterations", "3", "--sweep-points", "4", "--sweep-episodes", "1", "--sweep-seeds", "0", "--workers", "1",
        "--set", "svpg.num_particles=3", "--set", "discriminator.steps_per_transition=0.02",
        "--set", "max_episode_steps=400"]


def nan_policy(obs):
    return np.full(2, np.nan, dtype=np.float32)


def three_actions(obs):
    return np.zeros(3, dtype=np.float32)


def test_failure_region_is_the_cells_of_failing_sweep_points():
    space = load_space("adr/LunarLander-v0")
    u = np.linspace(0, 1, 5)[:, None]
    solved = np.array([0.0, 0.4, 0.6, 1.0, 0.0])  # fails at u = 0, 0.25 and 1
    outcomes = PointOutcomes(returns=np.zeros((5, 1, 1)), final_distance=np.full((5, 1, 1), np.nan),
                             solved=solved[:, None, None] > 0.5, lengths=np.ones((5, 1, 1), dtype=int))
    region = failure_region(FailureMap(space, u, np.zeros(5, dtype=int), outcomes))
    assert region.intervals == (((0.0, 0.375), (0.875, 1.0)),)
    assert region.uniform_share == pytest.approx(0.5)
    np.testing.assert_array_equal(region.contains(np.array([[0.1], [0.5], [0.9], [0.375]])), [True, False, True, True])
    assert "main_engine_power in [8, 12.5]" in region.describe(space)


def test_focus_holds_only_when_the_second_half_and_the_last_quarter_concentrate():
    drifting = [0.6] * 60 + [0.6] * 20 + [0.1] * 20  # concentrated, then gone by the last quarter
    held = [0.25] * 50 + [0.6] * 50
    stats = focus_statistics(drifting, uniform_share=0.25)
    assert stats["ratio_second_half"] == pytest.approx((0.6 * 30 + 0.1 * 20) / 50 / 0.25)
    assert not stats["focus_held"] and stats["ratio_last_quarter"] == pytest.approx((5 * 0.6 + 20 * 0.1) / 25 / 0.25)
    assert focus_statistics(held, uniform_share=0.25)["focus_held"]


def test_probe_cli_writes_every_file_and_the_figure(tmp_path):
    out = tmp_path / "probe"
    assert probe_main(["--policy", HEURISTIC, "--out", str(out), *TINY]) == 0
    for name in ("probe_config.yaml", "failure_map.csv", "proposals.csv", "iterations.csv", "focus.json",
                 "top_proposals.json", "probe.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    focus = json.loads((out / "focus.json").read_text())
    assert focus["iterations"] == 3 and 0 < focus["uniform_share"] < 1
    assert focus["region"]["intervals"][0][0][0] == 0.0  # the heuristic fails at the weak-engine end
    proposals = (out / "proposals.csv").read_text().splitlines()
    assert len(proposals) == 1 + 3 * 3  # header + iterations x particles
    assert (out / "probe.png").stat().st_size > 10_000
    assert probe_main(["--policy", HEURISTIC, "--out", str(out), *TINY]) == 2  # refuses to overwrite


@pytest.mark.parametrize("policy,message", [
    ("no_such_module_xyz:policy", "module 'no_such_module_xyz' does not import"),
    ("adr_core.probe.controllers:no_such_controller", "has no attribute 'no_such_controller'"),
    ("test_probe:nan_policy", "returned a non-finite action"),
    ("test_probe:three_actions", "returned an action of shape (3,)"),
])
def test_bad_policies_are_refused_before_any_rollout(tmp_path, capsys, policy, message):
    out = tmp_path / "probe"
    assert probe_main(["--policy", policy, "--out", str(out), *TINY]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "proposals.csv").exists()


def test_a_checkpoint_of_another_env_is_refused(tiny_runs, tmp_path, capsys):
    pusher = tiny_runs("adr/Pusher3DOF-v0")
    assert probe_main(["--policy", str(pusher), "--out", str(tmp_path / "p"), *TINY]) == 2
    assert "was trained on adr/Pusher3DOF-v0, the probe runs adr/LunarLander-v0" in capsys.readouterr().err
