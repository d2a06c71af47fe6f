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


def _m2_moved_after(latency, steps=2):
    """How far m2 (Reacher) has moved, true angle, ``steps`` control steps after a step command at the first."""
    env = _env("adr/ErgoReacher-v0", action_latency=latency)
    obs, _ = env.reset(seed=3)
    hold = obs[:4]  # no noise: the observed start angles are the commanded start targets (/ scale)
    _, held = _run(env, [hold] * steps)
    _, stepped = _run(env, [[0.5, *hold[1:]]] * steps)
    return abs(stepped[steps, 1] - held[steps, 1])


def test_fractional_latency_switches_the_command_part_way_through_a_step():
    """1.25 steps = 5 physics steps: the new target acts for 3 of the second step's 4 physics steps, so the joint has
    moved less than at 1.0 (4 of 4) and more than at 1.75 (1 of 4); at 2.0 it has not moved yet."""
    moved = {latency: _m2_moved_after(latency) for latency in (1.0, 1.25, 1.75, 2.0)}
    assert moved[2.0] < 1e-4
    assert moved[1.0] > moved[1.25] > moved[1.75] > 10 * moved[2.0]
    assert _m2_moved_after(1.0, steps=1) < 1e-4  # a whole step of latency: nothing moves in the first step


def _pusher(**changes):
    env = make_env("adr/ErgoPusher-v0", space=_pusher_space(*changes))
    env.unwrapped.set_parameters({**dict(zip(env.unwrapped.randomization_space.names,
                                             env.unwrapped.randomization_space.reference())), **changes})
    return env


def _pusher_space(*names):
    """ErgoPusher's packaged space plus each named optional dimension (defaults that change nothing but the name)."""
    defaults = {"m2_gain": (0.03, [0.01, 0.2]), "puck_latency": (0.0, [0.0, 0.1]), "puck_noise": (0.0, [0.0, 0.01]),
                "puck_period": (0.0, [0.0, 0.1])}
    data = load_space("adr/ErgoPusher-v0").to_dict()
    for name in names:
        default, train = defaults[name]
        data["dimensions"].append({"name": name, "default": default, "train": {"absolute": train}})
    return RandomizationSpace.from_dict(data)


def test_pusher_servo_gains_and_torques_are_dimensions_of_their_own():
    """ErgoPusher's servos take a space's gains and torque caps: a stiffer m2 gets to a small step faster; absent,
    they are the defaults (the same episode as the plain space)."""
    actions = [[0.0, 0.05, 0.0, 0.0]] * 6
    plain, _ = _run(make_env("adr/ErgoPusher-v0"), actions)
    same, _ = _run(_pusher(m2_gain=0.03), actions)
    np.testing.assert_array_equal(same, plain)
    stiff, _ = _run(_pusher(m2_gain=0.1), actions)
    target = 0.05 * SCALE
    assert abs(stiff[3, 1] * SCALE - target) < 0.5 * abs(plain[3, 1] * SCALE - target)


def test_pusher_tracker_reports_the_puck_late_in_frames_and_with_noise():
    """From outside: the observed puck (obs 11, 12) against the true one (env.puck_position) while the puck slides."""
    period, latency = 1 / 30, 0.05
    env = _pusher(puck_latency=latency, puck_period=period)
    env.reset(seed=4)
    env.unwrapped.set_puck_velocity((0.3, 0.0))
    true_x, seen = [], []
    for _ in range(12):
        obs, *_ = env.step(np.zeros(4, dtype=np.float32))
        true_x.append(env.unwrapped.puck_position[0])
        seen.append((obs[11], obs[13]))
    # the tracker's x at step k is a true position of at least latency (3 control steps) and at most latency +
    # period (5 steps) earlier; frames come every second control step, so readings repeat in pairs
    for k in range(6, 12):
        lag = [abs(seen[k][0] - x) for x in true_x[k - 5:k - 2]]
        assert min(lag) < 0.004, (k, lag)
    readings = [s[0] for s in seen[5:]]
    assert len(set(np.round(readings, 7))) <= (len(readings) + 2) // 2 + 1
    velocity = [s[1] for s in seen[6:]]
    assert all(0.05 < v < 0.35 for v in velocity)  # the frames' difference over their capture times
    noisy = _pusher(puck_noise=0.002)
    obs, _ = noisy.reset(seed=4)
    errors = []
    for _ in range(60):
        obs, *_ = noisy.step(np.zeros(4, dtype=np.float32))
        errors.append(obs[11:13] - noisy.unwrapped.puck_position)
    assert 0.0013 < np.std(errors) < 0.0027


@pytest.mark.parametrize(("name", "train", "default"), [
    ("m1_gain", [0.0, 0.2], 0.03), ("m2_max_torque", [0.1, 3.0], 0.1), ("puck_latency", [0.0, 0.8], 0.0),
    ("puck_noise", [0.0, 0.1], 0.0)])
def test_pusher_servo_and_tracker_bounds_are_checked(name, train, default):
    with pytest.raises(RandomizationError, match=f"{name}.*physical bounds"):
        make_env("adr/ErgoPusher-v0", space=_space_with("adr/ErgoPusher-v0", name, train, default))
