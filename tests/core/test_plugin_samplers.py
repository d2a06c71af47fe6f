"""Samplers as plug-ins (issue 44): the registry, the learnability and ALP-GMM samplers on a success function with a
known learnable band, their checkpoints, their options' checks, and a sampler registered from outside adr_core that
trains and resumes in-process."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from adr_core.randomization import space_of
from adr_core.samplers import (
    ALPGMMConfig,
    ALPGMMSampler,
    LearnabilityConfig,
    LearnabilitySampler,
    SamplerError,
    method_samplers,
    record_of_method,
    sampler_kinds,
    sampler_record,
)
from adr_core.training.config import ConfigError, TrainConfig

TOY_DIR = Path(__file__).resolve().parents[1] / "toy_sampler"
SPACE = space_of("adr/LunarLander-v0")  # one dimension: the band is an interval of the unit line
BAND = (0.3, 0.7)


def success_probability(x: np.ndarray) -> np.ndarray:
    """Always solved below the band, never above it, in between falling linearly: learnable only inside."""
    return np.clip((BAND[1] - x) / (BAND[1] - BAND[0]), 0.0, 1.0)


def play(sampler, iterations: int, seed: int = 0) -> np.ndarray:
    """Propose/update rounds against the success function; the proposals of the second half."""
    rng = np.random.default_rng(seed)
    late = []
    for k in range(iterations):
        proposals = sampler.propose()
        outcomes = (rng.random(len(proposals)) < success_probability(proposals[:, 0])).astype(np.float64)
        sampler.update(outcomes)
        if k >= iterations // 2:
            late.append(proposals[:, 0])
    return np.concatenate(late)


def share_in_band(points: np.ndarray) -> float:
    return float(np.mean((points >= BAND[0]) & (points <= BAND[1])))


def test_learnability_concentrates_in_the_learnable_band() -> None:
    uniform = BAND[1] - BAND[0]  # 0.4 of uniform proposals fall in the band
    default = share_in_band(play(LearnabilitySampler(SPACE, LearnabilityConfig(warmup=50), 15, seed=0), 120))
    focused = share_in_band(play(LearnabilitySampler(SPACE, LearnabilityConfig(warmup=50, uniform_share=0.2), 15,
                                                     seed=0), 120))
    assert default > uniform + 0.08 and focused > default + 0.05, (default, focused)  # measured 0.53 and 0.64
    sampler = LearnabilitySampler(SPACE, LearnabilityConfig(warmup=50), num_proposals=15, seed=0)
    play(sampler, 60)
    # its estimate of p(1-p) peaks inside the band
    grid = np.linspace(0, 1, 21)[:, None]
    assert BAND[0] <= grid[np.argmax(sampler.learnability(grid)), 0] <= BAND[1]


def test_alp_gmm_concentrates_where_the_outcomes_change() -> None:
    sampler = ALPGMMSampler(SPACE, ALPGMMConfig(fit_rate=150, window=600), num_proposals=15, seed=0)
    points = play(sampler, 160)
    assert sampler.fitted and 2 <= len(sampler.weights) <= 10
    assert share_in_band(points) > 0.7, share_in_band(points)  # measured 0.88 (uniform: 0.4)


def test_uniform_share_one_is_uniform_and_no_outcomes_no_focus() -> None:
    sampler = LearnabilitySampler(SPACE, LearnabilityConfig(uniform_share=1.0, warmup=1), 15, seed=3)
    assert abs(share_in_band(play(sampler, 120)) - 0.4) < 0.06


@pytest.mark.parametrize("make", [
    lambda: LearnabilitySampler(SPACE, LearnabilityConfig(warmup=20), 15, seed=5),
    lambda: ALPGMMSampler(SPACE, ALPGMMConfig(fit_rate=45, window=200), 15, seed=5),
])
def test_a_checkpointed_sampler_continues_bit_for_bit(make) -> None:
    import torch

    a = make()
    play(a, 10)
    a.propose()  # a pending batch is part of the state too
    state = a.state_dict()
    path_state = torch.load(_saved(state), weights_only=True)  # as checkpoints are read
    b = make()
    b.load_state_dict(path_state)
    rng = np.random.default_rng(9)
    for _ in range(8):
        outcomes = (rng.random(15) < 0.5).astype(np.float64)
        assert a.update(outcomes) == b.update(outcomes)
        np.testing.assert_array_equal(a.propose(), b.propose())


def _saved(state: dict) -> str:
    import tempfile

    import torch

    handle = tempfile.NamedTemporaryFile(suffix=".pt", delete=False)
    torch.save(state, handle)
    handle.close()
    return handle.name


def test_the_registry_names_every_sampler_and_method() -> None:
    assert {"adr", "udr", "baseline", "fixed", "boundary_adr", "learnability", "alp_gmm"} <= set(sampler_kinds())
    assert method_samplers()["oracle"] == "fixed" and record_of_method("oracle").kind == "fixed"
    assert sampler_record("alp_gmm").feedback == "outcomes" and sampler_record("adr").feedback == "discriminator"
    assert sampler_record("udr").feedback == "none"
    with pytest.raises(SamplerError, match="unknown sampler 'bayesopt'; known: .*sampler_modules"):
        sampler_record("bayesopt")


@pytest.mark.parametrize("data, message", [
    ({"sampler": "learnability", "sampler_options": {"neighbors": 5}}, "unknown key(s) ['neighbors']"),
    ({"sampler": "learnability", "sampler_options": {"uniform_share": 1.5}}, "uniform_share must be in [0, 1]"),
    ({"sampler": "learnability", "sampler_options": {"history": "many"}}, "sampler_options.history: expected int"),
    ({"sampler": "alp_gmm", "sampler_options": {"criterion": "waic"}}, "criterion must be 'aic' or 'bic'"),
    ({"sampler": "alp_gmm", "sampler_options": {"max_components": 1}}, "max_components must be in [2, 50]"),
    ({"sampler": "udr", "sampler_options": {"x": 1}}, "sampler 'udr' has no options of its own"),
    ({"sampler": "adr", "sampler_options": {"num_particles": 5}}, "reads its keys from svpg.*"),
    ({"sampler": "bayesopt"}, "sampler: unknown sampler 'bayesopt'"),
    ({"sampler_modules": ["no_such_sampler_module"]}, "sampler_modules: cannot import 'no_such_sampler_module'"),
])
def test_bad_sampler_keys_are_one_line_naming_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        TrainConfig.from_dict(data)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_sampler_options_are_set_from_the_command_line_too() -> None:
    config = TrainConfig(sampler="learnability").with_overrides({"sampler_options.uniform_share": 0.25})
    assert config.sampler_options == {"uniform_share": 0.25}
    assert config.make_sampler(SPACE, 0).config.uniform_share == 0.25


def _toy_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TOY_DIR), os.environ.get("PYTHONPATH", "")])}


def test_a_sampler_registered_outside_adr_core_trains_and_resumes(tmp_path: Path) -> None:
    config = {"env_id": "adr/LunarLander-v0", "sampler": "toy_corner", "sampler_modules": ["adr_toy_sampler"],
              "sampler_options": {"corner": 0.2}, "total_agent_steps": 2400, "seed": 4, "tensorboard": False,
              "progress": False, "svpg": {"num_particles": 3}, "max_episode_steps": 200,
              "agent": {"hidden_sizes": [32, 32], "batch_size": 32, "learning_starts": 200}}
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(config))

    def train(out: Path, *extra: str) -> None:
        done = subprocess.run([sys.executable, "-m", "adr_core.training.cli", "--config", str(path), "--out",
                               str(out), *extra], env=_toy_env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]

    train(tmp_path / "whole")
    train(tmp_path / "split", "--max-iterations", "2")
    train(tmp_path / "split", "--resume")
    whole = (tmp_path / "whole" / "sampled_parameters.csv").read_text()
    assert whole == (tmp_path / "split" / "sampled_parameters.csv").read_text()
    rows = list(csv.DictReader((tmp_path / "whole" / "metrics.csv").open()))
    assert "toy_corner_center" in rows[0] and rows[-1]["toy_corner_center"] != ""
    points = [float(r["u_main_engine_power"]) for r in csv.DictReader((tmp_path / "whole" /
                                                                        "sampled_parameters.csv").open())]
    assert np.mean(np.abs(np.array(points) - 0.2) < 0.25) > 0.9  # near its corner: the plug-in ran


def test_the_probe_knows_the_learnable_region_of_a_failure_map() -> None:
    """Sweep points solved 20-80 % of the time form the learnable region (issue 44's focus rule), those below half the
    failure region, each as the cells around its points."""
    from adr_core.evaluation.points import PointOutcomes
    from adr_core.probe.failure import FailureMap, failure_region, learnable_region

    u = np.linspace(0, 1, 11)
    solved_rate = success_probability(u)  # 1 up to 0.3, falling to 0 at 0.7
    episodes = 10
    solved = (np.arange(episodes)[None, :] < np.round(solved_rate * episodes)[:, None]).astype(float)
    outcomes = PointOutcomes(returns=solved[:, None, :], final_distance=np.zeros((11, 1, episodes)),
                             solved=solved[:, None, :], lengths=np.ones((11, 1, episodes)))
    failure_map = FailureMap(SPACE, u[:, None], np.zeros(11, dtype=int), outcomes)
    learnable = learnable_region(failure_map)
    assert learnable.contains(np.array([[0.4], [0.5], [0.6]])).all()
    assert not learnable.contains(np.array([[0.1], [0.9]])).any()
    assert 0.2 < learnable.uniform_share < 0.45
    assert failure_region(failure_map).contains(np.array([[0.6], [0.9]])).all()
