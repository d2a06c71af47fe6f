"""What a run directory holds, as arrays: config, metrics.csv, sampled_parameters.csv, evaluation.csv, checkpoints.

Both kinds of run (``adr-train`` and the node graph) write the same files (docs/algorithm.md, docs/node_graph.md).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..envs.registry import import_file_env_modules
from ..evaluation.early_stop import EARLY_STOP_FILE
from ..evaluation.periodic import EVALUATION_FILE
from ..evaluation.policies import CHECKPOINTS
from ..randomization import RandomizationError, RandomizationSpace, space_of
from ..samplers import SamplerError, sampler_record, sampler_records

CONFIG, METRICS, SAMPLES = "config.yaml", "metrics.csv", "sampled_parameters.csv"
PAPER_ORDER = ("adr", "udr", "fixed", "baseline")  # the paper's methods first, then the others as registered


def method_label(sampler: str) -> str:
    """A sampler kind's label in figures and tables (its record's; an unknown kind is shown as it is)."""
    try:
        return sampler_record(sampler).label
    except SamplerError:
        return sampler


def method_order() -> tuple[str, ...]:
    kinds = [*PAPER_ORDER, *(r.kind for r in sampler_records() if r.kind not in PAPER_ORDER)]
    return tuple(method_label(kind) for kind in kinds)


class RunDataError(ValueError):
    """A directory that is not a readable run directory; the message says what is missing."""


def read_columns(path: Path) -> dict[str, np.ndarray]:
    """A CSV file as ``{column: float array}``; empty cells are NaN."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return {}
    header, body = rows[0], [r for r in rows[1:] if r]
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        columns[name] = np.array([float(r[j]) if j < len(r) and r[j] != "" else np.nan for r in body], dtype=np.float64)
    return columns


@dataclass(frozen=True)
class Samples:
    """Every proposal of the run: ``iteration (N,)``, ``normalized``/``physical`` ``(N, d)``."""

    names: tuple[str, ...]
    iteration: np.ndarray
    normalized: np.ndarray
    physical: np.ndarray


@dataclass(frozen=True)
class RunData:
    path: Path
    config: dict[str, Any]
    metrics: dict[str, np.ndarray]
    samples: Samples
    evaluation: dict[str, np.ndarray] | None = field(default=None)

    @property
    def env_id(self) -> str:
        return str(self.config.get("env_id", ""))

    @property
    def space_name(self) -> str | None:
        """The run config's ``space`` (a packaged variant or a YAML file), or None for the env's packaged space."""
        space = self.config.get("space")
        return None if space is None else str(space)

    @property
    def sampler(self) -> str:
        return str(self.config.get("sampler", ""))

    @property
    def seed(self) -> int:
        return int(self.config.get("seed", 0))

    @property
    def method(self) -> str:
        """ADR, UDR, baseline, oracle (the 'fixed' sampler on the 'hard' range), or 'fixed (<range>)'."""
        if self.sampler == "fixed" and self.config.get("fixed_range", "hard") != "hard":
            return f"fixed ({self.config['fixed_range']})"
        return method_label(self.sampler)

    @property
    def label(self) -> str:
        return f"{self.method} seed {self.seed}"

    @property
    def space(self) -> RandomizationSpace:
        return space_of(self.env_id, self.space_name)

    @property
    def checkpoint_dir(self) -> Path:
        return self.path / CHECKPOINTS

    def ended_by(self) -> str:
        """How the run ended, from its files: "early stop", "budget", or how far it got ("at 120000 of 200000")."""
        steps = self.metrics.get("agent_steps")
        last = int(steps[-1]) if steps is not None and len(steps) else 0
        early = self.path / EARLY_STOP_FILE
        if early.is_file():
            rows = list(csv.DictReader(early.open(newline="")))
            if rows and rows[-1].get("met") in ("1", "True", "true"):
                return f"early stop at {last}"
        budget = int(self.config.get("total_agent_steps") or 0)
        return "budget" if budget and last >= budget else f"at {last} of {budget or '?'}"

    def agent_steps_of_iterations(self, iterations: np.ndarray) -> np.ndarray:
        """Agent steps at the end of each given iteration (from metrics.csv; NaN where unknown)."""
        known_iterations, steps = self.metrics.get("iteration"), self.metrics.get("agent_steps")
        if known_iterations is None or steps is None or not len(known_iterations):
            return np.full(len(iterations), np.nan)
        lookup = dict(zip(known_iterations.astype(int), steps))
        return np.array([lookup.get(int(i), np.nan) for i in iterations], dtype=np.float64)


def load_run(path: str | Path) -> RunData:
    path = Path(path)
    missing = [name for name in (CONFIG, METRICS, SAMPLES) if not (path / name).is_file()]
    if missing:
        raise RunDataError(f"{path} is not a run directory: missing {', '.join(missing)}")
    config = yaml.safe_load((path / CONFIG).read_text()) or {}
    if not isinstance(config, dict) or "env_id" not in config:
        raise RunDataError(f"{path / CONFIG} names no env_id")
    try:
        # a run of an env registered by its own module, if the user allowed it (a file never makes a tool import code)
        import_file_env_modules(config.get("env_modules"), config["env_id"], "the run")
        names = tuple(space_of(config["env_id"], config.get("space")).names)
    except RandomizationError as error:
        raise RunDataError(f"{path / CONFIG}: {error}") from None
    columns = read_columns(path / SAMPLES)
    count = len(columns.get("iteration", []))
    def table(keys: list[str]) -> np.ndarray:
        return np.stack([columns[k] for k in keys], axis=1) if count else np.zeros((0, len(names)))

    samples = Samples(names, columns.get("iteration", np.zeros(0)).astype(np.int64), table([f"u_{n}" for n in names]),
                      table(list(names)))
    evaluation = read_columns(path / EVALUATION_FILE) if (path / EVALUATION_FILE).is_file() else None
    if evaluation and not len(evaluation.get("iteration", ())):
        evaluation = None  # header only: the run ended before its first periodic evaluation
    return RunData(path, config, read_columns(path / METRICS), samples, evaluation or None)


def find_runs(paths: list[str | Path]) -> list[Path]:
    """Run directories among ``paths``: each path itself if it is one, else the run directories below it."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / CONFIG).is_file() and (path / METRICS).is_file():
            found.append(path)
            continue
        below = sorted(p.parent for p in path.glob(f"**/{METRICS}") if (p.parent / CONFIG).is_file())
        if not below:
            raise RunDataError(f"{path} is not a run directory and holds none ({CONFIG} + {METRICS})")
        found += below
    return list(dict.fromkeys(found))


def method_sort_key(method: str) -> tuple[int, str]:
    order = method_order()
    return (order.index(method) if method in order else len(order), method)
