"""One record per randomized env: everything the rest of the stack needs to know about it, in one place.

Training, evaluation, the report, the plausibility bounds on the wire, the launch files and the probe read an env's
facts from its ``EnvRecord`` (``env_record(env_id)``), never from a table of their own. Adding an env is one module
(a gymnasium env with ``RandomizedEnvMixin``), one ``register_env(EnvRecord(...))`` and its YAML files (the space,
experiment configs); ``docs/environments.md`` "Adding an env" shows it. A run of such an env names the module that
registers it in its config (``env_modules``), so every process of a graph imports it before reading the env id.

The records import no simulator: an env's module is imported by gymnasium when the env is made. An env of another
package registers its record in its entry point's module (evaluation workers import that module to know the env).
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import gymnasium

from ..base.goal_layout import GoalLayout
from ..randomization import RandomizationError
from ..randomization.loading import register_space_file

Metric = Literal["return", "final_distance"]


@dataclass(frozen=True)
class SolvedCriterion:
    """The paper's "solved" rule of an env: an episode's return above, or its final distance below, a threshold."""

    metric: Metric  # what is compared: the episode return or the final distance
    threshold: float
    higher_is_better: bool

    @property
    def label(self) -> str:
        what = "return" if self.metric == "return" else "final distance"
        return f"solved: {what} {'>' if self.higher_is_better else '<'} {self.threshold:g}"

    @property
    def axis_label(self) -> str:
        return "episode return" if self.metric == "return" else "final distance (m)"


@dataclass(frozen=True)
class EnvRecord:
    """What the stack knows of one randomized env."""

    env_id: str  # gymnasium id, ``namespace/Name-vN``
    entry_point: str  # ``module:Class`` (gymnasium imports it when the env is made)
    max_episode_steps: int  # the TimeLimit of the registered env
    solved: SolvedCriterion  # the env's ``is_solved`` rule as data (figures, reports, early stop, deploy)
    paper_particles: int = 10  # SVPG particles when ``svpg.num_particles`` is null (the paper: 10 or 15)
    reward_bound_per_step: float = 1e4  # a trajectory on the wire with a larger |reward| in one step is refused
    space_file: Path | None = None  # its randomization space; None: the packaged config/spaces/<Name>.yaml
    reward_threshold: float | None = None  # gymnasium's ``reward_threshold`` (informative)
    probe_controller: str | None = None  # ``module:callable`` whose failure region is known (adr-probe)
    goal_layout: GoalLayout | None = None  # goal-reaching envs: where the observation holds goal, achieved, effector

    def __post_init__(self) -> None:
        if "/" not in self.env_id or ":" not in self.entry_point:
            raise RandomizationError(f"env record {self.env_id!r}: the id must be 'namespace/Name-vN' and the entry "
                                     f"point 'module:Class', got {self.entry_point!r}")
        if self.max_episode_steps < 1 or self.paper_particles < 1 or not self.reward_bound_per_step > 0:
            raise RandomizationError(f"env record {self.env_id!r}: max_episode_steps, paper_particles and "
                                     "reward_bound_per_step must be positive")


_RECORDS: dict[str, EnvRecord] = {}


def register_env(record: EnvRecord) -> EnvRecord:
    """Make ``record`` known to the stack and its id to gymnasium. Registering the same record again is a no-op;
    another record under a known id is refused."""
    known = _RECORDS.get(record.env_id)
    if known is not None:
        if known != record:
            raise RandomizationError(f"env {record.env_id!r} is registered already, with another record")
        return known
    if record.space_file is not None:
        register_space_file(record.env_id, record.space_file)
    _RECORDS[record.env_id] = record
    if record.env_id not in gymnasium.registry:
        gymnasium.register(id=record.env_id, entry_point=record.entry_point,
                           max_episode_steps=record.max_episode_steps, reward_threshold=record.reward_threshold)
    return record


def env_ids() -> tuple[str, ...]:
    """Every registered env id (the paper's four first)."""
    return tuple(_RECORDS)


def env_record(env_id: str) -> EnvRecord:
    """The record of ``env_id``; an unknown id raises one line naming the known ones and how to add one."""
    try:
        return _RECORDS[env_id]
    except KeyError:
        raise RandomizationError(f"unknown env id {env_id!r}; known: {list(_RECORDS)} (another env: a module that "
                                 "calls adr_core.envs.register_env, named in the config's env_modules)") from None


def entry_modules(ids: Iterable[str]) -> tuple[str, ...]:
    """The modules of the envs ``ids`` that are not adr_core's own: a worker process imports them, and they
    register their records (an env's record is registered by its entry point's module)."""
    modules = {env_record(env_id).entry_point.split(":")[0] for env_id in ids}
    return tuple(sorted(m for m in modules if not m.startswith("adr_core.")))


ALLOW_VARIABLE = "ADR_ENV_MODULES"  # comma-separated modules the user allows files to name (every tool and node)
_ALLOWED: set[str] = set()  # modules named on this process's command line (--env-modules)


def allow_env_modules(modules: Iterable[str]) -> None:
    """Modules the user named on the command line: a file (checkpoint, run config, export) may name them."""
    _ALLOWED.update(str(m) for m in modules)


def allowed_env_modules() -> set[str]:
    """What ``allow_env_modules`` and ``$ADR_ENV_MODULES`` allow."""
    from_environment = {m.strip() for m in os.environ.get(ALLOW_VARIABLE, "").split(",") if m.strip()}
    return _ALLOWED | from_environment


def import_file_env_modules(modules: Iterable[str] | None, env_id: object, source: str) -> None:
    """Env modules named in a file a tool reads (a checkpoint, a run's config.yaml, an export's spec).

    A file never makes a tool import code on its own: nothing is imported when ``env_id`` is registered already (the
    paper's envs, or a module the user imported), and otherwise each module must be one the user allowed
    (``--env-modules`` on the command line, or ``$ADR_ENV_MODULES``); a module that is not is refused in one line
    naming it and how to allow it, before anything of it runs."""
    modules = tuple(str(m) for m in (modules or ()))
    if not modules or (isinstance(env_id, str) and env_id in _RECORDS):
        return
    refused = [m for m in modules if m not in allowed_env_modules()]
    if refused:
        raise RandomizationError(
            f"{source} names env module(s) {refused} to import for env {env_id!r}, which is not registered; a file "
            f"does not make this tool import code: if you trust it, name them yourself with --env-modules "
            f"{' '.join(refused)} (or {ALLOW_VARIABLE}={','.join(refused)})")
    import_env_modules(modules)


def import_env_modules(modules: tuple[str, ...] | list[str]) -> None:
    """Import the modules that register a run's own envs (config key ``env_modules``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise RandomizationError(f"env_modules: cannot import {name!r} ({error}); it must be importable in "
                                     "every process of the run (PYTHONPATH or an installed package)") from None
