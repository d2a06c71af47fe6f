"""The experiment grid of reproduce.py: one run per (env, method, seed), its directory, state and command line.

A run directory ``<out>/runs/<env>_<method>_s<seed>`` is

- done     when it holds ``DONE.json`` (written by the harness once the trainer exited 0 at or past the budget)
           for a budget >= the one asked for;
- resumable when it holds a checkpoint (``checkpoints/latest.pt`` of adr-train, ``checkpoints/latest.json`` of
           the graph) but no valid done marker: it is continued with ``adr-train --resume`` / ``resume:=true``;
- new      otherwise; a directory without a checkpoint (a run killed before its first one) is cleared first.
"""
from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from adr_core.samplers import method_samplers

DONE_FILE = "DONE.json"
LOG_FILE = "train.log"
ATTEMPTS_FILE = "attempts.jsonl"  # one line per trainer process the harness started: state, exit code, wall time
Backend = Literal["adr-train", "graph"]
State = Literal["done", "resume", "new"]


@dataclass(frozen=True)
class RunSpec:
    env_id: str
    method: str  # adr | udr | baseline | oracle
    seed: int

    @property
    def name(self) -> str:
        return f"{self.env_id.split('/')[-1].split('-')[0].lower()}_{self.method}_s{self.seed}"


@dataclass(frozen=True)
class GridOptions:
    budget: int
    backend: Backend = "adr-train"
    torch_threads: int = 1
    overrides: tuple[tuple[str, str], ...] = ()  # (dotted key, YAML value), as adr-train --set takes them
    max_iterations: int | None = None  # adr-train only: stop each run after this many iterations (time slicing)
    instances: int = 1  # graph only
    mode: str = "sync"  # graph only
    config: str | None = None  # packaged config name or YAML path every run starts from (adr-train --config)


def grid(envs: list[str], methods: list[str], seeds: list[int]) -> list[RunSpec]:
    unknown = sorted(set(methods) - set(method_samplers()))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {sorted(method_samplers())}")
    # seed by seed: a grid stopped part-way has every method of the seeds it finished, not all seeds of some methods
    return [RunSpec(env, method, seed) for env in envs for seed in seeds for method in methods]


def run_dir(out: Path, spec: RunSpec) -> Path:
    return out / "runs" / spec.name


def checkpoint_of(directory: Path, backend: Backend) -> Path:
    return directory / "checkpoints" / ("latest.json" if backend == "graph" else "latest.pt")


def done_marker(directory: Path) -> dict | None:
    try:
        return json.loads((directory / DONE_FILE).read_text())
    except (OSError, ValueError):
        return None


def state_of(directory: Path, options: GridOptions) -> State:
    marker = done_marker(directory)
    if marker is not None and int(marker.get("budget", -1)) >= options.budget:
        return "done"
    return "resume" if checkpoint_of(directory, options.backend).exists() else "new"


def clear_partial(directory: Path) -> None:
    """A run killed before its first checkpoint: nothing to continue, start over."""
    if directory.exists():
        shutil.rmtree(directory)


def command(spec: RunSpec, directory: Path, options: GridOptions, state: State) -> list[str]:
    if options.backend == "graph":
        return graph_command(spec, directory, options, state)
    resume = state == "resume"
    argv = ["adr-train", "--out", str(directory)]
    if resume:
        argv.append("--resume")
    else:
        if options.config is not None:
            argv += ["--config", options.config]
        argv += ["--env_id", spec.env_id, "--sampler", method_samplers()[spec.method], "--seed", str(spec.seed)]
        if spec.method == "oracle":
            argv += ["--fixed_range", "hard"]
    argv += ["--total_agent_steps", str(options.budget), "--torch_threads", str(options.torch_threads),
             "--progress", "false"]
    argv += [f"--set={key}={value}" for key, value in options.overrides]  # on resume: checked against the run
    if options.max_iterations is not None:
        argv += ["--max-iterations", str(options.max_iterations)]
    return argv


def graph_command(spec: RunSpec, directory: Path, options: GridOptions, state: State) -> list[str]:
    overrides = {"torch_threads": str(options.torch_threads), "progress": "false", **dict(options.overrides)}
    config = [f"config:={options.config}"] if options.config is not None else []
    mapping = "{" + ", ".join(f"{key}: {value}" for key, value in overrides.items()) + "}"
    return ["adr_launch", "adr", "train_sim.launch.py", f"env:={spec.env_id}", f"method:={spec.method}",
            f"seed:={spec.seed}", f"budget:={options.budget}", f"run_dir:={directory}",
            f"instances:={options.instances}", f"mode:={options.mode}", f"overrides:={mapping}",
            f"resume:={'true' if state == 'resume' else 'false'}", *config]


def progress_of(directory: Path) -> tuple[int, int, float]:
    """(agent steps, iterations, summed iteration seconds) from the run's metrics.csv; zeros when it has none."""
    try:
        with (directory / "metrics.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError:
        return 0, 0, 0.0
    if not rows:
        return 0, 0, 0.0
    return (int(float(rows[-1]["agent_steps"])), len(rows),
            sum(float(r["time_iteration_s"]) for r in rows if r.get("time_iteration_s")))


def record_attempt(directory: Path, state: State, returncode: int, wall_s: float) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ATTEMPTS_FILE).open("a") as handle:
        handle.write(json.dumps({"state": state, "returncode": returncode, "wall_s": wall_s,
                                 "ended": time.strftime("%Y-%m-%d %H:%M:%S")}) + "\n")


def attempts_of(directory: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in (directory / ATTEMPTS_FILE).read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def mark_done(directory: Path, spec: RunSpec, options: GridOptions) -> dict | None:
    """Write DONE.json when the run reached the budget; returns the marker (None: not finished)."""
    steps, iterations, iteration_s = progress_of(directory)
    if steps < options.budget:
        return None
    attempts = attempts_of(directory)
    marker = {"env_id": spec.env_id, "method": spec.method, "seed": spec.seed, "budget": options.budget,
              "agent_steps": steps, "iterations": iterations, "iteration_s": iteration_s,
              "wall_s": sum(a["wall_s"] for a in attempts), "attempts": len(attempts), "backend": options.backend,
              "torch_threads": options.torch_threads, "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    (directory / DONE_FILE).write_text(json.dumps(marker, indent=1))
    return marker
