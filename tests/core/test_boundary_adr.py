"""Boundary ADR (OpenAI 2019; adr_core/samplers/boundary.py) on synthetic policies whose success is a known function
of the parameter: the ranges grow into the region of success and stop at its edge; state round trips bit for bit;
bad settings are refused at config load; the in-process trainer runs it and resumes it exactly (issue 32)."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from tiny_configs import tiny_config

from adr_core.base.checkpoint import load_checkpoint, save_checkpoint
from adr_core.randomization import load_space
from adr_core.samplers import BoundaryConfig, BoundarySampler, SamplerError
from adr_core.training.config import ConfigError, TrainConfig
from adr_core.training.trainer import Trainer

STEP = 0.05


def drive(sampler: BoundarySampler, succeeds, iterations: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Propose, score each point by ``succeeds`` (normalized point -> bool), update; the ranges after each."""
    history = []
    for _ in range(iterations):
        points = sampler.propose()
        sampler.update(np.array([float(succeeds(p)) for p in points]))
        history.append(sampler.ranges())
    return history


def test_the_range_grows_into_the_region_of_success_and_stops_at_its_edge() -> None:
    space = load_space("adr/LunarLander-v0")  # 1-D: main engine, reference 13 of [8, 20] (normalized 5/12)
    sampler = BoundarySampler(space, BoundaryConfig(buffer_size=5, step=STEP), num_proposals=10, seed=0)
    reference = sampler.reference[0]
    assert sampler.ranges()[0][0] == sampler.ranges()[1][0] == reference  # starts at the reference point
    edge = 0.7  # the policy succeeds below 0.7 (normalized), fails above
    history = drive(sampler, lambda p: p[0] <= edge, 400)
    low, high = history[-1]
    assert low[0] == 0.0  # success all the way down: the low edge reaches the cube's face and stays there
    late_highs = {round(float(h[0]), 6) for _, h in history[200:]}
    assert late_highs and all(abs(h - edge) <= STEP for h in late_highs), late_highs  # it hovers at the edge
    assert max(h[0] for _, h in history) <= edge + STEP + 1e-12  # and never runs away past it


def test_each_dimension_finds_its_own_edge_and_a_failing_side_never_passes_the_reference() -> None:
    space = load_space("adr/Pusher3DOF-v0")  # 2-D, reference at the cube's high corner (multiplier 1.0)
    sampler = BoundarySampler(space, BoundaryConfig(buffer_size=4, step=STEP, initial_range="test"),
                              num_proposals=15, seed=1)
    reference = sampler.reference.copy()
    # succeeds when dimension 0 is above 0.3; dimension 1 never matters
    history = drive(sampler, lambda p: p[0] >= 0.3, 400)
    low, high = history[-1]
    assert abs(low[0] - 0.3) <= STEP and low[1] == 0.0
    assert np.all(high >= reference) and np.all(low <= reference)  # the reference is always inside
    failing = BoundarySampler(space, BoundaryConfig(buffer_size=2, step=STEP), num_proposals=15, seed=2)
    drive(failing, lambda p: False, 100)
    np.testing.assert_array_equal(failing.ranges()[0], failing.reference)  # shrinks to the reference, not past


def test_state_round_trips_through_a_checkpoint_file_bit_for_bit(tmp_path) -> None:
    space = load_space("adr/Pusher3DOF-v0")
    config = BoundaryConfig(buffer_size=3, step=0.1)
    uninterrupted = BoundarySampler(space, config, 15, seed=5)
    drive(uninterrupted, lambda p: p[1] > 0.2, 7)
    uninterrupted.propose()  # a batch in flight is part of the state
    path = save_checkpoint(tmp_path / "sampler.pt", {"sampler": uninterrupted.state_dict()})
    restored = BoundarySampler(space, config, 15, seed=99)
    restored.load_state_dict(load_checkpoint(path)["sampler"])
    scores = np.linspace(0, 1, 15)
    assert uninterrupted.update(scores) == restored.update(scores)
    for _ in range(5):
        a, b = uninterrupted.propose(), restored.propose()
        np.testing.assert_array_equal(a, b)
        uninterrupted.update((a[:, 0] > 0.5).astype(float))
        restored.update((b[:, 0] > 0.5).astype(float))
    np.testing.assert_array_equal(uninterrupted.ranges(), restored.ranges())


def test_misuse_and_bad_settings_are_refused_with_one_clear_line() -> None:
    space = load_space("adr/LunarLander-v0")
    sampler = BoundarySampler(space, BoundaryConfig(), 10, seed=0)
    with pytest.raises(SamplerError, match="update without a proposal batch"):
        sampler.update(np.zeros(10))
    sampler.propose()
    with pytest.raises(SamplerError, match=r"need 10 scores in \[0, 1\]"):
        sampler.update(np.full(10, 2.0))
    for bad, message in (({"threshold_low": 0.9, "threshold_high": 0.8}, "threshold_low < threshold_high"),
                         ({"buffer_size": 0}, "buffer_size must be >= 1"), ({"step": 0.0}, r"step must be in \(0, 1\]"),
                         ({"boundary_probability": 1.5}, r"boundary_probability must be in \[0, 1\]"),
                         ({"initial_range": "nope"}, "boundary.initial_range: .*unknown range 'nope'")):
        with pytest.raises(ConfigError, match=message):
            TrainConfig(sampler="boundary_adr", boundary=bad)


def test_the_in_process_trainer_runs_boundary_adr_and_resumes_it_exactly(tmp_path) -> None:
    config = tiny_config(sampler="boundary_adr", total_agent_steps=100_000,
                         boundary={"buffer_size": 1, "step": 0.1, "threshold_low": 0.5, "initial_range": "train"})
    uninterrupted = Trainer(config, None)
    rows = uninterrupted.run(max_iterations=4)
    assert all(len(r) for r in rows) and uninterrupted.discriminator.steps_done == 0  # no discriminator, no reference
    first = Trainer(config, tmp_path)
    first.run(max_iterations=2)
    resumed = Trainer(config, tmp_path, resume=True)
    rest = resumed.run(max_iterations=2)
    keys = ("return_mean", "sampler_reward_mean", "critic_loss", "agent_steps")
    assert [[r[k] for k in keys] for r in rest] == [[r[k] for k in keys] for r in rows[2:]]
    np.testing.assert_array_equal(resumed.sampler.ranges(), uninterrupted.sampler.ranges())
    low, high = uninterrupted.sampler.ranges()  # an untrained lander solves nothing: the edges moved inward
    assert 0.0 < low[0] or high[0] < 1.0
    with (tmp_path / "sampled_parameters.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 4 * resumed.sampler.num_proposals


def test_the_report_draws_the_ranges_of_a_boundary_run(tmp_path) -> None:
    from adr_core.report.plots.sampler_dynamics import sampler_dynamics_figure
    from adr_core.report.run_data import load_run

    config = tiny_config(sampler="boundary_adr", total_agent_steps=100_000,
                         boundary={"buffer_size": 1, "step": 0.1, "threshold_low": 0.5, "initial_range": "train"})
    Trainer(config, tmp_path).run(max_iterations=3)
    run = load_run(tmp_path)
    assert np.isfinite(run.metrics["boundary_width_mean"]).all()
    figure = sampler_dynamics_figure([run], "boundary")
    widths = [line for ax in figure.axes for line in ax.lines if (line.get_gid() or "").startswith("width:")]
    assert len(widths) == 1 and widths[0].get_ydata()[-1] < 1.0  # the ranges shrank from the whole cube
