"""Stop a run once its deterministic policy solves the reference setting, and (when asked) the randomized range it
trains on (stable-baselines3's ``StopTrainingOnRewardThreshold``, with the success rule of the env instead of a
return alone).

    stop = EarlyStop(run_dir, env_id, every_steps=10_000, episodes=30, solved_fraction=0.95)
    ... after each completed iteration:
    if stop.maybe_check(agent_steps, agent.actor_state_dict()):   # True once the rule is met: end the run
        ...

At the first iteration boundary at or past every multiple of ``every_steps`` agent steps, the policy plays
``episodes`` deterministic episodes at the reference setting, in chunks of ``CHUNK`` (chunk c on the evaluation seed
stream ``SEED_BASE + c``, which no other evaluation of this project uses, so the check never replays the learning
curve's or a benchmark's final episodes). The rule is met when the solved fraction of all ``episodes`` is at least
``solved_fraction`` and, if ``return_mean`` is set, their mean return is at least that. A chunk that already leaves
too many unsolved episodes ends the check early: a policy that is far from the rule costs one chunk.

**Confirmation** (``confirm_episodes`` > 0): a check that meets the rule is confirmed on that many *fresh* episodes
(initial states no earlier check or evaluation played: chunk seeds ``SEED_BASE + CONFIRM_CHUNKS + k *
CONFIRM_STRIDE + c`` for the k-th check), which must meet ``confirm_solved_fraction`` (and the return rule) too. The
fixed check set selects the policy (it is replayed at every check, so a policy can fit it by luck); the fresh set
does not, so a stop needs an unbiased pass: a policy whose true solved rate is p passes it with probability
P[Binomial(confirm_episodes, 1 - p) <= failures allowed] at most, whatever happened on the fixed set
(docs/algorithm.md, "Early stop": 50 episodes, <= 2 failures -> 1.4 % at p = 0.85 per check).

**The randomized range** (``range_episodes``, ``hard_episodes`` > 0): a check that meets the reference rule also plays
``range_episodes`` episodes at points drawn uniformly over the space's training range and ``hard_episodes`` at points
drawn uniformly within its named range ``hard`` (the env's hard end: LunarLander's engines 8-11), each needing its own
solved fraction; the confirmation replays both on fresh points and initial states. A policy that lands at the
reference but fails on the hard end does not stop the run. Range points come from the chunk's own seed stream
(``RANGE_SEED_BASE``), one point per episode.

The check is part of training: its time is training time (``last_seconds``; the trainers add it to wall_time_s), not
excluded like the learning-curve evaluation. Each check appends a row to ``<run_dir>/early_stop.csv``; a resumed run
keeps the rows up to its checkpoint and is already done when the last kept row met the rule.
"""
from __future__ import annotations

import csv
import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..randomization import RandomizationSpace, space_of

EARLY_STOP_FILE = "early_stop.csv"
CHUNK = 10
SEED_BASE = 1_000_001
RANGE_SEED_BASE = 3_000_001  # the range parts' points and initial states (no other evaluation uses these seeds)
CONFIRM_CHUNKS, CONFIRM_STRIDE = 1_000, 100  # the k-th check's confirmation: chunks 1000 + 100 k, ...
PARTS = ("range", "hard")  # the randomized parts of a check, beside the reference
COLUMNS = ("agent_steps", "wall_time_s", "check_s", "episodes", "solved_fraction", "return_mean",
           "confirm_episodes", "confirm_solved_fraction", "confirm_return_mean", "met",
           "range_solved_fraction", "hard_solved_fraction", "confirm_range_solved_fraction",
           "confirm_hard_solved_fraction")

# (chunk index, episodes) -> (returns, solved) of that many deterministic reference episodes
Scorer = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
# (part: "range" or "hard", chunk index, episodes) -> (returns, solved) at that many points of the part
PartScorer = Callable[[str, int, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class StopRule:
    every_steps: int
    episodes: int = 30
    solved_fraction: float = 0.95
    return_mean: float | None = None
    confirm_episodes: int = 0  # 0: no confirmation
    confirm_solved_fraction: float | None = None  # None: solved_fraction
    range_episodes: int = 0  # 0: the training range is not checked
    range_solved_fraction: float = 0.85
    hard_episodes: int = 0  # 0: the hard range is not checked
    hard_solved_fraction: float = 0.85

    def __post_init__(self) -> None:
        if self.every_steps < 1 or self.episodes < 1:
            raise ValueError(f"every_steps ({self.every_steps}) and episodes ({self.episodes}) must be >= 1")
        if not 0 <= self.confirm_episodes <= CHUNK * CONFIRM_STRIDE:
            raise ValueError(f"confirm_episodes must be in [0, {CHUNK * CONFIRM_STRIDE}], got {self.confirm_episodes}")
        for name in ("range_episodes", "hard_episodes"):
            if not 0 <= getattr(self, name) <= CHUNK * CONFIRM_STRIDE:
                raise ValueError(f"{name} must be in [0, {CHUNK * CONFIRM_STRIDE}], got {getattr(self, name)}")
        for name in ("solved_fraction", "confirm_solved_fraction", "range_solved_fraction", "hard_solved_fraction"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")

    @property
    def failures_allowed(self) -> int:
        return allowed(self.episodes, self.solved_fraction)

    @property
    def confirm_fraction(self) -> float:
        return self.solved_fraction if self.confirm_solved_fraction is None else self.confirm_solved_fraction

    @property
    def confirm_failures_allowed(self) -> int:
        return allowed(self.confirm_episodes, self.confirm_fraction)

    def part(self, name: str) -> tuple[int, float]:
        """(episodes, solved fraction) of a randomized part ("range" or "hard")."""
        return getattr(self, f"{name}_episodes"), getattr(self, f"{name}_solved_fraction")


def allowed(episodes: int, solved_fraction: float) -> int:
    """Unsolved episodes a check of ``episodes`` may have and still meet ``solved_fraction``."""
    return int(math.floor(episodes * (1.0 - solved_fraction) + 1e-9))


class EarlyStop:
    def __init__(self, run_dir: str | Path | None, env_id: str, rule: StopRule, *,
                 max_episode_steps: int | None = None, space: RandomizationSpace | str | None = None,
                 start_steps: int = 0,
                 scorer: Callable[[Mapping[str, torch.Tensor]], Scorer] | None = None,
                 part_scorer: Callable[[Mapping[str, torch.Tensor]], PartScorer] | None = None) -> None:
        self.rule, self.env_id = rule, env_id
        self.max_episode_steps = max_episode_steps
        self.space = None if space is None else space_of(env_id, space)
        if rule.hard_episodes and part_scorer is None and "hard" not in space_of(env_id, self.space).range_names:
            raise ValueError(f"early_stop_hard_episodes: the space of {env_id} has no named range 'hard'")
        self.path = None if run_dir is None else Path(run_dir) / EARLY_STOP_FILE
        self._scorer = scorer or self._reference_scorer
        self._part_scorer = part_scorer or self._range_scorer
        self.met = False
        self.checks = 0  # checks so far (kept across a resume): the next confirmation's fresh seed streams
        self.last_seconds = 0.0
        self.seconds_total = 0.0
        self._last_steps = int(start_steps)
        self._prepare_file(int(start_steps))

    def due(self, agent_steps: int) -> bool:
        every = self.rule.every_steps
        return agent_steps > 0 and agent_steps // every > self._last_steps // every

    def maybe_check(self, agent_steps: int, actor_weights: Mapping[str, torch.Tensor],
                    wall_time_s: float = float("nan")) -> bool:
        """Check when due; True once the rule has been met (the run should end). ``last_seconds``: this call's
        check time (0 when none ran)."""
        self.last_seconds = 0.0
        if self.met or not self.due(agent_steps):
            self._last_steps = max(self._last_steps, int(agent_steps))
            return self.met
        self._last_steps = int(agent_steps)
        start = time.perf_counter()
        rule, score = self.rule, self._scorer(actor_weights)
        returns, solved = self._play(score, 0, rule.episodes, rule.failures_allowed)
        met = self._meets(returns, solved, rule.episodes, rule.failures_allowed)
        nan = float("nan")
        parts: dict[str, float] = {f"{p}_solved_fraction": nan for p in PARTS}
        parts |= {f"confirm_{p}_solved_fraction": nan for p in PARTS}
        if met:
            met = self._parts_meet(actor_weights, 0, parts, "")
        confirm_returns, confirm_solved = np.zeros(0), np.zeros(0, dtype=bool)
        if met and rule.confirm_episodes:
            first = CONFIRM_CHUNKS + self.checks * CONFIRM_STRIDE
            confirm_returns, confirm_solved = self._play(score, first, rule.confirm_episodes,
                                                         rule.confirm_failures_allowed)
            met = self._meets(confirm_returns, confirm_solved, rule.confirm_episodes, rule.confirm_failures_allowed)
            if met:
                met = self._parts_meet(actor_weights, first, parts, "confirm_")
        self.met = met
        self.checks += 1
        self.last_seconds = time.perf_counter() - start
        self.seconds_total += self.last_seconds
        self._append({"agent_steps": int(agent_steps), "wall_time_s": float(wall_time_s) + self.last_seconds,
                      "check_s": self.last_seconds, "episodes": int(returns.size),
                      "solved_fraction": float(solved.mean()), "return_mean": float(returns.mean()),
                      "confirm_episodes": int(confirm_returns.size),
                      "confirm_solved_fraction": float(confirm_solved.mean()) if confirm_solved.size else nan,
                      "confirm_return_mean": float(confirm_returns.mean()) if confirm_returns.size else nan,
                      "met": int(self.met), **parts})
        return self.met

    def _parts_meet(self, actor_weights: Mapping[str, torch.Tensor], first_chunk: int, parts: dict[str, float],
                    prefix: str) -> bool:
        """Play each randomized part the rule asks for (from ``first_chunk`` of its streams); False at the first that
        misses its fraction. The solved fractions go into ``parts``."""
        wanted = [part for part in PARTS if self.rule.part(part)[0]]
        if not wanted:
            return True
        score = self._part_scorer(actor_weights)
        for part in wanted:
            episodes, fraction = self.rule.part(part)
            failures = allowed(episodes, fraction)
            play_part: Scorer = functools.partial(score, part)
            returns, solved = self._play(play_part, first_chunk, episodes, failures)
            parts[f"{prefix}{part}_solved_fraction"] = float(solved.mean())
            if returns.size < episodes or int((~solved).sum()) > failures:
                return False
        return True

    def describe(self) -> str:
        rule = self.rule
        text = f"reference solved fraction >= {rule.solved_fraction:g} of {rule.episodes} episodes"
        text += f" and mean return >= {rule.return_mean:g}" if rule.return_mean is not None else ""
        for part, what in (("range", "the training range"), ("hard", "the hard range")):
            episodes, fraction = rule.part(part)
            if episodes:
                text += f", >= {fraction:g} of {episodes} episodes over {what}"
        if rule.confirm_episodes:
            text += f", confirmed on {rule.confirm_episodes} fresh episodes (>= {rule.confirm_fraction:g} solved)"
        return text

    # ------------------------------------------------------------------ internals
    @staticmethod
    def _play(score: Scorer, first_chunk: int, episodes: int, failures_allowed: int) -> tuple[np.ndarray, np.ndarray]:
        """``episodes`` episodes in chunks from ``first_chunk`` on, ending early once too many failed."""
        returns: list[np.ndarray] = []
        solved: list[np.ndarray] = []
        played, chunk = 0, first_chunk
        while played < episodes:
            n = min(CHUNK, episodes - played)
            chunk_returns, chunk_solved = score(chunk, n)
            returns.append(np.asarray(chunk_returns, dtype=np.float64).reshape(-1))
            solved.append(np.asarray(chunk_solved, dtype=bool).reshape(-1))
            played, chunk = played + n, chunk + 1
            if int((~np.concatenate(solved)).sum()) > failures_allowed:
                break  # the rule can no longer be met by this policy
        return np.concatenate(returns), np.concatenate(solved)

    def _meets(self, returns: np.ndarray, solved: np.ndarray, episodes: int, failures_allowed: int) -> bool:
        if returns.size < episodes or int((~solved).sum()) > failures_allowed:
            return False
        return self.rule.return_mean is None or float(returns.mean()) >= self.rule.return_mean

    def _reference_scorer(self, actor_weights: Mapping[str, torch.Tensor]) -> Scorer:
        from .settings import evaluate

        def score(chunk: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
            scores = evaluate(actor_weights, self.env_id, ["reference"], episodes, (SEED_BASE + chunk,),
                              max_episode_steps=self.max_episode_steps, workers=1, space=self.space)
            outcomes = scores["reference"].outcomes
            return outcomes.returns.reshape(-1), outcomes.solved.reshape(-1)

        return score

    def _range_scorer(self, actor_weights: Mapping[str, torch.Tensor]) -> PartScorer:
        def score(part: str, chunk: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
            returns, solved = range_episodes(actor_weights, self.env_id, part, episodes, RANGE_SEED_BASE + 2 * chunk
                                             + PARTS.index(part), space=self.space,
                                             max_episode_steps=self.max_episode_steps)
            return returns, solved

        return score

    def _append(self, row: dict[str, float | int]) -> None:
        if self.path is None:
            return
        with self.path.open("a", newline="") as handle:
            csv.writer(handle).writerow([repr(row[c]) if isinstance(row[c], float) else str(row[c])
                                         for c in COLUMNS])

    def _prepare_file(self, start_steps: int) -> None:
        """A fresh file, or (resume) the rows up to the checkpoint's agent steps; the last one says if it was met."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept: list[list[str]] = []
        if start_steps > 0 and self.path.is_file():
            with self.path.open(newline="") as handle:
                rows = list(csv.reader(handle))
            header = tuple(rows[0]) if rows else ()
            if header and set(header) <= set(COLUMNS) and header == COLUMNS[:len(header)]:
                # this version's columns, or an earlier version's (fewer; the new ones blank)
                kept = [r + [""] * (len(COLUMNS) - len(r)) for r in rows[1:]
                        if len(r) == len(header) and int(r[0]) <= start_steps]
        if kept:
            self.met = kept[-1][COLUMNS.index("met")] == "1"
        self.checks = len(kept)
        with self.path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            writer.writerows(kept)


def range_episodes(actor_weights: Mapping[str, torch.Tensor], env_id: str, part: str, episodes: int, seed: int, *,
                   space: RandomizationSpace | None = None, max_episode_steps: int | None = None,
                   workers: int = 1, with_distance: bool = False) -> Any:
    """(returns, solved) of ``episodes`` deterministic episodes, each at its own point drawn uniformly over the
    space's training range (``part`` "range") or within its named range ``hard`` ("hard"), each from its own initial
    state; the points and states depend on ``seed`` alone. ``with_distance``: also their final distances."""
    from .episodes import PolicySpec
    from .points import PointsRequest, evaluate_points
    from .settings import actor_weights_of

    resolved = space_of(env_id, space)
    rng = np.random.default_rng(seed)
    if part == "range":
        points = resolved.from_normalized(resolved.sample_uniform(rng, episodes))
    elif part == "hard":
        low, high = resolved.range_box("hard")
        points = low + rng.random((episodes, resolved.ndim)) * (high - low)
    else:
        raise ValueError(f"part must be 'range' or 'hard', got {part!r}")
    specs = {"policy": PolicySpec(env_id, actor_weights_of(dict(actor_weights)), max_episode_steps, space=space)}
    requests = [PointsRequest("policy", point[None, :], (seed * 1000 + k,), 1) for k, point in enumerate(points)]
    outcomes = evaluate_points(specs, requests, workers=workers)
    returns = np.concatenate([o.returns.reshape(-1) for o in outcomes])
    solved = np.concatenate([o.solved.reshape(-1) for o in outcomes])
    if with_distance:
        return returns, solved, np.concatenate([o.final_distance.reshape(-1) for o in outcomes])
    return returns, solved
