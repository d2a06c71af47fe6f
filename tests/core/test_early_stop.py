"""Early stop: the rule, its chunked check, its schedule, its file across a resume, and the trainer ending on it."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from tiny_configs import tiny_config

from adr_core.evaluation.early_stop import (
    CHUNK,
    CONFIRM_CHUNKS,
    CONFIRM_STRIDE,
    EARLY_STOP_FILE,
    EarlyStop,
    StopRule,
)
from adr_core.training.config import ConfigError, TrainConfig
from adr_core.training.trainer import Trainer


class Script:
    """A scorer whose episodes are solved or not as listed (returns 250 when solved, 0 otherwise)."""

    def __init__(self, solved: list[bool]) -> None:
        self.solved, self.chunks = list(solved), []

    def __call__(self, weights):
        def score(chunk: int, episodes: int):
            self.chunks.append((chunk, episodes))
            part = np.array(self.solved[chunk * CHUNK:chunk * CHUNK + episodes])
            return np.where(part, 250.0, 0.0), part
        return score


def make_stop(tmp_path, solved, rule=StopRule(every_steps=100), start_steps=0):
    script = Script(solved)
    return EarlyStop(tmp_path, "adr/LunarLander-v0", rule, scorer=script, start_steps=start_steps), script


def test_met_when_the_solved_fraction_reaches_the_rule(tmp_path):
    stop, script = make_stop(tmp_path, [True] * 29 + [False])  # 29 of 30 = 0.967 >= 0.95
    assert stop.maybe_check(100, {}) and stop.met
    assert script.chunks == [(0, 10), (1, 10), (2, 10)]


def test_a_chunk_with_too_many_failures_ends_the_check(tmp_path):
    stop, script = make_stop(tmp_path, [False, False] + [True] * 28)  # 2 failures > the 1 that 0.95 of 30 allows
    assert not stop.maybe_check(100, {})
    assert script.chunks == [(0, 10)]  # chunks 1 and 2 never played
    with (tmp_path / EARLY_STOP_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["agent_steps"], r["episodes"], r["met"]) for r in rows] == [("100", "10", "0")]


def test_the_mean_return_rule_is_checked_too(tmp_path):
    stop, _ = make_stop(tmp_path, [True] * 30, StopRule(every_steps=100, return_mean=300.0))
    assert not stop.maybe_check(100, {})  # all solved, but the returns are 250 < 300


def test_checks_run_at_the_first_boundary_past_each_multiple(tmp_path):
    stop, script = make_stop(tmp_path, [False] * 30)
    for steps in (40, 90, 130, 170, 199, 260, 420):
        stop.maybe_check(steps, {})
    assert [c for c, _ in script.chunks] == [0, 0, 0]  # at 130, 260 and 420 (past 100, 200, 400; 300 skipped)
    assert stop.last_seconds > 0.0


def test_a_resumed_run_keeps_the_rows_up_to_its_checkpoint(tmp_path):
    stop, _ = make_stop(tmp_path, [False] * 30)
    stop.maybe_check(100, {})
    met, _ = make_stop(tmp_path, [True] * 30, start_steps=100)
    assert met.maybe_check(250, {})
    assert make_stop(tmp_path, [], start_steps=300)[0].met  # resumed after the met row: done at once
    again, _ = make_stop(tmp_path, [], start_steps=150)  # resumed before it: that row is dropped
    assert not again.met
    with (tmp_path / EARLY_STOP_FILE).open() as handle:
        assert [r["agent_steps"] for r in csv.DictReader(handle)] == ["100"]


@pytest.mark.parametrize("key, value", [("early_stop_every_steps", -1), ("early_stop_episodes", 0),
                                        ("early_stop_solved_fraction", 1.5)])
def test_bad_early_stop_settings_are_refused_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=key):
        TrainConfig.from_dict({key: value})


def test_the_trainer_ends_the_run_when_the_rule_is_met(tmp_path):
    # a rule any policy meets (no solved episode needed, any mean return): the run ends at the first check
    config = tiny_config(total_agent_steps=100_000, early_stop_every_steps=1000, early_stop_episodes=2,
                         early_stop_solved_fraction=0.0, early_stop_return_mean=-1e9)
    trainer = Trainer(config, tmp_path)
    rows = trainer.run()
    assert trainer.solved and trainer.done
    assert rows[-1]["agent_steps"] >= 1000 > rows[-2]["agent_steps"]
    with (tmp_path / EARLY_STOP_FILE).open() as handle:
        checks = list(csv.DictReader(handle))
    assert len(checks) == 1 and checks[0]["met"] == "1" and checks[0]["episodes"] == "2"
    assert float(checks[0]["wall_time_s"]) == pytest.approx(rows[-1]["wall_time_s"])  # the check is training time
    assert Trainer(config, tmp_path, resume=True).run() == []  # resuming a run that met its rule trains no more


def test_checks_change_nothing_in_training():
    # the check plays its own episodes on its own envs and seed streams: a rule never met leaves the run bit-identical
    plain = Trainer(tiny_config(), None).run()
    checked = Trainer(tiny_config(early_stop_every_steps=300, early_stop_episodes=3), None).run()
    comparable = [[{k: v for k, v in r.items() if not k.startswith("time_") and k != "wall_time_s"} for r in rows]
                  for rows in (plain, checked)]
    assert len(plain) > 2 and np.testing.assert_equal(comparable[0], comparable[1]) is None


class Bernoulli:
    """A scorer whose fixed check set (chunks < CONFIRM_CHUNKS) always passes, as a set a policy has fitted by luck,
    while every fresh episode is solved with probability ``p`` (the policy's true solved rate)."""

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.rng, self.chunks = p, np.random.default_rng(seed), []

    def __call__(self, weights):
        def score(chunk: int, episodes: int):
            self.chunks.append(chunk)
            solved = np.ones(episodes, bool) if chunk < CONFIRM_CHUNKS else self.rng.random(episodes) < self.p
            return np.where(solved, 250.0, 0.0), solved
        return score


CONFIRMED = StopRule(every_steps=100, episodes=30, solved_fraction=0.95, confirm_episodes=50,
                     confirm_solved_fraction=0.96)


def test_a_check_is_confirmed_on_fresh_episodes_of_its_own(tmp_path):
    scorer = Bernoulli(0.0, 0)  # the fixed set passes, no fresh episode is solved
    stop = EarlyStop(tmp_path, "adr/LunarLander-v0", CONFIRMED, scorer=scorer)
    assert not stop.maybe_check(100, {}) and not stop.maybe_check(200, {})
    # fresh seed streams for each check's confirmation
    assert scorer.chunks == [0, 1, 2, CONFIRM_CHUNKS, 0, 1, 2, CONFIRM_CHUNKS + CONFIRM_STRIDE]
    with (tmp_path / EARLY_STOP_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["solved_fraction"], r["confirm_episodes"], r["confirm_solved_fraction"], r["met"]) for r in rows] == \
        [("1.0", "10", "0.0", "0")] * 2  # the confirmation stopped after its first chunk: 10 failures > 2
    resumed = EarlyStop(tmp_path, "adr/LunarLander-v0", CONFIRMED, scorer=scorer, start_steps=200)
    assert resumed.checks == 2  # the next confirmation uses the third check's fresh streams
    resumed.maybe_check(300, {})
    assert scorer.chunks[-1] == CONFIRM_CHUNKS + 2 * CONFIRM_STRIDE


def first_stop(p: float, seed: int, checks: int) -> int | None:
    stop = EarlyStop(None, "adr/LunarLander-v0", CONFIRMED, scorer=Bernoulli(p, seed))
    return next((k for k in range(checks) if stop.maybe_check(100 * (k + 1), {})), None)


def test_a_policy_at_85_percent_rarely_stops_and_one_at_97_percent_stops_quickly():
    # per check, a policy at p = 0.85 passes 50 fresh episodes with <= 2 failures with probability
    # P[Binomial(50, 0.15) <= 2] = 0.0142, even when its fixed check set always passes
    bound = sum(math.comb(50, k) * 0.15 ** k * 0.85 ** (50 - k) for k in range(3))
    assert bound == pytest.approx(0.0142, abs=1e-4)
    runs = [first_stop(0.85, seed, 1) for seed in range(3000)]
    rate = sum(r is not None for r in runs) / len(runs)
    assert rate <= bound + 3 * (bound * (1 - bound) / len(runs)) ** 0.5
    quick = [first_stop(0.97, seed, 5) for seed in range(200)]
    assert sum(k is not None and k <= 2 for k in quick) >= 0.95 * len(quick)  # P[pass] = 0.81 per check


class Synthetic:
    """A policy known only by its solved rate per setting: reference, over the training range, on the hard end.
    Episodes are solved with those probabilities (a fixed stream per part and chunk)."""

    def __init__(self, reference: float, range_rate: float, hard: float) -> None:
        self.rates = {"reference": reference, "range": range_rate, "hard": hard}
        self.played = {"reference": 0, "range": 0, "hard": 0}

    def _episodes(self, part: str, chunk: int, episodes: int):
        self.played[part] += episodes
        solved = np.random.default_rng([list(self.rates).index(part), chunk]).random(episodes) < self.rates[part]
        return np.where(solved, 250.0, 0.0), solved

    def reference(self, weights):
        return lambda chunk, episodes: self._episodes("reference", chunk, episodes)

    def parts(self, weights):
        return lambda part, chunk, episodes: self._episodes(part, chunk, episodes)


def range_stop(tmp_path, policy, **rule):
    rule = StopRule(every_steps=100, confirm_episodes=50, confirm_solved_fraction=0.96, **rule)
    return EarlyStop(tmp_path, "adr/LunarLander-v0", rule, scorer=policy.reference, part_scorer=policy.parts)


def test_the_range_aware_stop_refuses_a_policy_that_lands_at_the_reference_but_fails_the_hard_end(tmp_path):
    lander = Synthetic(reference=1.0, range_rate=0.9, hard=0.3)
    stop = range_stop(tmp_path, lander, hard_episodes=40, hard_solved_fraction=0.85)
    assert not any(stop.maybe_check(100 * k, {}) for k in range(1, 6))  # five checks, none stops it
    assert lander.played["hard"] > 0  # ... because of the hard end: the reference passed every time
    with (tmp_path / EARLY_STOP_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    assert all(float(r["solved_fraction"]) == 1.0 and float(r["hard_solved_fraction"]) < 0.85 for r in rows)
    # the same reference-only rule would have stopped it at the first check
    assert range_stop(tmp_path / "ref_only", Synthetic(1.0, 0.9, 0.3)).maybe_check(100, {})


def test_the_range_aware_stop_stops_a_policy_that_solves_the_range_and_confirms_it(tmp_path):
    lander = Synthetic(reference=1.0, range_rate=1.0, hard=0.99)
    stop = range_stop(tmp_path, lander, hard_episodes=40, hard_solved_fraction=0.85, range_episodes=20,
                      range_solved_fraction=0.9)
    assert stop.maybe_check(100, {})
    assert lander.played == {"reference": 80, "range": 40, "hard": 80}  # check + confirmation of each part
    assert "over the hard range" in stop.describe() and "over the training range" in stop.describe()


@pytest.mark.parametrize("key, value", [("early_stop_range_solved_fraction", 1.5),
                                        ("early_stop_hard_solved_fraction", -0.1),
                                        ("early_stop_hard_episodes", -3), ("early_stop_range_episodes", 5000)])
def test_bad_range_stop_settings_are_refused_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=key):
        TrainConfig.from_dict({"env_id": "adr/LunarLander-v0", key: value})


def test_the_range_check_plays_real_episodes_over_the_hard_end(tmp_path):
    """The default part scorer: points within 'hard' (engines 8-11) and over the training range, one episode each."""
    from adr_core.agents.networks import Actor

    weights = Actor(8, 2, (16, 16)).state_dict()
    stop = EarlyStop(None, "adr/LunarLander-v0", StopRule(every_steps=1, hard_episodes=3, range_episodes=2),
                     max_episode_steps=30)
    score = stop._range_scorer(weights)
    returns, solved = score("hard", 0, 3)
    assert returns.shape == solved.shape == (3,) and not solved.any()  # 30 steps cannot land
    again, _ = score("hard", 0, 3)
    np.testing.assert_array_equal(returns, again)  # the chunk's points and initial states are fixed
    other, _ = score("range", 0, 2)
    assert other.shape == (2,)
