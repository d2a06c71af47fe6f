"""ADR for any learner: the loop object, the gymnasium wrapper, the stable-baselines3 callback."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from adr_core import ADRLoop, ADRWrapper
from adr_core.adr_loop import ADRError
from adr_core.envs import make_env
from adr_core.training.config import TrainConfig

LUNAR = "adr/LunarLander-v0"


def small_loop(sampler: str = "adr", seed: int = 0) -> ADRLoop:
    return ADRLoop.from_config(TrainConfig.from_dict({
        "env_id": LUNAR, "sampler": sampler, "seed": seed, "max_episode_steps": 60, "svpg": {"num_particles": 3},
        "discriminator": {"steps_per_transition": 0.1, "hidden_size": 16}}))


def random_policy(obs: np.ndarray) -> np.ndarray:
    return np.zeros(2, dtype=np.float32)


def play(env: gym.Env, episodes: int, seed: int = 0) -> list[list[float]]:
    """Random-action episodes; returns the settings (physical values) they ran at."""
    rng = np.random.default_rng(seed)
    settings = []
    for episode in range(episodes):
        _, info = env.reset(seed=seed if episode == 0 else None)
        settings.append(info["adr"]["parameters"])
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
            done = terminated or truncated
    return settings


def test_the_wrapper_passes_gymnasiums_env_checker():
    check_env(ADRWrapper(make_env(LUNAR, max_episode_steps=60), small_loop()), skip_render_check=True)


def test_each_episode_runs_at_the_loops_setting_and_comes_back_to_it():
    loop = small_loop()
    env = ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop)
    seen = []
    for _ in range(3):
        _, info = env.reset()
        seen.append(info["adr"]["parameters"][0])
        assert env.unwrapped.main_engine_power == pytest.approx(info["adr"]["parameters"][0])
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.float32))
            done = terminated or truncated
    assert loop.ready and len(set(seen)) == 3
    particles_before = loop.sampler.particle_points().copy()
    metrics = loop.update(random_policy)
    assert {"sampler_reward_mean", "d_randomized", "discriminator_loss", "svpg_bandwidth"} <= set(metrics)
    assert not loop.ready and loop.iteration == 1
    _, info = env.reset()
    assert info["adr"]["iteration"] == 1
    assert not np.array_equal(loop.sampler.particle_points(), particles_before)


def test_extra_episodes_reuse_the_batch_and_are_not_scored():
    loop = small_loop()
    settings = [loop.next_setting() for _ in range(5)]
    assert [s.slot for s in settings] == [0, 1, 2, 0, 1] and [s.scored for s in settings] == [True] * 3 + [False] * 2
    np.testing.assert_array_equal(settings[3].physical, settings[0].physical)


def test_a_saved_loop_resumes_with_the_same_next_proposals(tmp_path):
    loop = small_loop(seed=5)
    play(ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop), 3)
    loop.update(random_policy)
    loop.save(tmp_path / "adr_loop.pt")  # between two batches, through a file
    restored = small_loop(seed=5)  # a new loop of the same config, e.g. in a new process
    restored.load(tmp_path / "adr_loop.pt")
    for _ in range(2):  # the next batches are the same: same proposals, same rewards, same particle steps
        a = play(ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop), 3, seed=1)
        b = play(ADRWrapper(make_env(LUNAR, max_episode_steps=60), restored), 3, seed=1)
        assert a == b
        assert loop.update(random_policy) == restored.update(random_policy)
    open_batch = loop.next_setting()  # mid-batch: a restored loop collects the open batch again from slot 0
    state = loop.state_dict()
    restored = small_loop(seed=5)
    restored.load_state_dict(state)
    first = restored.next_setting()
    assert first.slot == 0 and first.iteration == open_batch.iteration
    np.testing.assert_array_equal(first.normalized, open_batch.normalized)


@pytest.mark.parametrize("env_factory,message", [
    (lambda: gym.make("Pendulum-v1"), "has no set_parameters"),
    (lambda: make_env("adr/Pusher3DOF-v0"), "randomization space"),
])
def test_envs_that_do_not_fit_are_refused_at_construction(env_factory, message):
    with pytest.raises(ADRError, match=message):
        ADRWrapper(env_factory(), small_loop())


def test_shapes_the_discriminator_was_not_built_for_are_refused_at_construction():
    stacked = gym.wrappers.FrameStackObservation(make_env(LUNAR), 2)  # observations (2, 8) instead of (8,)
    with pytest.raises(ADRError, match="discriminator was built for"):
        ADRWrapper(stacked, small_loop())


def test_a_loop_state_of_another_run_is_refused():
    state = small_loop("adr").state_dict()
    with pytest.raises(ADRError, match="this loop is"):
        small_loop("udr").load_state_dict(state)
    with pytest.raises(ADRError, match="seed"):
        small_loop(seed=1).load_state_dict(state)
    with pytest.raises(ADRError, match="not an ADR loop state"):
        small_loop().load_state_dict({**state, "loop_format": 99})


def test_the_documented_save_and_load_through_checkpoint_files_work(tmp_path):
    from adr_core.base.checkpoint import load_checkpoint, save_checkpoint

    loop = small_loop(seed=5)
    save_checkpoint(tmp_path / "loop.pt", loop.state_dict())  # the checkpoint's own format tag stays its own
    restored = small_loop(seed=5)
    restored.load_state_dict(load_checkpoint(tmp_path / "loop.pt"))
    with pytest.raises(ADRError, match="no checkpoint at"):
        restored.load(tmp_path / "missing.pt")


def test_sb3_sac_with_the_adr_callback_runs_and_moves_the_particles():
    sb3 = pytest.importorskip("stable_baselines3")
    from adr_core.integrations.sb3 import ADRCallback

    torch.set_num_threads(1)
    for sampler in ("adr", "udr"):
        loop = small_loop(sampler)
        env = ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop)
        model = sb3.SAC("MlpPolicy", env, policy_kwargs={"net_arch": [16, 16]}, learning_starts=100, batch_size=32,
                        seed=0, device="cpu")
        before = loop.sampler.particle_points()
        callback = ADRCallback(loop)
        model.learn(700, callback=callback)
        assert callback.updates >= 2 and loop.iteration == callback.updates
        if sampler == "adr":
            assert not np.array_equal(loop.sampler.particle_points(), before)


@pytest.mark.parametrize("example", ["cleanrl_style_adr.py", "sb3_sac_adr.py"])
def test_the_examples_run(example, tmp_path):
    """Both documented examples (docs/adr_any_learner.md), with a tiny budget, run to the end."""
    import subprocess
    import sys
    from pathlib import Path

    if example == "sb3_sac_adr.py":
        pytest.importorskip("stable_baselines3")
    script = Path(__file__).resolve().parents[2] / "examples" / example
    extra = ["--out", str(tmp_path / "run")] if example == "sb3_sac_adr.py" else []
    done = subprocess.run([sys.executable, str(script), "--steps", "1500", *extra], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_a_loop_copied_into_another_process_is_refused_loudly():
    import pickle

    from stable_baselines3.common.vec_env import SubprocVecEnv

    loop = small_loop()
    with pytest.raises(ADRError, match="cannot be copied into another process .* Use DummyVecEnv"):
        pickle.dumps(ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop))
    with pytest.raises(ADRError, match="SubprocVecEnv"):  # SB3 pickles each env factory for its workers
        SubprocVecEnv([lambda: ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop)] * 2)


def test_a_loop_nobody_updates_warns_naming_the_callback():
    loop = small_loop()
    env = ADRWrapper(make_env(LUNAR, max_episode_steps=60), loop)
    with pytest.warns(UserWarning, match=r"pass ADRCallback\(loop\) to model.learn"):
        play(env, 4 * loop.slots)
    assert loop.iteration == 0 and loop.ready


def test_a_loop_builds_from_an_env_id_and_shows_its_batch_and_state():
    loop = ADRLoop("adr/LunarLander-v0")  # space and shapes from the env
    assert loop.proposals is None and loop.state.iteration == 0 and loop.state.slots == 10
    setting = loop.next_setting()
    assert loop.proposals.shape == (10, 1) and loop.proposals[0] == pytest.approx(setting.physical[0])
    loop.proposals[0] = -1.0  # a copy: the loop's batch is not changed through it
    assert loop.proposals[0] == pytest.approx(setting.physical[0])
    assert (loop.state.episodes_handed_out, loop.state.episodes_collected, loop.state.ready) == (1, 0, False)
    with pytest.raises(ADRError, match="needs a TrainConfig or an env id"):
        ADRLoop(3)  # type: ignore[arg-type]


def test_a_train_config_takes_its_nested_sections_as_mappings():
    from adr_core.training.config import ConfigError

    config = TrainConfig(svpg={"num_particles": 3}, agent={"batch_size": 64})  # type: ignore[arg-type]
    assert config.num_particles == 3 and config.agent.batch_size == 64
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \['svpg.nope'\]"):
        TrainConfig(svpg={"nope": 1})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="agent must be a mapping of its keys or AgentConfig"):
        TrainConfig(agent=3)  # type: ignore[arg-type]


def test_importing_adr_core_registers_the_envs():
    import subprocess
    import sys

    program = "import gymnasium as gym, sys, adr_core; gym.make('adr/ErgoReacher-v0'); print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"  # and the import did not load torch


def test_the_sb3_reference_policy_sees_normalized_observations_behind_vec_normalize():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from adr_core.integrations.sb3 import ADRCallback

    loop = ADRLoop(TrainConfig(env_id="adr/LunarLander-v0", svpg={"num_particles": 2}))  # type: ignore[arg-type]
    venv = VecNormalize(DummyVecEnv([lambda: ADRWrapper(make_env("adr/LunarLander-v0"), loop)]))
    model = SAC("MlpPolicy", venv, policy_kwargs={"net_arch": [8]}, learning_starts=10, seed=0)
    model.learn(300)  # the normalizer's statistics move away from 0 / 1
    callback = ADRCallback(loop)
    callback.init_callback(model)
    seen: list[np.ndarray] = []
    model.predict = lambda obs, deterministic=False: (seen.append(obs) or np.zeros(2, np.float32), None)
    raw = make_env("adr/LunarLander-v0").reset(seed=0)[0]
    callback._policy(raw)
    np.testing.assert_allclose(seen[0], venv.normalize_obs(raw))
    assert not np.allclose(seen[0], raw)
