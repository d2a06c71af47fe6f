"""The optional sim-to-real dimensions of the Ergo envs, each measured from outside the env (observations, true
joint angles), never by reading the env's own bookkeeping."""
import math

import numpy as np
import pytest

from adr_core.envs import make_env
from adr_core.randomization import RandomizationError, RandomizationSpace, load_space

VARIANTS = {"adr/ErgoReacher-v0": "ErgoReacher-v0-sim2real", "adr/ErgoPusher-v0": "ErgoPusher-v0-sim2real"}
ACTUATED_IN_JOINT_STATE = {"adr/ErgoReacher-v0": [1, 2, 4, 5], "adr/ErgoPusher-v0": [0, 1, 2, 4]}
SCALE = math.pi / 2
VELOCITY_SCALE = 11.9


def _env(env_id, **changes):
    """The env with its sim-to-real space, at the reference point but for ``changes`` (strong servos on the
    Reacher so that gravity does not hide the effects)."""
    env = make_env(env_id, space=VARIANTS[env_id])
    space = env.unwrapped.randomization_space
    values = dict(zip(space.names, space.reference()))
    if env_id == "adr/ErgoReacher-v0":
        values.update({f"{m}_gain": 0.06 for m in ("m2", "m3", "m5", "m6")})
        values.update({n: 4 * v for n, v in values.items() if n.endswith("_max_torque")})
    values.update(changes)
    env.unwrapped.set_parameters(values)
    return env


def _run(env, actions, seed=3):
    obs, _ = env.reset(seed=seed)
    observations, true_angles = [obs], [env.unwrapped.joint_positions()]
    for action in actions:
        obs, *_ = env.step(np.asarray(action, dtype=np.float32))
        observations.append(obs)
        true_angles.append(env.unwrapped.joint_positions())
    return np.array(observations), np.array(true_angles)


@pytest.mark.parametrize("env_id", list(VARIANTS))
@pytest.mark.parametrize("latency", [1, 3])
def test_latency_delays_the_action_stream_by_exactly_k_steps(env_id, latency):
    actions = np.random.default_rng(0).uniform(-0.6, 0.6, (30, 4))
    delayed, _ = _run(_env(env_id, action_latency=float(latency)), actions)
    # the same episode without latency, where the first k actions hold the start pose (what the queue holds)
    env = _env(env_id)
    obs, _ = env.reset(seed=3)
    start = obs[:4] * SCALE  # no noise: the observed start angles are the commanded start targets
    held = np.tile(start / SCALE, (latency, 1))
    reference, _ = _run(env, np.vstack([held, actions[:-latency]]))
    np.testing.assert_allclose(delayed, reference, atol=1e-6)
    immediate, _ = _run(_env(env_id), actions)
    holding, _ = _run(_env(env_id), held[:1])
    assert np.abs(immediate[1, :4] - holding[1, :4]).max() > 1e-3  # latency 0: the first action acts at once
    assert np.abs(immediate[5:, :4] - delayed[5:, :4]).max() > 0.05  # and the delay is visible


@pytest.mark.parametrize("env_id", list(VARIANTS))
def test_observation_noise_has_the_set_std_on_angles_only(env_id):
    actions = np.random.default_rng(1).uniform(-0.5, 0.5, (100, 4))
    clean_obs, clean_true = _run(_env(env_id), actions)
    noisy_obs, noisy_true = _run(_env(env_id, observation_noise=0.01), actions)
    np.testing.assert_array_equal(noisy_true, clean_true)  # the physics does not change
    np.testing.assert_array_equal(noisy_obs[:, 4:], clean_obs[:, 4:])  # velocities, tip, goal... stay exact
    error = noisy_obs[:, :4] * SCALE - noisy_true[:, ACTUATED_IN_JOINT_STATE[env_id]]
    assert abs(error.mean()) < 0.002
    assert 0.0085 < error.std() < 0.0115
    clean_error = clean_obs[:, :4] * SCALE - clean_true[:, ACTUATED_IN_JOINT_STATE[env_id]]
    assert np.abs(clean_error).max() < 1e-5  # float32 rounding only


def _settled_m2(env, first, then):
    """m2's true angle after commanding ``first`` then ``then`` (rad) long enough to settle."""
    hold = [0.0, 0.0, 0.0]
    actions = [[first / SCALE] + hold] * 60 + [[then / SCALE] + hold] * 90
    _, true_angles = _run(env, actions)
    return true_angles[-1, 1]


@pytest.mark.parametrize("band", [0.02, 0.035])
def test_backlash_leaves_a_gap_of_the_band_between_approach_directions(band):
    env_id = "adr/ErgoReacher-v0"
    plain = _env(env_id)
    no_play_gap = _settled_m2(plain, 0.6, 0.3) - _settled_m2(plain, 0.0, 0.3)
    played = _env(env_id, **{f"{m}_backlash": band for m in ("m2", "m3", "m5", "m6")})
    gap = _settled_m2(played, 0.6, 0.3) - _settled_m2(played, 0.0, 0.3)
    assert abs(no_play_gap) < 0.002
    assert gap - no_play_gap == pytest.approx(band, rel=0.15)


def test_speed_cap_limits_the_measured_joint_speed():
    env_id = "adr/ErgoReacher-v0"
    step_command = [[1.0, 0.0, 0.0, 0.0]] * 40
    fast, _ = _run(_env(env_id), step_command)
    slow, _ = _run(_env(env_id, max_joint_speed=2.0), step_command)
    fast_peak = np.abs(fast[:, 4] * VELOCITY_SCALE).max()
    slow_peak = np.abs(slow[:, 4] * VELOCITY_SCALE).max()
    assert slow_peak <= 2.0 * 1.05
    assert fast_peak > 2 * 2.0  # without the cap the same command is much faster


def test_plain_space_runs_exactly_as_before():
    """A space without sim-to-real dimensions takes the old code path: same observations as the packaged space."""
    actions = np.random.default_rng(2).uniform(-1, 1, (20, 4))
    plain = make_env("adr/ErgoReacher-v0")
    explicit = make_env("adr/ErgoReacher-v0", space=load_space("adr/ErgoReacher-v0"))
    np.testing.assert_array_equal(_run(plain, actions)[0], _run(explicit, actions)[0])


def _space_with(env_id, name, train, default=0.0):
    data = load_space(env_id).to_dict()
    data["dimensions"].append({"name": name, "default": default, "train": {"absolute": train}})
    return RandomizationSpace.from_dict(data)


@pytest.mark.parametrize(("name", "train", "default"), [
    ("action_latency", [0, 20], 0.0), ("observation_noise", [-0.01, 0.01], 0.0), ("m2_backlash", [0, 1.0], 0.0),
    ("max_joint_speed", [0.0, 5.0], 5.0)])
def test_values_outside_physical_bounds_are_refused_when_the_env_is_built(name, train, default):
    with pytest.raises(RandomizationError, match=f"{name}.*physical bounds"):
        make_env("adr/ErgoReacher-v0", space=_space_with("adr/ErgoReacher-v0", name, train, default))


def test_unknown_optional_dimension_and_wrong_env_are_refused():
    with pytest.raises(RandomizationError, match="takes any of"):
        make_env("adr/ErgoReacher-v0", space=_space_with("adr/ErgoReacher-v0", "m1_backlash", [0, 0.01]))
    with pytest.raises(RandomizationError, match="not this env"):
        make_env("adr/ErgoReacher-v0", space="ErgoPusher-v0-sim2real")


def test_a_run_in_the_sim_to_real_space_trains_evaluates_and_reports_in_it(tmp_path):
    """``space:`` in a run config reaches every env of the run: samples, periodic evaluation on the variant's own
    'real_guess' range, the checkpoint's evaluation and adr-report (one section for the variant)."""
    from adr_core.evaluation import evaluate, load_policy
    from adr_core.report.build import ReportOptions, build_report
    from adr_core.report.evaluations import EvaluationOptions
    from adr_core.report.run_data import load_run
    from adr_core.training.config import TrainConfig
    from adr_core.training.trainer import Trainer

    config = TrainConfig.from_dict({
        "env_id": "adr/ErgoReacher-v0", "space": "ErgoReacher-v0-sim2real", "seed": 1, "total_agent_steps": 200,
        "max_episode_steps": 20, "progress": False, "tensorboard": False, "torch_threads": 1,
        "evaluate_every": 1, "evaluate_episodes": 1, "evaluate_settings": ["reference", "real_guess"],
        "svpg": {"num_particles": 2},
        "agent": {"hidden_sizes": [16, 16], "batch_size": 16, "learning_starts": 50, "buffer_capacity": 1000},
        "discriminator": {"steps_per_transition": 0.05, "hidden_size": 16}})
    Trainer(config, tmp_path / "run").run()
    run = load_run(tmp_path / "run")
    assert "action_latency" in run.samples.names and run.samples.physical.shape[1] == 15
    latency = run.samples.physical[:, run.samples.names.index("action_latency")]
    assert latency.min() >= 0.0 and latency.max() <= 3.0 and latency.std() > 0  # sampled over the training range
    assert "real_guess_return_mean" in (tmp_path / "run" / "evaluation.csv").read_text().splitlines()[0]
    policy = load_policy(tmp_path / "run")
    assert policy.run_space is not None and policy.run_space.ndim == 15
    scores = evaluate(policy, "adr/ErgoReacher-v0", ["real_guess"], episodes=1)
    assert scores["real_guess"].points.shape == (1, 15)
    options = ReportOptions(evaluation=EvaluationOptions(episodes=1, seeds=(0,), curve_episodes=1, workers=1,
                                                         reference_episodes=1),
                            points=2, stages=1, bins=4, formats=("png",))
    report = build_report([tmp_path / "run"], tmp_path / "report", options, log=lambda _: None)
    assert report.envs[0].title == "adr/ErgoReacher-v0 (space ErgoReacher-v0-sim2real)"
    assert report.envs[0].space.ndim == 15
    assert "(space ErgoReacher-v0-sim2real)" in report.markdown.read_text()


def test_config_space_errors_are_clear():
    from adr_core.training.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match="not of env_id adr/ErgoReacher-v0"):
        TrainConfig.from_dict({"env_id": "adr/ErgoReacher-v0", "space": "ErgoPusher-v0-sim2real"})
    with pytest.raises(ConfigError, match="space: no packaged randomization space"):
        TrainConfig.from_dict({"env_id": "adr/ErgoReacher-v0", "space": "ErgoReacher-v0-nope"})
