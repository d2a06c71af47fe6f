"""adr_core.evaluation on tiny trained runs: loading policies from both kinds of run, clear errors, sweeps whose saved
numbers equal a direct evaluation (same seeds -> same numbers, in any number of processes), named settings, the
periodic evaluation hook and the adr-evaluate CLI."""
from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
import torch
from test_evaluation_support import LUNAR_STEPS, graph_style_run, tiny_runs  # noqa: F401

from adr_core.agents import ActorPolicy
from adr_core.base.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from adr_core.envs import make_env
from adr_core.evaluation import (
    PeriodicEvaluation,
    SweepResult,
    evaluate,
    load_policy,
    setting_points,
    sweep,
    sweep_grid,
)
from adr_core.evaluation.cli import evaluate_main
from adr_core.evaluation.episodes import EVALUATION_ITERATION
from adr_core.evaluation.grids import SweepGrid
from adr_core.randomization import load_space
from adr_core.rollout import rollout

LUNAR, PUSHER = "adr/LunarLander-v0", "adr/Pusher3DOF-v0"


def direct_returns(weights, env_id: str, point: np.ndarray, seed: int, episodes: int, steps: int) -> np.ndarray:
    """What the evaluation promises, written out: deterministic rollouts from the evaluation seeds."""
    env, policy = make_env(env_id, max_episode_steps=steps), ActorPolicy.from_state_dict(weights)
    space = env.unwrapped.randomization_space
    return np.array([rollout(env, policy, params=point, params_normalized=space.to_normalized(point),
                             kind="reference", iteration=EVALUATION_ITERATION, slot=e, run_seed=seed).episode_return
                     for e in range(episodes)])


# ------------------------------------------------------------------------------------------------ loading
def test_policy_of_an_in_process_run_is_its_latest_actor(tiny_runs):
    run = tiny_runs()
    policy = load_policy(run)
    payload = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert policy.path == (run / "checkpoints" / "latest.pt").resolve()
    assert (policy.env_id, policy.obs_dim, policy.act_dim) == (LUNAR, 8, 2)
    assert policy.agent_steps == payload["agent_steps"] and policy.iteration == payload["iteration"]
    for name, tensor in payload["agent"]["actor"].items():
        assert torch.equal(policy.actor_weights[name], tensor)
    assert load_policy(run / "checkpoints" / "latest.pt").path == policy.path


def test_policy_of_a_graph_run_comes_from_the_manifest(tiny_runs):
    run = graph_style_run()
    policy = load_policy(run)
    assert policy.path.name == "agent-000002.pt"
    expected = load_policy(tiny_runs())
    assert all(torch.equal(policy.actor_weights[k], v) for k, v in expected.actor_weights.items())
    assert load_policy(run / "checkpoints" / "latest.json").path == policy.path


def test_bad_checkpoints_raise_errors_that_name_the_file(tiny_runs, tmp_path):
    with pytest.raises(CheckpointError, match="no run directory or checkpoint"):
        load_policy(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        load_policy(tmp_path)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x80\x04 not a checkpoint")
    with pytest.raises(CheckpointError, match="garbage.pt is corrupt"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Detected pickle protocol")  # torch's remark on the bytes above
        load_policy(garbage)
    sampler_only = save_checkpoint(tmp_path / "sampler-000001.pt", {"iteration": 1, "state": {}})
    with pytest.raises(CheckpointError, match="holds no agent policy"):
        load_policy(sampler_only)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest.json").write_text('{"iteration": 3, "files": {}}')
    with pytest.raises(CheckpointError, match="latest.json is not a checkpoint manifest naming an agent"):
        load_policy(tmp_path)


def test_an_actor_that_does_not_fit_its_env_is_refused(tiny_runs, tmp_path):
    payload = load_checkpoint(tiny_runs() / "checkpoints" / "latest.pt")
    payload["env_id"] = PUSHER  # LunarLander actor (8 -> 2) claimed for Pusher (14 -> 3)
    payload["space"] = load_space(PUSHER).to_dict()
    payload.pop("format")
    policy = load_policy(save_checkpoint(tmp_path / "latest.pt", payload))
    with pytest.raises(CheckpointError, match="maps 8 -> 2 values, adr/Pusher3DOF-v0 has 14 observations"):
        sweep(policy, sweep_grid(policy.space, points=2), episodes=1, seeds=[0], workers=1)


# ------------------------------------------------------------------------------------------------ sweeps
def test_grids_span_the_allowed_range_including_test_ranges():
    lunar = sweep_grid(load_space(LUNAR))
    assert (lunar.kind, lunar.shape) == ("per_dimension", (13,))
    np.testing.assert_allclose(lunar.points[:, 0], np.arange(8.0, 20.5, 1.0))
    pusher_space = load_space(PUSHER)
    pusher = sweep_grid(pusher_space)
    assert (pusher.kind, pusher.shape, len(pusher)) == ("grid_2d", (9, 9), 81)
    train_low, _ = pusher_space.range_box("train")
    assert (pusher.points < train_low).all(axis=1).any()  # the paper's test region, below the training range
    ergo = sweep_grid(load_space("adr/ErgoReacher-v0"), points=3)
    assert len(ergo) == 8 * 3 and set(ergo.swept.tolist()) == set(range(8))


def test_sweep_numbers_equal_a_direct_evaluation_in_any_number_of_processes(tiny_runs, tmp_path):
    policy = load_policy(tiny_runs())
    grid = sweep_grid(policy.space, points=3)
    serial = sweep(policy, grid, episodes=2, seeds=[0, 5], workers=1)
    parallel = sweep(policy, grid, episodes=2, seeds=[0, 5], workers=2)
    np.testing.assert_array_equal(serial.outcomes.returns, parallel.outcomes.returns)
    assert serial.outcomes.returns.shape == (3, 2, 2)
    for i, point in enumerate(grid.points):
        for s, seed in enumerate((0, 5)):
            np.testing.assert_array_equal(
                serial.outcomes.returns[i, s], direct_returns(policy.actor_weights, LUNAR, point, seed, 2, LUNAR_STEPS))
    assert (serial.outcomes.lengths <= LUNAR_STEPS).all()  # the run's own episode limit
    # the saved files hold the same numbers
    parallel.save(tmp_path)
    loaded = SweepResult.load(tmp_path)
    np.testing.assert_array_equal(loaded.outcomes.returns, serial.outcomes.returns)
    assert loaded.meta() == parallel.meta() and loaded.criterion.threshold == 200.0
    with (tmp_path / "sweep_points.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [float(r["main_engine_power"]) for r in rows] == [8.0, 14.0, 20.0]
    np.testing.assert_allclose([float(r["return_mean"]) for r in rows], serial.mean(), rtol=0, atol=1e-12)
    np.testing.assert_allclose([float(r["return_std"]) for r in rows], serial.std(), rtol=0, atol=1e-12)
    assert {r["solved_metric"] for r in rows} == {"return"} and {r["solved_threshold"] for r in rows} == {"200.0"}
    with (tmp_path / "sweep_episodes.csv").open() as handle:
        episodes = list(csv.DictReader(handle))
    assert len(episodes) == 3 * 2 * 2
    assert float(episodes[-1]["return"]) == serial.outcomes.returns[2, 1, 1]


def test_two_dimensional_sweep_outside_the_training_range(tiny_runs):
    policy = load_policy(tiny_runs(PUSHER))
    grid = sweep_grid(policy.space, points=2)  # corners of [0.5, 1.0]x default: three are outside the training range
    result = sweep(policy, grid, episodes=1, seeds=[3], workers=1)
    assert result.criterion.metric == "final_distance" and result.criterion.threshold == 0.25
    assert np.isfinite(result.outcomes.final_distance).all()
    np.testing.assert_array_equal(result.mean(), result.outcomes.final_distance[:, 0, 0])
    np.testing.assert_array_equal(result.outcomes.solved[:, 0, 0], result.outcomes.final_distance[:, 0, 0] < 0.25)


# ------------------------------------------------------------------------------------------------ settings
def test_named_settings_are_the_reference_and_a_grid_over_the_hard_range():
    space = load_space(LUNAR)
    np.testing.assert_array_equal(setting_points(space, "reference"), [[13.0]])
    np.testing.assert_array_equal(setting_points(space, "hard"), [[8.0], [9.5], [11.0]])
    ergo = load_space("adr/ErgoReacher-v0")
    hard = setting_points(ergo, "hard")  # a single point: 0.2x gains, default torques
    assert hard.shape == (1, 8)
    np.testing.assert_allclose(hard[0, :4], 0.2 * 0.03)
    with pytest.raises(ValueError, match="unknown setting 'nope'"):
        setting_points(space, "nope")


def test_evaluate_accepts_weights_policies_and_checkpoints_alike(tiny_runs):
    policy = load_policy(tiny_runs())
    by_checkpoint = evaluate(policy, LUNAR, ["reference", "hard"], episodes=2)
    by_weights = evaluate(policy.actor_weights, LUNAR, ["reference", "hard"], episodes=2,
                          max_episode_steps=LUNAR_STEPS)
    by_policy = evaluate(policy.policy(), LUNAR, {"reference": [13.0], "hard": [[8.0], [9.5], [11.0]]}, episodes=2,
                         max_episode_steps=LUNAR_STEPS)
    for scores in (by_weights, by_policy):
        for name in ("reference", "hard"):
            np.testing.assert_array_equal(scores[name].outcomes.returns, by_checkpoint[name].outcomes.returns)
    hard = by_checkpoint["hard"]
    direct = np.stack([direct_returns(policy.actor_weights, LUNAR, p, 0, 2, LUNAR_STEPS) for p in hard.points])
    np.testing.assert_array_equal(hard.outcomes.returns[:, 0], direct)
    assert hard.summary()["return_mean"] == pytest.approx(direct.mean(), abs=1e-12)


def test_periodic_evaluation_writes_rows_every_n_iterations_and_trims_on_resume(tiny_runs, tmp_path):
    policy = load_policy(tiny_runs())
    hook = PeriodicEvaluation(tmp_path, LUNAR, every=2, episodes=1, max_episode_steps=LUNAR_STEPS)
    written = [hook.maybe_run(i, 100 * i, policy.actor_weights) for i in range(1, 7)]
    assert [row is not None for row in written] == [False, True, False, True, False, True]
    with (tmp_path / "evaluation.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["iteration"]) for r in rows] == [2, 4, 6] and [int(r["agent_steps"]) for r in rows] == [200, 400, 600]
    expected = evaluate(policy, LUNAR, ["reference", "hard"], episodes=1)
    assert float(rows[0]["hard_return_mean"]) == expected["hard"].summary()["return_mean"]
    assert float(rows[0]["reference_solved_fraction"]) == expected["reference"].summary()["solved_fraction"]
    PeriodicEvaluation(tmp_path, LUNAR, every=2, episodes=1, start_iteration=4)  # resumed from iteration 4
    with (tmp_path / "evaluation.csv").open() as handle:
        assert [int(r["iteration"]) for r in csv.DictReader(handle)] == [2, 4]


# ------------------------------------------------------------------------------------------------ CLI
def test_adr_evaluate_writes_the_sweep_and_settings(tiny_runs, tmp_path, capsys):
    run = tiny_runs()
    assert evaluate_main([str(run), "--out", str(tmp_path), "--points", "3", "--episodes", "1", "--seeds", "0",
                          "--workers", "1"]) == 0
    assert "wrote" in capsys.readouterr().out
    saved = SweepResult.load(tmp_path)
    direct = sweep(load_policy(run), sweep_grid(load_space(LUNAR), points=3), episodes=1, seeds=[0], workers=1)
    np.testing.assert_array_equal(saved.outcomes.returns, direct.outcomes.returns)
    with (tmp_path / "settings.csv").open() as handle:
        assert [r["setting"] for r in csv.DictReader(handle)] == ["reference", "hard"]
    with pytest.raises(SystemExit) as exit_info:  # refused by the argument's check, before anything runs
        evaluate_main([str(tmp_path / "nothing")])
    assert exit_info.value.code == 2 and "nothing: no such file or folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--help"])
    assert exit_info.value.code == 0 and "Generalization sweep" in capsys.readouterr().out


def test_sweep_grid_rejects_bad_requests():
    with pytest.raises(ValueError, match="at least 2 points"):
        sweep_grid(load_space(LUNAR), points=1)
    with pytest.raises(ValueError, match="a 2-D grid needs exactly 2"):
        sweep_grid(load_space(LUNAR), "grid_2d")
    assert isinstance(sweep_grid(load_space(PUSHER), "per_dimension", 4), SweepGrid)


def test_in_process_evaluation_closes_its_simulators():
    import pybullet

    from adr_core.agents import Actor

    def connected() -> int:
        return sum(pybullet.getConnectionInfo(i)["isConnected"] for i in range(64))

    before = connected()
    weights = Actor(10, 4, (8,)).state_dict()
    for _ in range(3):
        scores = evaluate(weights, "adr/ErgoReacher-v0", ["reference", "hard"], episodes=1, max_episode_steps=5)
        assert scores["hard"].points.shape == (1, 8) and scores["hard"].outcomes.lengths.max() == 5
    assert connected() == before


def test_the_periodic_hook_leaves_training_unchanged(tmp_path):
    """Called between iterations as the trainers will, it draws on no generator of the run: same metrics as without."""
    import math

    from test_evaluation_support import tiny_config

    from adr_core.training.trainer import Trainer

    def metrics(with_hook: bool) -> list[dict]:
        trainer = Trainer(tiny_config(LUNAR, "adr", 3, LUNAR_STEPS), None)
        hook = PeriodicEvaluation(tmp_path / str(with_hook), LUNAR, every=1, episodes=1, max_episode_steps=LUNAR_STEPS)
        rows = []
        for _ in range(4):
            rows.append({k: v for k, v in trainer.run_iteration().metrics().items()
                         if not k.startswith("time_") and not (isinstance(v, float) and math.isnan(v))})
            if with_hook:
                hook.maybe_run(trainer.iteration, trainer.agent_steps, trainer.agent.actor_state_dict())
        return rows

    assert metrics(True) == metrics(False)
    assert (tmp_path / "True" / "evaluation.csv").read_text().count("\n") == 1 + 4


def test_every_public_name_of_the_evaluation_package_is_what_it_names_after_its_modules_are_imported():
    """The package resolves names lazily; a submodule named like a function would shadow it once imported."""
    import importlib
    import pkgutil
    import types

    import adr_core.evaluation as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    shadowed = [name for name in package.__all__ if isinstance(getattr(package, name), types.ModuleType)]
    assert shadowed == []
